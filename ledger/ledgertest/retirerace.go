package ledgertest

// Exhaustive enumeration (small scopes) of a retirement pass's record
// fetches and puts (SPEC.md 6.11 step 5: C retiring idle writer B fetches
// the record key of each of B's live txns and puts only records no live
// record already makes) against a concurrent record put of the same
// transaction by another ledger: a call's own record, an owed record
// flushed (step 3), or a give-up record (step 6). Every choice is
// enumerated depth-first (stateless model checking):
//
//   - before each of C's calls to x's record key (and after C's pass): may
//     the other ledger's record put go now (if it waits), with which fault
//     (pass, hold, lose-ack, lose, refuse); may a held put be delivered now;
//   - each of C's calls to x's record key: its fault (fetch: pass, refuse;
//     put: pass, hold, lose-ack, lose, refuse);
//   - at the end: every held put delivered, or never.
//
// Then every ledger reads and writes again (twice), every uncertain call is
// retried to an answer, and the checks run: the value counts each
// transaction once; a retry of x on every ledger, a new ledger and a new
// incarnation of each actor, now and just inside 24 h of x's first landing,
// is recognised; no call hangs.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

const enumTimeout = 20 * time.Second

// enumChoice is one choice point of a schedule.
type enumChoice struct {
	n, v int
	what string
}

// enumDFS replays a prefix of choices and extends it with zeros.
type enumDFS struct {
	mu     sync.Mutex
	prefix []int
	trail  []enumChoice
}

func (d *enumDFS) pick(n int, what string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	i, v := len(d.trail), 0
	if i < len(d.prefix) {
		v = d.prefix[i]
	}
	d.trail = append(d.trail, enumChoice{n, v, what})
	return v
}

func (d *enumDFS) next() bool {
	for i := len(d.trail) - 1; i >= 0; i-- {
		if d.trail[i].v+1 < d.trail[i].n {
			p := make([]int, 0, i+1)
			for _, c := range d.trail[:i] {
				p = append(p, c.v)
			}
			d.prefix, d.trail = append(p, d.trail[i].v+1), nil
			return true
		}
	}
	return false
}

func (d *enumDFS) String() string {
	var b []string
	for _, c := range d.trail {
		b = append(b, fmt.Sprintf("%s=%d", c.what, c.v))
	}
	return strings.Join(b, " ")
}

var (
	enumPutFaults   = []faulty.Fault{faulty.Pass, faulty.Hold, faulty.LoseAck, faulty.Lose, faulty.Refuse}
	enumFetchFaults = []faulty.Fault{faulty.Pass, faulty.Refuse}
)

// enumPath is one ledger's path to the shared store: a faulty wrapper whose
// policy and hook the world sets, plus, for the racing ledger, a gate on its
// first put of x's record while armed.
type enumPath struct {
	*faulty.Siblings
	w    *enumWorld
	name string

	gateOn  bool
	gated   bool
	arrived chan struct{}
	release chan struct{}
	fault   faulty.Fault // the gated put's fault
}

func (p *enumPath) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	p.w.beforeCall(p, faulty.MethodFetch, key)
	sibs, tok, err := p.Siblings.Fetch(ctx, key)
	if os.Getenv("COUNTERKIT_ENUM_TRACE") == "2" {
		p.w.logf("%s: fetch %s: %d siblings %v", p.name, enumKeyName(p.w, key), len(sibs), err)
	}
	return sibs, tok, err
}

func (p *enumPath) Put(ctx context.Context, key string, actor crdt.ActorID, v []byte, token store.Token) error {
	p.w.beforeCall(p, faulty.MethodPut, key)
	p.w.mu.Lock()
	gate := p.gateOn && !p.gated && key == p.w.xKey
	if gate {
		p.gated = true
	}
	p.w.mu.Unlock()
	if gate {
		p.w.logf("%s: record put of x waits", p.name)
		close(p.arrived)
		<-p.release
	}
	err := p.Siblings.Put(ctx, key, actor, v, token)
	if key == p.w.xKey {
		var r ledger.Record
		_ = r.UnmarshalBinary(v)
		p.w.logf("%s: put x's record naming %s (token %v): %v", p.name, r.Writer, token != nil, err)
	}
	return err
}

// enumWorld is one schedule's ledgers over one store.
type enumWorld struct {
	t     *testing.T
	dfs   *enumDFS
	base  store.Siblings
	key   string
	xKey  string
	clock *enumClock
	t0    time.Time
	trace []string

	mu      sync.Mutex
	armed   bool         // C's calls to x's record key are choice points
	c       *enumPath    // the retiring ledger's path
	r       *enumPath    // the racing ledger's path (gated)
	rDone   chan enumRes // the racing call's answer
	rHeld   bool         // the racing put is held, not yet delivered
	cCalls  int
	pending map[crdt.TxnID]int64 // txns whose answer is uncertain
	amounts map[crdt.TxnID]int64 // every txn called, its amount
	want    int64                // the sum of the applied ones
	hung    []string
}

type enumRes struct {
	r   ledger.Result
	err error
}

func (w *enumWorld) logf(format string, args ...any) {
	w.mu.Lock()
	w.trace = append(w.trace, fmt.Sprintf(format, args...))
	w.mu.Unlock()
}

func (w *enumWorld) path(name string) *enumPath {
	p := &enumPath{w: w, name: name, arrived: make(chan struct{}), release: make(chan struct{})}
	p.Siblings = faulty.NewSiblings(w.base, faulty.Options{Policy: func(c faulty.Call) faulty.Fault { return w.policy(p, c) }})
	return p
}

func (w *enumWorld) policy(p *enumPath, c faulty.Call) faulty.Fault {
	w.mu.Lock()
	armed, isC := w.armed, p == w.c
	w.mu.Unlock()
	if p == w.r && c.Key == w.xKey && p.gated && c.Method == faulty.MethodPut {
		w.mu.Lock()
		f := p.fault
		p.fault = faulty.Pass // later puts pass
		w.mu.Unlock()
		return f
	}
	if !armed || !isC || c.Key != w.xKey {
		return faulty.Pass
	}
	if c.Method == faulty.MethodFetch {
		f := enumFetchFaults[w.dfs.pick(len(enumFetchFaults), "cFetchFault")]
		w.logf("c: fetch x's record: %v", f)
		return f
	}
	f := enumPutFaults[w.dfs.pick(len(enumPutFaults), "cPutFault")]
	w.logf("c: put x's record: %v", f)
	return f
}

// beforeCall runs the choice points before each of C's calls to x's
// record key while armed.
func (w *enumWorld) beforeCall(p *enumPath, method, key string) {
	w.mu.Lock()
	on := w.armed && p == w.c && key == w.xKey
	w.mu.Unlock()
	if !on {
		return
	}
	w.cCalls++
	w.events(false, fmt.Sprintf("before c's %s #%d", method, w.cCalls))
}

// events lets the racing put go, and delivers held puts, as the schedule
// chooses; at the end (last) it must.
func (w *enumWorld) events(last bool, where string) {
	r := w.r
	if r != nil && r.gated && !w.released() {
		go1 := last || w.dfs.pick(2, "rGo") == 1
		if go1 {
			f := enumPutFaults[w.dfs.pick(len(enumPutFaults), "rFault")]
			w.logf("%s: %s's record put goes, %v", where, r.name, f)
			w.mu.Lock()
			r.fault = f
			w.mu.Unlock()
			close(r.release)
			w.awaitR()
			w.rHeld = f == faulty.Hold
		}
	}
	if w.rHeld {
		if v := w.dfs.pick(2, "rDeliver"); v == 1 {
			w.logf("%s: %s's held record put lands", where, r.name)
			_ = r.DeliverAll()
			w.rHeld = false
		} else if last {
			w.logf("%s: %s's held record put never lands", where, r.name)
			r.DropHeld()
			w.rHeld = false
		}
	}
	if n := w.c.Held(); n > 0 {
		if v := w.dfs.pick(2, "cDeliver"); v == 1 {
			w.logf("%s: c's held put lands", where)
			_ = w.c.DeliverAll()
		} else if last {
			w.logf("%s: c's held put never lands", where)
			w.c.DropHeld()
		}
	}
}

func (w *enumWorld) released() bool {
	select {
	case <-w.r.release:
		return true
	default:
		return false
	}
}

// awaitR waits for the racing call's answer.
func (w *enumWorld) awaitR() {
	select {
	case res := <-w.rDone:
		w.rDone <- res // kept for the scenario
	case <-time.After(enumTimeout):
		w.hung = append(w.hung, "the racing call")
	}
}

func (w *enumWorld) ledger(p store.Siblings, name crdt.ActorID, retire time.Duration) *ledger.Ledger {
	l, err := ledger.New(p, w.key, ledger.Options{Actor: name, RetireAfter: retire, RetryCount: 1,
		Backoff: ledger.Backoff{Initial: -1}, MaxGroup: 1, Clock: w.clock.Now,
		Counter: tpncounter.Options{HistoryLength: 1, FoldedLength: 1}})
	if err != nil {
		w.t.Fatal(err)
	}
	return l
}

// call makes one Update, notes its answer: applied counts; an error leaves
// the txn uncertain, retried at the end.
func (w *enumWorld) call(l *ledger.Ledger, x crdt.TxnID, amount int64) enumRes {
	ctx, cancel := context.WithTimeout(context.Background(), enumTimeout)
	defer cancel()
	r, err := l.Update(ctx, x, amount)
	w.note(l, x, amount, r, err)
	return enumRes{r, err}
}

func (w *enumWorld) note(l *ledger.Ledger, x crdt.TxnID, amount int64, r ledger.Result, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.logf0("%s: Update(%s, %d): %v %v", l.Actor(), x, amount, r.Outcome, err)
	w.amounts[x] = amount
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		w.hung = append(w.hung, fmt.Sprintf("%s: Update(%s)", l.Actor(), x))
		w.pending[x] = amount
	case err != nil:
		w.pending[x] = amount
	case r.Outcome == tpncounter.Applied:
		if _, ok := w.pending[x]; ok {
			delete(w.pending, x)
		}
		w.want += amount
	default:
		if _, ok := w.pending[x]; ok {
			delete(w.pending, x) // an uncertain call had landed
			w.want += amount
		}
	}
}

func (w *enumWorld) logf0(format string, args ...any) {
	w.trace = append(w.trace, fmt.Sprintf(format, args...))
}

// goCall starts an Update on its own goroutine and returns once its gated
// record put waits, or it returned.
func (w *enumWorld) goCall(l *ledger.Ledger, p *enumPath, x crdt.TxnID, amount int64) {
	w.mu.Lock()
	w.r, p.gateOn = p, true
	w.rDone = make(chan enumRes, 1)
	w.mu.Unlock()
	done := w.rDone
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), enumTimeout)
		defer cancel()
		r, err := l.Update(ctx, x, amount)
		w.note(l, x, amount, r, err)
		done <- enumRes{r, err}
	}()
	select {
	case <-p.arrived:
	case res := <-done:
		done <- res
		w.logf("%s's call did not put x's record", p.name)
	case <-time.After(enumTimeout):
		w.hung = append(w.hung, "racing call before its record put")
	}
}

func (w *enumWorld) stored() *tpncounter.Counter {
	sibs, _, err := w.base.Fetch(context.Background(), w.key)
	if err != nil {
		w.t.Fatal(err)
	}
	c, _ := tpncounter.New(tpncounter.Options{})
	for _, b := range sibs {
		one, _ := tpncounter.New(tpncounter.Options{})
		if err := one.UnmarshalBinary(b); err != nil {
			w.t.Fatal(err)
		}
		if err := c.Merge(one); err != nil {
			w.t.Fatal(err)
		}
	}
	return c
}

// enumScenario builds the prefix of a schedule: ledgers, the landed x, the
// racing call waiting at its record put, then the clock past RetireAfter;
// it returns the ledgers and the retiring one (c).
type enumScenario struct {
	name string
	run  func(w *enumWorld) (all []*ledger.Ledger, c *ledger.Ledger, actors []crdt.ActorID)
}

// bAndC sets up the two-writer scenarios: b, which never retires others,
// and c, the writer whose passes retire b (RetireAfter one hour), each
// having written once; c's path is the one the enumeration faults.
func (w *enumWorld) bAndC() (pb *enumPath, b, c *ledger.Ledger) {
	pb, pc := w.path("b"), w.path("c")
	w.c = pc
	b, c = w.ledger(pb, "b", -1), w.ledger(pc, "c", time.Hour)
	w.call(b, "b0", 1)
	w.call(c, "c0", 1)
	return pb, b, c
}

var enumScenarios = []enumScenario{
	{
		// b's call of x lands; its record put (the call's own) races c's
		// pass retiring b, an hour later.
		name: "own-record/2-writers",
		run: func(w *enumWorld) ([]*ledger.Ledger, *ledger.Ledger, []crdt.ActorID) {
			pb, b, c := w.bAndC()
			w.t0 = w.clock.Now()
			w.goCall(b, pb, "x", 100)
			w.clock.Add(10 * time.Minute)
			w.call(c, "c1", 1) // c's first pass sees b
			w.clock.Add(61 * time.Minute)
			return []*ledger.Ledger{b, c}, c, []crdt.ActorID{"b", "c"}
		},
	},
	{
		// b's record of x is refused (owed); an hour later b writes again:
		// its flush of the owed record races c's pass retiring b.
		name: "owed-flush/2-writers",
		run: func(w *enumWorld) ([]*ledger.Ledger, *ledger.Ledger, []crdt.ActorID) {
			pb, b, c := w.bAndC()
			pb.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.Refuse, faulty.Refuse, faulty.Refuse, faulty.Refuse), faulty.MethodPut), func(k string) bool { return k == w.xKey }))
			w.t0 = w.clock.Now()
			w.call(b, "x", 100)
			pb.SetPolicy(func(c faulty.Call) faulty.Fault { return w.policy(pb, c) })
			w.clock.Add(10 * time.Minute)
			w.call(c, "c1", 1)
			w.clock.Add(61 * time.Minute)
			w.goCall(b, pb, "y", 7)
			return []*ledger.Ledger{b, c}, c, []crdt.ActorID{"b", "c"}
		},
	},
	{
		// a's call of x is held in flight while b applies and records x;
		// a's put lands, the copies meet. An hour later the writer whose copy
		// does not count gives it up (its record names the owner) while c's
		// pass retires idle writers (the owner among them).
		name: "give-up/3-writers",
		run: func(w *enumWorld) ([]*ledger.Ledger, *ledger.Ledger, []crdt.ActorID) {
			pa, pb, pc := w.path("a"), w.path("b"), w.path("c")
			w.c = pc
			a, b, c := w.ledger(pa, "a", -1), w.ledger(pb, "b", -1), w.ledger(pc, "c", time.Hour)
			w.call(a, "a0", 1)
			w.call(b, "b0", 1)
			w.call(c, "c0", 1)
			pa.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.Hold, faulty.Hold), faulty.MethodPut), func(k string) bool { return k == w.key }))
			w.t0 = w.clock.Now()
			w.call(a, "x", 100) // held: ambiguous
			w.call(b, "x", 100) // applies, records x naming b
			_ = pa.DeliverAll() // a's copy lands
			pa.SetPolicy(func(c faulty.Call) faulty.Fault { return w.policy(pa, c) })
			w.call(a, "a1", 1) // a learns its copy landed
			w.clock.Add(10 * time.Minute)
			w.call(c, "c1", 1) // c's first pass sees a and b
			owner, _ := w.stored().Owner("x")
			w.logf("x's owner: %+v", owner)
			w.clock.Add(61 * time.Minute)
			giver, gp := b, pb
			if owner.Actor == b.Writer() {
				giver, gp = a, pa
			}
			w.goCall(giver, gp, crdt.TxnID("g-"+string(giver.Actor())), 3)
			return []*ledger.Ledger{a, b, c}, c, []crdt.ActorID{"a", "b", "c"}
		},
	},
}

// runEnumSchedule runs one schedule and returns its failures.
func runEnumSchedule(t *testing.T, base store.Siblings, key string, sc enumScenario, dfs *enumDFS) []string {
	w := &enumWorld{t: t, dfs: dfs, base: base, key: key, xKey: ledger.RecordKey(key, "x"),
		clock: &enumClock{}, pending: map[crdt.TxnID]int64{}, amounts: map[crdt.TxnID]int64{}}
	w.clock.Set(time.Unix(1_800_000_000, 0))
	all, c, actors := sc.run(w)
	w.mu.Lock()
	w.armed = true
	w.mu.Unlock()
	w.call(c, "c2", 1) // the retirement pass
	w.cCalls++
	w.events(true, "after c's pass")
	w.mu.Lock()
	w.armed = false
	w.mu.Unlock()
	if w.r != nil {
		select {
		case res := <-w.rDone:
			_ = res
		case <-time.After(enumTimeout):
			w.hung = append(w.hung, "the racing call at the end")
		}
	}
	live := slices.Collect(func(yield func(crdt.ActorID) bool) {
		for a := range w.stored().LiveActors() {
			if !yield(a) {
				return
			}
		}
	})
	slices.Sort(live)
	w.logf("after the pass: live %v, value %d", live, w.stored().Value())

	// Every ledger reads and writes again, twice; then every uncertain
	// call is retried to an answer.
	for round := range 2 {
		for i, l := range all {
			for try := range 4 {
				x := crdt.TxnID(fmt.Sprintf("s%d.%d", round, i))
				if r := w.call(l, x, 1); r.err == nil {
					break
				} else if try == 3 {
					w.logf("settle %s: %v", x, r.err)
				}
			}
		}
	}
	for _, x := range slices.Sorted(func(yield func(crdt.TxnID) bool) {
		for x := range w.pending {
			if !yield(x) {
				return
			}
		}
	}) {
		for try := range 4 {
			if r := w.call(all[len(all)-1], x, w.amounts[x]); r.err == nil {
				break
			} else if try == 3 {
				w.logf("resolve %s: %v", x, r.err)
			}
		}
	}
	var fails []string
	if len(w.pending) > 0 {
		fails = append(fails, fmt.Sprintf("unresolved calls: %v", w.pending))
	}
	if got := w.stored().Value(); got != w.want {
		fails = append(fails, fmt.Sprintf("(a) value %d, want %d (each transaction once)", got, w.want))
	}
	// (b) retries of x: now, and just inside 24 h of its first landing.
	retry := func(when string) {
		rs := slices.Clone(all)
		for _, a := range append([]crdt.ActorID{"z"}, actors...) {
			rs = append(rs, w.ledger(w.base, a, -1)) // a new ledger, a new incarnation
		}
		for _, l := range rs {
			ctx, cancel := context.WithTimeout(context.Background(), enumTimeout)
			r, err := l.Update(ctx, "x", 100)
			cancel()
			switch {
			case errors.Is(err, context.DeadlineExceeded):
				fails = append(fails, fmt.Sprintf("(c) %s: retry of x on %s hangs", when, l.Actor()))
			case err != nil:
				fails = append(fails, fmt.Sprintf("(b) %s: retry of x on %s: %v", when, l.Actor(), err))
			case r.Outcome != tpncounter.Duplicate && r.Outcome != tpncounter.DuplicateFolded:
				fails = append(fails, fmt.Sprintf("(b) %s: retry of x on %s answered %v", when, l.Actor(), r.Outcome))
				if r.Outcome == tpncounter.Applied {
					w.want += 100
				}
			}
		}
	}
	retry("now")
	w.clock.Set(w.t0.Add(24*time.Hour - time.Minute))
	retry("at 23h59m")
	if got := w.stored().Value(); got != w.want {
		fails = append(fails, fmt.Sprintf("(a) after the retries: value %d, want %d", got, w.want))
	}
	for _, h := range w.hung {
		fails = append(fails, "(c) hangs: "+h)
	}
	if len(fails) > 0 || os.Getenv("COUNTERKIT_ENUM_TRACE") != "" {
		fails = append(fails, "trace:\n    "+strings.Join(w.trace, "\n    "))
	}
	return fails
}

// testRetirementRecordRace, in Run, enumerates the two-writer scenarios:
// 358 schedules, about a minute on a server; with -short, the first: 179.
func testRetirementRecordRace(t *testing.T, s store.Siblings, key string) {
	n := 2
	if testing.Short() {
		n = 1
	}
	enumerate(t, s, key, enumScenarios[:n], t.Errorf)
}

// RetirementRecordRace enumerates every scenario, the three-writer one
// too: 2,585 schedules, each on a key of s of its own prefixed with key,
// seconds on an in-memory store. COUNTERKIT_ENUM_SCENARIO names the one
// scenario to run; COUNTERKIT_ENUM_PREFIX then runs one schedule, the one
// a failure names.
func RetirementRecordRace(t *testing.T, s store.Siblings, key string) {
	enumerate(t, s, key, enumScenarios, t.Errorf)
}

// CountRetirementRecordRace enumerates as RetirementRecordRace does, and
// returns how many schedules ran and how many failed instead of failing
// t: to show that the enumeration catches a broken ledger.
func CountRetirementRecordRace(t *testing.T, s store.Siblings, key string) (schedules, failing int) {
	return enumerate(t, s, key, enumScenarios, t.Logf)
}

// enumerate runs every schedule of the scenarios, reporting the first
// three failing schedules of each to fail.
func enumerate(t *testing.T, s store.Siblings, key string, scenarios []enumScenario, fail func(string, ...any)) (total, failed int) {
	for _, sc := range scenarios {
		if name := os.Getenv("COUNTERKIT_ENUM_SCENARIO"); name != "" && name != sc.name {
			continue
		}
		dfs := &enumDFS{}
		if p := os.Getenv("COUNTERKIT_ENUM_PREFIX"); p != "" {
			for _, f := range strings.Fields(p) {
				var v int
				fmt.Sscan(f, &v)
				dfs.prefix = append(dfs.prefix, v)
			}
		}
		n, nf := 0, 0
		for {
			fails := runEnumSchedule(t, s, fmt.Sprintf("%s-%s-%d", key, sc.name[:3], n), sc, dfs)
			n++
			if len(fails) > 0 {
				nf++
				if nf <= 3 {
					var vs []string
					for _, c := range dfs.trail {
						vs = append(vs, fmt.Sprint(c.v))
					}
					fail("%s: schedule %d [%s] (COUNTERKIT_ENUM_PREFIX=%q):\n  %s", sc.name, n, dfs, strings.Join(vs, " "), strings.Join(fails, "\n  "))
				}
			}
			if os.Getenv("COUNTERKIT_ENUM_PREFIX") != "" || !dfs.next() {
				break
			}
		}
		t.Logf("%s: %d schedules enumerated, %d failing", sc.name, n, nf)
		total, failed = total+n, failed+nf
	}
	t.Logf("total: %d schedules enumerated, %d failing", total, failed)
	return total, failed
}

// enumClock is the schedule's clock, which it moves.
type enumClock struct{ ns atomic.Int64 }

func (c *enumClock) Now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *enumClock) Add(d time.Duration) { c.ns.Add(int64(d)) }
func (c *enumClock) Set(t time.Time)     { c.ns.Store(t.UnixNano()) }

// enumKeyName names key in a trace.
func enumKeyName(w *enumWorld, key string) string {
	if key == w.key {
		return "account"
	}
	return "record"
}

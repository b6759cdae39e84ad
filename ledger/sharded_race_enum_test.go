//go:build go1.25

package ledger_test

// A check of SPEC.md 6.12 (the sharded ledger) at its boundaries: two
// Sharded values of different n race first uses of one account on one
// memory store, and every interleaving of their store calls (bounded by
// preemptions), each call possibly refused, lost, landed but ambiguous,
// held and delivered later, or answered from a stale read, with the clock
// stepped across the one-second trust, is run; then the store recovers,
// everything held lands, and the promise is checked.
//
//	go test -count=1 -run 'TestSharded' ./ledger -v

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/schedtest"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

const rsAccount = "acct"

// rsLastLog is the trace of the last schedule run.
var rsLastLog []string

// rsCall is a parked store call (or the start of an operation: gate).
type rsCall struct {
	actor       int
	method, key string
	gate        bool
	grant       chan faulty.Fault
}

func (c *rsCall) id() string {
	return fmt.Sprintf("%d %s %s", c.actor, c.method, c.key)
}

type rsWorld struct {
	clk   *fakeClock
	inner *memory.Siblings
	fs    *faulty.Siblings

	mu     sync.Mutex
	cur    faulty.Fault
	parkOn bool
	parked []*rsCall
	log    []string
	wrote  map[string]map[crdt.ActorID]bool // key: the actors that put a counter state there
	// seen: lane, txn → the keys its record fetches showed records of;
	// after: txn → record Puts made after their lane saw a record of
	// another key.
	seen  map[int]map[crdt.TxnID]map[string]bool
	after map[crdt.TxnID][]string
	// retired: actor → entries its writes retired; sDoubt: S restarted
	// with something in doubt (a write or record unacknowledged).
	retired map[crdt.ActorID]int
	sDoubt  bool
}

func newRSWorld() *rsWorld {
	w := &rsWorld{clk: newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), inner: memory.NewSiblings(), wrote: map[string]map[crdt.ActorID]bool{},
		seen: map[int]map[crdt.TxnID]map[string]bool{}, after: map[crdt.TxnID][]string{}, retired: map[crdt.ActorID]int{}}
	w.fs = faulty.NewSiblings(w.inner, faulty.Options{Policy: w.policy, RecordWrites: true})
	return w
}

func (w *rsWorld) policy(faulty.Call) faulty.Fault {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cur
}

func (w *rsWorld) logf(format string, args ...any) {
	w.mu.Lock()
	w.log = append(w.log, fmt.Sprintf("[+%v] ", w.clk.Now().Sub(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)))+fmt.Sprintf(format, args...))
	w.mu.Unlock()
}

// park waits for the controller's grant of a call, when it schedules.
func (w *rsWorld) park(actor int, method, key string, gate bool) faulty.Fault {
	w.mu.Lock()
	if !w.parkOn {
		w.mu.Unlock()
		return faulty.Pass
	}
	c := &rsCall{actor: actor, method: method, key: key, gate: gate, grant: make(chan faulty.Fault)}
	w.parked = append(w.parked, c)
	w.mu.Unlock()
	return <-c.grant
}

func rsKeyName(key string) string {
	if ledger.IsRecordKey(key) {
		return "rec:" + key[len(key)-6:]
	}
	return key
}

type rsLane struct {
	w     *rsWorld
	actor int
}

func (l rsLane) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	f := l.w.park(l.actor, faulty.MethodFetch, key, false)
	l.w.mu.Lock()
	l.w.cur = f
	l.w.mu.Unlock()
	vs, tok, err := l.w.fs.Fetch(ctx, key)
	l.w.mu.Lock()
	l.w.cur = faulty.Pass
	if ledger.IsRecordKey(key) {
		for _, v := range vs {
			var r ledger.Record
			if r.UnmarshalBinary(v) == nil {
				if l.w.seen[l.actor] == nil {
					l.w.seen[l.actor] = map[crdt.TxnID]map[string]bool{}
				}
				if l.w.seen[l.actor][r.Txn] == nil {
					l.w.seen[l.actor][r.Txn] = map[string]bool{}
				}
				l.w.seen[l.actor][r.Txn][r.Key] = true
			}
		}
	}
	l.w.mu.Unlock()
	l.w.logf("%c fetch %s (%v): %d siblings %v", rune("SLFR"[l.actor]), rsKeyName(key), f, len(vs), err)
	return vs, tok, err
}

func (l rsLane) Put(ctx context.Context, key string, actor crdt.ActorID, v []byte, token store.Token) error {
	f := l.w.park(l.actor, faulty.MethodPut, key, false)
	already := false // a record of this writer and key is stored already
	if ledger.IsRecordKey(key) {
		var r ledger.Record
		_ = r.UnmarshalBinary(v)
		vs, _, _ := l.w.inner.Fetch(ctx, key)
		for _, b := range vs {
			var o ledger.Record
			if o.UnmarshalBinary(b) == nil && o.Writer == r.Writer && o.Key == r.Key {
				already = true
			}
		}
	}
	l.w.mu.Lock()
	l.w.cur = f
	l.w.mu.Unlock()
	err := l.w.fs.Put(ctx, key, actor, v, token)
	l.w.mu.Lock()
	l.w.cur = faulty.Pass
	l.w.mu.Unlock()
	what := ""
	if ledger.IsRecordKey(key) {
		var r ledger.Record
		_ = r.UnmarshalBinary(v)
		what = fmt.Sprintf("record %s %d by %s on %s", r.Txn, r.Amount, r.Writer, r.Key)
		l.w.mu.Lock()
		for k := range l.w.seen[l.actor][r.Txn] {
			if k != r.Key && err == nil && !already {
				l.w.after[r.Txn] = append(l.w.after[r.Txn], fmt.Sprintf("%s on %s after reading one on %s", r.Writer, r.Key, k))
			}
		}
		l.w.mu.Unlock()
	} else if strings.HasPrefix(string(v), "counterkit.ledger.sharded") {
		what = string(v)
	} else if ledger.IsSeenKey(key) {
		what = "sightings"
	} else {
		l.w.mu.Lock()
		if l.w.wrote[key] == nil {
			l.w.wrote[key] = map[crdt.ActorID]bool{}
		}
		l.w.wrote[key][actor] = true
		l.w.mu.Unlock()
		st := decodeState(nil, v)
		what = fmt.Sprintf("value %d", st.Value())
	}
	l.w.logf("%c put %s as %s (%v, token %v): %s: %v", rune("SLFR"[l.actor]), rsKeyName(key), actor, f, token != nil, what, err)
	return err
}

// rsBudget bounds a schedule: faults injected and preemptions.
type rsBudget struct {
	faults, preempt int
	fetchFaults     []faulty.Fault
	putFaults       []faulty.Fault
}

// rsOp is one operation of an actor, run when the schedule starts it.
type rsOp struct {
	name string
	run  func(ctx context.Context)
}

// rsEvent is a controller step (a clock step), run once when chosen.
type rsEvent struct {
	name string
	run  func()
}

// run runs the actors' operations under the schedule, in a synctest
// bubble: every store call parks, and the controller grants one at a
// time with a fault, delivers a held write, or runs the next event.
func (w *rsWorld) run(sc *schedtest.Sched, b rsBudget, actors [][]rsOp, events []rsEvent) {
	w.mu.Lock()
	w.parkOn = true
	w.mu.Unlock()
	var wg sync.WaitGroup
	for a, ops := range actors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, op := range ops {
				w.park(a, "op", op.name, true)
				w.logf("%c starts %s", rune("SLFR"[a]), op.name)
				op.run(context.Background())
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	last, faults, preempts, ev := -1, 0, 0, 0
	type opt struct {
		call  *rsCall
		fault faulty.Fault
		held  int
		event bool
	}
	for idle := time.Duration(0); ; {
		synctest.Wait()
		w.mu.Lock()
		parked := slices.Clone(w.parked)
		w.mu.Unlock()
		if len(parked) == 0 {
			select {
			case <-done:
				w.mu.Lock()
				w.parkOn = false
				w.mu.Unlock()
				return
			case <-time.After(time.Second):
				// A call blocked on anything but a store call or the
				// clock would keep fake time going for good.
				if idle += time.Second; idle == maxTurnsIdle {
					panic(fmt.Sprintf("rsWorld.run: no store call and no return in %v of fake time: a call is blocked for good", idle))
				}
				continue
			}
		}
		idle = 0
		slices.SortStableFunc(parked, func(x, y *rsCall) int { return strings.Compare(x.id(), y.id()) })
		lastParked := slices.ContainsFunc(parked, func(c *rsCall) bool { return c.actor == last })
		var opts []opt
		for _, c := range parked {
			if lastParked && c.actor != last && preempts >= b.preempt {
				continue
			}
			opts = append(opts, opt{call: c, fault: faulty.Pass, held: -1})
			if c.gate || faults >= b.faults {
				continue
			}
			fl := b.putFaults
			if c.method == faulty.MethodFetch {
				fl = b.fetchFaults
			}
			for _, f := range fl {
				opts = append(opts, opt{call: c, fault: f, held: -1})
			}
		}
		for h := range w.fs.Held() {
			opts = append(opts, opt{held: h})
		}
		if ev < len(events) {
			opts = append(opts, opt{held: -1, event: true})
		}
		o := opts[sc.Pick(len(opts))]
		switch {
		case o.event:
			w.logf("event %s", events[ev].name)
			events[ev].run()
			ev++
		case o.held >= 0:
			w.logf("deliver held %d", o.held)
			if err := w.fs.Deliver(o.held); err != nil {
				w.logf("deliver: %v", err)
			}
		default:
			if o.fault != faulty.Pass {
				faults++
			}
			if lastParked && o.call.actor != last {
				preempts++
			}
			last = o.call.actor
			w.mu.Lock()
			w.parked = slices.DeleteFunc(w.parked, func(c *rsCall) bool { return c == o.call })
			w.mu.Unlock()
			o.call.grant <- o.fault
		}
	}
}

// rsAnswer is one call's answer.
type rsAnswer struct {
	who     string
	txn     crdt.TxnID
	outcome tpncounter.Outcome
	err     error
}

// rsScenario is a race of two layouts: S (n = small) and L (n = large),
// each running its credits; ids[k] is credited with 1<<(4k).
type rsScenario struct {
	name         string
	small, large int
	sOps, lOps   []int // indices into ids
	ids          []crdt.TxnID
	ticks        []time.Duration
	budget       rsBudget
	// restartAfter > 0: S restarts (a new process of n=small) after its
	// first restartAfter operations.
	restartAfter int
}

func (sc rsScenario) amount(x crdt.TxnID) int64 {
	return int64(1) << (4 * slices.Index(sc.ids, x))
}

func rsOpts(w *rsWorld, actor crdt.ActorID) ledger.Options {
	return ledger.Options{Actor: actor, Clock: w.clk.Now, Backoff: ledger.Backoff{Initial: -1}, RetryCount: 1,
		Observer: observe.Func(func(_ context.Context, e observe.Event) {
			if e.Retired > 0 {
				w.mu.Lock()
				w.retired[actor] += e.Retired
				w.mu.Unlock()
				w.logf("(%s retired %d entries)", actor, e.Retired)
			}
		})}
}

func rsTag(n int) string { return "aaaaaa" + string(rune('a'+n)) }

// counts decodes a value into each transaction's number of copies.
func (sc rsScenario) counts(v int64) map[crdt.TxnID]int64 {
	out := map[crdt.TxnID]int64{}
	for k, x := range sc.ids {
		out[x] = (v >> (4 * k)) & 15
	}
	return out
}

// markers returns the n the account key's siblings name, in the store.
func rsMarkers(inner *memory.Siblings) []int {
	vals, _, _ := inner.Fetch(context.Background(), rsAccount)
	var ns []int
	for _, v := range vals {
		n, err := strconv.Atoi(strings.TrimPrefix(string(v), "counterkit.ledger.sharded/1 shards="))
		if err == nil && !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	return ns
}

// storedValue sums the sub-keys 0..m-1 in the inner store, each merged.
func rsStored(inner *memory.Siblings, m int) (int64, error) {
	var sum int64
	for i := range m {
		sibs, _, err := inner.Fetch(context.Background(), fmt.Sprintf("%s/%d", rsAccount, i))
		if err != nil {
			return 0, err
		}
		sum += decodeState(nil, sibs...).Value()
	}
	return sum, nil
}

// records returns the live records of x in the inner store.
func rsRecords(inner *memory.Siblings, x crdt.TxnID) []ledger.Record {
	vals, _, _ := inner.Fetch(context.Background(), ledger.RecordKey(rsAccount, x))
	var out []ledger.Record
	for _, v := range vals {
		var r ledger.Record
		if r.UnmarshalBinary(v) == nil {
			out = append(out, r)
		}
	}
	return out
}

// once runs the scenario under one schedule and returns what broke ("" if
// nothing), and whether a double count inside the Limit was seen.
func (sc rsScenario) once(s *schedtest.Sched) (fail string, limit string) {
	w := newRSWorld()
	ctx := context.Background()
	mk := func(n int, actor crdt.ActorID, lane int) *ledger.Sharded {
		var st store.Siblings = rsLane{w: w, actor: lane}
		sh, err := ledger.NewSharded(st, rsAccount, n, rsOpts(w, actor))
		if err != nil {
			panic(err)
		}
		ledger.FixShardWriters(sh, rsTag(n))
		return sh
	}
	restarts := 0
	S, L := mk(sc.small, "s", 0), mk(sc.large, "l", 1)
	var amu sync.Mutex
	var answers []rsAnswer
	credit := func(who string, sh *ledger.Sharded, x crdt.TxnID) rsAnswer {
		r, err := sh.Credit(ctx, x, sc.amount(x))
		a := rsAnswer{who: who, txn: x, outcome: r.Outcome, err: err}
		w.logf("%s credit %s -> %v err=%v", who, x, r.Outcome, err)
		amu.Lock()
		answers = append(answers, a)
		amu.Unlock()
		return a
	}
	var sOps, lOps []rsOp
	for j, k := range sc.sOps {
		if j == sc.restartAfter && j > 0 {
			sOps = append(sOps, rsOp{name: "restart S", run: func(context.Context) {
				amu.Lock()
				doubt := S.Pending() || slices.ContainsFunc(answers, func(a rsAnswer) bool { return a.who == "S" && errors.Is(a.err, crdt.ErrAmbiguousWrite) })
				amu.Unlock()
				w.mu.Lock()
				w.sDoubt = w.sDoubt || doubt
				w.mu.Unlock()
				restarts++
				sh, err := ledger.NewSharded(rsLane{w: w, actor: 0}, rsAccount, sc.small, rsOpts(w, "s"))
				if err != nil {
					panic(err)
				}
				ledger.FixShardWriters(sh, "aaaaa"+string(rune('a'+restarts))+string(rune('a'+sc.small)))
				S = sh
				w.logf("S restarted (doubt %v)", doubt)
			}})
		}
		x := sc.ids[k]
		sOps = append(sOps, rsOp{name: "credit " + string(x), run: func(context.Context) { credit("S", S, x) }})
	}
	for _, k := range sc.lOps {
		x := sc.ids[k]
		lOps = append(lOps, rsOp{name: "credit " + string(x), run: func(context.Context) { credit("L", L, x) }})
	}
	var events []rsEvent
	for _, d := range sc.ticks {
		events = append(events, rsEvent{name: "tick " + d.String(), run: func() { w.clk.Add(d) }})
	}
	defer func() {
		rsLastLog = w.log
		for _, x := range sc.ids {
			for _, r := range rsRecords(w.inner, x) {
				if !w.wrote[r.Key][r.Writer] {
					bogus := fmt.Sprintf("F1: record of %s names %s on %s, which never wrote there", x, r.Writer, r.Key)
					if fail != "" {
						bogus += "; and: " + strings.SplitN(fail, "\n", 2)[0]
					}
					fail = bogus
				}
			}
		}
		if fail != "" {
			fail = fmt.Sprintf("%s\n  choices %v\n  trace:\n    %s", fail, s.Choices, strings.Join(w.log, "\n    "))
		}
	}()
	w.run(s, sc.budget, [][]rsOp{sOps, lOps}, events)
	for _, a := range answers {
		if a.err != nil && !errors.Is(a.err, crdt.ErrAmbiguousWrite) && !errors.Is(a.err, crdt.ErrUnavailable) && !errors.Is(a.err, crdt.ErrInvalidConfig) {
			return fmt.Sprintf("%s credit %s: unexpected error %v", a.who, a.txn, a.err), ""
		}
		if errors.Is(a.err, crdt.ErrInvalidConfig) && errors.Is(a.err, crdt.ErrAmbiguousWrite) {
			return fmt.Sprintf("%s credit %s: invalid_config and ambiguous_write: %v", a.who, a.txn, a.err), ""
		}
	}
	// The store recovers: everything held lands, the trust expires, each
	// value lands what it holds (a refused one on its refusal).
	if err := w.fs.DeliverAll(); err != nil {
		return "deliver: " + err.Error(), ""
	}
	w.logf("quiesce: delivered")
	w.clk.Add(2 * ledger.LayoutRecheck)
	ns := rsMarkers(w.inner)
	if len(ns) == 0 {
		if slices.ContainsFunc(answers, func(a rsAnswer) bool { return a.err == nil }) {
			return "no marker stored, yet a call was acknowledged", ""
		}
		return "", ""
	}
	largest := ns[len(ns)-1]
	byN := map[int]*ledger.Sharded{sc.small: S, sc.large: L}
	for round := range 2 {
		for _, sh := range []*ledger.Sharded{S, L} {
			_, err := sh.FindAll(ctx)
			w.logf("quiesce %d: FindAll n=%d: %v", round, sh.Shards(), err)
			if err != nil && !(errors.Is(err, crdt.ErrInvalidConfig) && sh.Shards() != largest) {
				return fmt.Sprintf("quiesce: FindAll n=%d (markers %v): %v", sh.Shards(), ns, err), ""
			}
		}
	}
	if S.Pending() && byN[largest] == S || L.Pending() && byN[largest] == L {
		return "a write still pending after quiescence", ""
	}
	stored, err := rsStored(w.inner, largest)
	if err != nil {
		return err.Error(), ""
	}
	if beyond, _ := rsStored(w.inner, 8); beyond != stored {
		return fmt.Sprintf("sub-keys past the largest n=%d hold %d", largest, beyond-stored), ""
	}
	cnt := sc.counts(stored)
	check := func(when string, cnt map[crdt.TxnID]int64) (string, string) {
		lim := ""
		for _, x := range sc.ids {
			acked := slices.ContainsFunc(answers, func(a rsAnswer) bool { return a.txn == x && a.err == nil })
			if acked && cnt[x] == 0 {
				return fmt.Sprintf("%s: %s acknowledged (answers %v) but counts 0", when, x, answers), ""
			}
			if cnt[x] > 1 {
				recs := rsRecords(w.inner, x)
				keys := map[string]bool{}
				for _, r := range recs {
					keys[r.Key] = true
				}
				if cnt[x] == 2 && len(keys) >= 2 && len(w.after[x]) == 0 {
					lim = fmt.Sprintf("%s counted twice, two records of different sub-keys %v (Limit: both copies recorded)", x, recs)
					continue
				}
				if cnt[x] == 2 && w.sDoubt {
					lim = fmt.Sprintf("%s counted twice after S restarted with a write in doubt (Limit: the smaller's process restarts while it owes the copy's record)", x)
					continue
				}
				if cnt[x] == 2 && w.retired["l"] > 0 {
					lim = fmt.Sprintf("%s counted twice after L retired %d entries (Limit: the larger retires the smaller's idle entry)", x, w.retired["l"])
					continue
				}
				return fmt.Sprintf("%s: %s counts %d times (records %v, recorded after reading another's: %v, answers %v), outside the Limit", when, x, cnt[x], recs, w.after[x], answers), ""
			}
		}
		return "", lim
	}
	if f, l := check("after landing", cnt); f != "" {
		return f, ""
	} else {
		limit = l
	}
	// Retries: through the largest layout, until acknowledged; then through
	// a new process of it: each is recognised.
	big := byN[largest]
	for _, x := range sc.ids {
		acked := slices.ContainsFunc(answers, func(a rsAnswer) bool { return a.txn == x && a.err == nil })
		for try := 0; ; try++ {
			if try == 3 {
				return fmt.Sprintf("retry of %s through n=%d refused for ever", x, largest), ""
			}
			a := credit("retry", big, x)
			if a.err != nil {
				continue
			}
			if a.outcome == tpncounter.Applied && (acked || cnt[x] > 0) {
				return fmt.Sprintf("retry of %s through n=%d applied again (acked %v, counted %d)", x, largest, acked, cnt[x]), ""
			}
			break
		}
	}
	fresh := mk(largest, "f", 2)
	for _, x := range sc.ids {
		a := credit("fresh", fresh, x)
		if a.err != nil || !isRecognised(a.outcome) {
			return fmt.Sprintf("retry of %s through a new process of n=%d: %v %v", x, largest, a.outcome, a.err), ""
		}
	}
	stored, _ = rsStored(w.inner, largest)
	if f, l := check("after retries", sc.counts(stored)); f != "" {
		return f, ""
	} else if limit == "" {
		limit = l
	}
	readers := []*ledger.Sharded{fresh}
	for _, n := range ns {
		readers = append(readers, byN[n], mk(n, "r", 3))
	}
	for _, r := range readers {
		if r == nil {
			continue
		}
		v, err := r.Value(ctx)
		if err != nil || v != stored {
			return fmt.Sprintf("Value through n=%d: %d %v, want %d", r.Shards(), v, err, stored), ""
		}
	}
	return "", limit
}

// explore runs sc under every schedule (budget 0) or budget random ones,
// in a synctest bubble. The random ones are drawn from doubtSeed, outside
// the bubble, whose clock is fake: drawn inside it, every run's seed was
// the bubble's start, 946684800000000000.
func (sc rsScenario) explore(t *testing.T, budget int) {
	seed := doubtSeed(t)
	synctest.Test(t, func(t *testing.T) { sc.exploreIn(t, budget, seed) })
}

func (sc rsScenario) exploreIn(t *testing.T, budget int, seed int64) {
	s := &schedtest.Sched{}
	if budget > 0 {
		t.Logf("%s: %d random schedules, seed %d (COUNTERKIT_SEED=%d replays them)", sc.name, budget, seed, seed)
		s.RNG = rand.New(rand.NewPCG(uint64(seed), 0))
	}
	n, limits, drift, f1 := 0, 0, 0, 0
	cats := map[string]int{}
	seen := map[string]bool{}
	for {
		fail, lim := sc.once(s)
		n++
		if s.Drift {
			drift++
			s.Drift = false
		}
		if lim != "" {
			limits++
			cats[lim[strings.Index(lim, "(Limit: "):]]++
			if !seen[lim] && len(seen) < 3 {
				seen[lim] = true
				t.Logf("inside the Limit: %s", lim)
			}
		}
		if strings.HasPrefix(fail, "F1: ") {
			f1++
			if f1 == 1 {
				t.Errorf("%s: schedule %d: %s", sc.name, n, fail)
			}
			fail = ""
		}
		if fail != "" {
			t.Fatalf("%s: schedule %d: %s", sc.name, n, fail)
		}
		if budget > 0 && n >= budget || !s.Next() {
			break
		}
	}
	t.Logf("%s: %d schedules (%d counted a transaction twice inside the Limit %v; %d replays drifted; %d showed F1, the misnamed record)", sc.name, n, limits, cats, drift, f1)
}

func rsSplit(prefix string, a, b int, split bool) crdt.TxnID {
	for i := 0; ; i++ {
		x := crdt.TxnID(fmt.Sprint(prefix, i))
		if (ledger.ShardOf(x, a) != ledger.ShardOf(x, b)) == split {
			return x
		}
	}
}

var rsPutFaults = []faulty.Fault{faulty.Refuse, faulty.Lose, faulty.LoseAck, faulty.Hold}
var rsFetchFaults = []faulty.Fault{faulty.Stale, faulty.Refuse}

func TestShardedRaceTrace(t *testing.T) {
	if os.Getenv("COUNTERKIT_SHARD_TRACE") == "" {
		t.Skip("COUNTERKIT_SHARD_TRACE")
	}
	x := rsSplit("x", 2, 4, true)
	sc := rsScenario{name: "trace", small: 2, large: 4, sOps: []int{0}, lOps: []int{0}, ids: []crdt.TxnID{x},
		budget: rsBudget{faults: 0, preempt: 0}}
	synctest.Test(t, func(t *testing.T) {
		s := &schedtest.Sched{}
		fail, _ := sc.once(s)
		t.Logf("choices %v fail %q\n%s", s.Choices, fail, strings.Join(rsLastLog, "\n"))
	})
}

// rsDefaultBudget is the schedules drawn per scenario by default: small,
// or full times COUNTERKIT_CASES with it set above 1.
func rsDefaultBudget(small, full int) int {
	if proptest.Scale(1) > 1 {
		return proptest.Scale(full)
	}
	return small
}

func rsEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// TestShardedRaceEnumerated: two first uses of different n, each
// crediting the same transaction (delivered to both), every interleaving
// with up to COUNTERKIT_SHARD_FAULTS faults and COUNTERKIT_SHARD_PREEMPT preemptions, the clock
// stepped 1.5 s (across the trust) at any point.
//
// By default it draws 600 schedules per pair (150 with -short; 1,500
// times COUNTERKIT_CASES with it set above 1; seed 1, the time's with
// COUNTERKIT_CASES set, logged, COUNTERKIT_SEED replays);
// COUNTERKIT_SHARD_BUDGET=0 runs every one (with
// COUNTERKIT_SHARD_FAULTS=1 COUNTERKIT_SHARD_PREEMPT=2: 44,151 to 50,782 schedules a pair, about 20 s
// each).
func TestShardedRaceEnumerated(t *testing.T) {
	faults, preempt := rsEnv("COUNTERKIT_SHARD_FAULTS", 2), rsEnv("COUNTERKIT_SHARD_PREEMPT", 3)
	budget := rsEnv("COUNTERKIT_SHARD_BUDGET", rsDefaultBudget(600, 1500))
	if testing.Short() && budget > 150 {
		budget = 150
	}
	for _, p := range [][2]int{{1, 2}, {2, 4}, {2, 3}} {
		for _, split := range []bool{true, false} {
			x := rsSplit("x", p[0], p[1], split)
			sc := rsScenario{name: fmt.Sprintf("n=%d,%d split=%v", p[0], p[1], split), small: p[0], large: p[1],
				sOps: []int{0}, lOps: []int{0}, ids: []crdt.TxnID{x}, ticks: []time.Duration{1500 * time.Millisecond},
				budget: rsBudget{faults: faults, preempt: preempt, fetchFaults: rsFetchFaults, putFaults: rsPutFaults}}
			if p[0] == 1 && !split {
				continue // every txn is on sub-key 0 under n=1 and under 2 when not split
			}
			t.Run(sc.name, func(t *testing.T) { sc.explore(t, budget) })
		}
	}
}

// TestShardedRaceTwoCredits: as TestShardedRaceEnumerated, with
// two transactions delivered to both layouts one after the other (x split
// between the layouts' sub-keys, y on a shared one), drawn at random
// (COUNTERKIT_SHARD_BUDGET schedules, by default 800 per pair, 200 with
// -short, 2,000 times COUNTERKIT_CASES with it set above 1;
// COUNTERKIT_SHARD_BUDGET=0 enumerates them all).
func TestShardedRaceTwoCredits(t *testing.T) {
	faults, preempt := rsEnv("COUNTERKIT_SHARD_FAULTS", 2), rsEnv("COUNTERKIT_SHARD_PREEMPT", 3)
	budget := rsEnv("COUNTERKIT_SHARD_BUDGET", rsDefaultBudget(800, 2000))
	if testing.Short() && budget > 200 {
		budget = 200
	}
	for _, p := range [][2]int{{1, 2}, {2, 4}} {
		x := rsSplit("x", p[0], p[1], true)
		y := rsSplit("y", p[0], p[1], false)
		sc := rsScenario{name: fmt.Sprintf("n=%d,%d", p[0], p[1]), small: p[0], large: p[1],
			sOps: []int{0, 1}, lOps: []int{0, 1}, ids: []crdt.TxnID{x, y}, ticks: []time.Duration{1500 * time.Millisecond},
			budget: rsBudget{faults: faults, preempt: preempt, fetchFaults: rsFetchFaults, putFaults: rsPutFaults}}
		t.Run(sc.name, func(t *testing.T) { sc.explore(t, budget) })
	}
}

// TestShardedRaceRestartRetire: the race with S restarting between
// its credits (a retry of x through its new process), and the clock
// stepped 1.5 s and 70 min (L's writes retire S's idle entries on the
// sub-keys they share), L crediting x then z (on sub-key 0, shared).
// Schedules drawn as in TestShardedRaceTwoCredits.
func TestShardedRaceRestartRetire(t *testing.T) {
	faults, preempt := rsEnv("COUNTERKIT_SHARD_FAULTS", 2), rsEnv("COUNTERKIT_SHARD_PREEMPT", 3)
	budget := rsEnv("COUNTERKIT_SHARD_BUDGET", rsDefaultBudget(800, 2000))
	if testing.Short() && budget > 200 {
		budget = 200
	}
	for _, p := range [][2]int{{1, 2}, {2, 4}} {
		x := rsSplit("x", p[0], p[1], true)
		var z crdt.TxnID
		for i := 0; ledger.ShardOf(z, p[1]) != 0 || ledger.ShardOf(z, p[0]) != 0; i++ {
			z = crdt.TxnID(fmt.Sprint("z", i))
		}
		sc := rsScenario{name: fmt.Sprintf("n=%d,%d", p[0], p[1]), small: p[0], large: p[1],
			sOps: []int{0, 0}, lOps: []int{0, 1}, ids: []crdt.TxnID{x, z}, restartAfter: 1,
			ticks:  []time.Duration{1500 * time.Millisecond, 70 * time.Minute},
			budget: rsBudget{faults: faults, preempt: preempt, fetchFaults: rsFetchFaults, putFaults: rsPutFaults}}
		t.Run(sc.name, func(t *testing.T) { sc.explore(t, budget) })
	}
}

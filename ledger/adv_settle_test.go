package ledger_test

// Adversarial scenarios for SPEC.md 6.11 step 3 ("Confirming" and
// "settles": a ledger whose copy of a transaction landed late reads the
// records and the account before writing its own record), step 5
// (retirement records name the copy that counts) and step 6 (a copy that
// does not count is given up only after a record names the one that
// does). They are written from the promise of 6.11: a transaction
// delivered to two or three ledgers at once, or retried on another ledger
// while a write is in doubt, with puts held in flight, lost, slow, refused
// and with stale reads, counts exactly once once every ledger has read and
// written again; a retry of it on any ledger is recognised; no call hangs
// or leaves a key unreadable; and an Update never answers applied for a
// copy that is then taken out.
//
// Each test names, in its comment, the broken variants of the production
// code it was seen to fail against.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// settleCallTimeout bounds every ledger call of these tests: a call that
// runs out of it hangs.
const settleCallTimeout = 20 * time.Second

// slowPut holds one Put of the account key: it reaches the store when land
// is closed and its caller is answered when ack is closed, so the write
// lands at one moment and is acknowledged at another (a slow call that
// succeeds).
type slowPut struct {
	held, land, landed, ack chan struct{}
}

func newSlowPut() *slowPut {
	return &slowPut{held: make(chan struct{}), land: make(chan struct{}), landed: make(chan struct{}), ack: make(chan struct{})}
}

// landSlow lets g, a slow put, land and be acknowledged, and returns its
// call's answer, which must not be an error.
func landSlow(t *testing.T, g *slowPut, done <-chan slowAnswer) slowAnswer {
	t.Helper()
	close(g.land)
	<-g.landed
	close(g.ack)
	ans := <-done
	require.NoError(t, ans.err)
	return ans
}

// slowNext makes l's next account Put slow (see slowPut), or, with g nil,
// no longer slow; it returns g.
func (l *lane) slowNext(g *slowPut) *slowPut {
	l.mu.Lock()
	l.slow = g
	l.mu.Unlock()
	return g
}

// lane is one ledger's path to the shared store: a faulty wrapper (its
// own faults and held puts) plus a hook before every call, an optional
// slow Put, and a look at every account state the ledger reads or writes.
type lane struct {
	*faulty.Siblings
	plan *doubtPlan
	mem  store.Siblings // beneath: stored sightings go straight to it

	mu     sync.Mutex
	before func(method, key string) // runs before each call, outside the lock
	slow   *slowPut                 // the next Put of the account key is slow
	wrote  func(v []byte)           // sees each account state this lane put
	read   func(v [][]byte)         // sees each account read this lane made
	trace  func(format string, args ...any)
}

func (l *lane) logf(format string, args ...any) {
	if l.trace != nil {
		l.trace(format, args...)
	}
}

func keyName(key string) string {
	if ledger.IsRecordKey(key) {
		return "record"
	}
	return "account"
}

func newLane(mem store.Siblings) *lane {
	p := &doubtPlan{}
	return &lane{Siblings: faulty.NewSiblings(mem, faulty.Options{Policy: p.policy}), plan: p, mem: mem}
}

func (l *lane) hook(method, key string) {
	l.mu.Lock()
	f := l.before
	l.mu.Unlock()
	if f != nil {
		f(method, key)
	}
}

func (l *lane) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	if ledger.IsSeenKey(key) {
		return l.mem.Fetch(ctx, key)
	}
	l.hook(faulty.MethodFetch, key)
	sibs, tok, err := l.Siblings.Fetch(ctx, key)
	if l.trace != nil && err == nil && !ledger.IsRecordKey(key) {
		st := decodeState(nil, sibs...)
		var held []string
		for a, v := range st.LiveActors() {
			held = append(held, fmt.Sprintf("%s@%d%v", a, v, slices.Sorted(maps.Keys(maps.Collect(st.Transactions(a))))))
		}
		slices.Sort(held)
		l.logf("fetch account: %d siblings, value %d, held %v", len(sibs), st.Value(), held)
	} else {
		l.logf("fetch %s: %d siblings, %v", keyName(key), len(sibs), err)
	}
	if err == nil && !ledger.IsRecordKey(key) {
		l.mu.Lock()
		f := l.read
		l.mu.Unlock()
		if f != nil {
			f(sibs)
		}
	}
	return sibs, tok, err
}

func (l *lane) Put(ctx context.Context, key string, actor crdt.ActorID, v []byte, token store.Token) error {
	if ledger.IsSeenKey(key) {
		return l.mem.Put(ctx, key, actor, v, token)
	}
	l.hook(faulty.MethodPut, key)
	if ledger.IsRecordKey(key) {
		err := l.Siblings.Put(ctx, key, actor, v, token)
		var r ledger.Record
		_ = r.UnmarshalBinary(v)
		l.logf("put record %s->%s v%d (token %v): %v", r.Txn, r.Writer, r.Version, token != nil, err)
		return err
	}
	l.mu.Lock()
	g := l.slow
	l.slow = nil
	f := l.wrote
	l.mu.Unlock()
	if g != nil {
		close(g.held)
		<-g.land
	}
	err := l.Siblings.Put(ctx, key, actor, v, token)
	if g != nil {
		close(g.landed)
		<-g.ack
	}
	if f != nil {
		f(v) // every state the ledger tried to write, landed or not
	}
	if l.trace != nil {
		st, _ := tpncounter.New(tpncounter.Options{})
		_ = st.UnmarshalBinary(v)
		var held []string
		for a, v := range st.LiveActors() {
			held = append(held, fmt.Sprintf("%s@%d%v", a, v, slices.Sorted(maps.Keys(maps.Collect(st.Transactions(a))))))
		}
		slices.Sort(held)
		l.logf("put account (slow %v): value %d, held %v: %v", g != nil, st.Value(), held, err)
	}
	return err
}

// decodeState merges encoded counter states.
func decodeState(t *testing.T, sibs ...[]byte) *tpncounter.Counter {
	c, err := tpncounter.New(tpncounter.Options{})
	if err != nil {
		panic(err)
	}
	for _, b := range sibs {
		one, err := tpncounter.New(tpncounter.Options{})
		if err == nil {
			err = one.UnmarshalBinary(b)
		}
		if err == nil {
			err = c.Merge(one)
		}
		if err != nil {
			t.Errorf("an account state does not decode: %v", err)
		}
	}
	return c
}

// takeOutWatch watches the states a ledger writes after it answered
// applied for txn: its copy then counts (alone, or meeting another copy),
// and must not be taken out. A take-out is seen as a write in which txn,
// held in the writer's history as the copy that counts in the writer's
// previous write, is held by no one: folding keeps it, forgetting needs it
// folded first, and dropping needs another holder.
type takeOutWatch struct {
	mu         sync.Mutex
	writer     crdt.ActorID
	txn        crdt.TxnID
	on         bool
	counts     bool // the writer's last state: its history copy counts
	violations []string
}

func (w *takeOutWatch) start(st *tpncounter.Counter) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.on = true
	w.counts = countsInHistory(st, w.writer, w.txn)
}

func countsInHistory(st *tpncounter.Counter, writer crdt.ActorID, txn crdt.TxnID) bool {
	o, ok := st.Owner(txn)
	return ok && o.Actor == writer && !o.Folded
}

func (w *takeOutWatch) wrote(t *testing.T, v []byte) {
	st := decodeState(t, v)
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.on {
		return
	}
	if w.counts && st.Status(w.txn) == tpncounter.Unknown {
		w.violations = append(w.violations, fmt.Sprintf("%s answered applied for %s, then wrote a state without it (taken out)", w.writer, w.txn))
	}
	w.counts = countsInHistory(st, w.writer, w.txn)
}

// read resets the watch when the writer's entry was retired by another
// ledger (the writer then continues from the retired entry, which counts
// its copy in its total).
func (w *takeOutWatch) read(t *testing.T, sibs [][]byte) {
	st := decodeState(t, sibs...)
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, live := maps.Collect(st.LiveActors())[w.writer]; !live && st.Version(w.writer) > 0 {
		w.counts = false
	}
	if o, ok := st.Owner(w.txn); ok && o.Actor != w.writer {
		w.counts = false // given up (see appliedWatch.read)
	}
}

// settleWorld is the ledgers of one scenario on one shared store.
type settleWorld struct {
	t       *testing.T
	mem     *memory.Siblings
	clock   *fakeClock
	copts   tpncounter.Options
	lanes   []*lane
	ledgers []*ledger.Ledger
	watches []*takeOutWatch
	want    int64 // the value once every transaction counts once
	what    string
}

func newSettleWorld(t *testing.T, copts tpncounter.Options, names []crdt.ActorID, retireAfter []time.Duration, txn crdt.TxnID) *settleWorld {
	w := &settleWorld{t: t, mem: memory.NewSiblings(), clock: newFakeClock(time.Unix(1_800_000_000, 0)), copts: copts}
	for i, name := range names {
		ln := newLane(w.mem)
		l, err := ledger.New(ln, advKey, ledger.Options{Actor: name, RetryCount: 1, Backoff: ledger.Backoff{Initial: -1},
			Counter: copts, MaxGroup: 1, RetireAfter: retireAfter[i], Clock: w.clock.Now})
		require.NoError(t, err)
		watch := &takeOutWatch{writer: l.Writer(), txn: txn}
		ln.wrote = func(v []byte) { watch.wrote(t, v) }
		ln.read = func(sibs [][]byte) { watch.read(t, sibs) }
		w.lanes, w.ledgers, w.watches = append(w.lanes, ln), append(w.ledgers, l), append(w.watches, watch)
	}
	return w
}

// update makes one call with a bounded context; running out of it is a
// hang.
func (w *settleWorld) update(i int, x crdt.TxnID, amount int64) (ledger.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), settleCallTimeout)
	defer cancel()
	r, err := w.ledgers[i].Update(ctx, x, amount)
	if errors.Is(err, context.DeadlineExceeded) {
		w.t.Errorf("%s: Update(%s) hangs", w.ledgers[i].Actor(), x)
	}
	return r, err
}

// answered notes the answer of ledger i to x: applied starts the
// take-out watch, and the state stored right after it must hold the
// ledger's copy.
func (w *settleWorld) answered(i int, x crdt.TxnID, r ledger.Result, err error) {
	if err != nil || r.Outcome != tpncounter.Applied || x != w.watches[i].txn {
		return
	}
	st := stored(w.t, w.mem)
	_, live := maps.Collect(st.LiveActors())[w.ledgers[i].Writer()]
	if live && !slices.Contains(slices.Collect(maps.Keys(maps.Collect(st.Transactions(w.ledgers[i].Writer())))), x) {
		w.t.Errorf("%s: %s answered applied for %s without its copy in the store (taken out before the answer)", w.what, w.ledgers[i].Actor(), x)
	}
	w.watches[i].start(st)
}

// credit is a call that must succeed and apply.
func (w *settleWorld) credit(i int, x crdt.TxnID, amount int64) {
	w.t.Helper()
	r, err := w.update(i, x, amount)
	require.NoError(w.t, err, "%s: %s", w.ledgers[i].Actor(), x)
	require.Equal(w.t, tpncounter.Applied, r.Outcome, "%s: %s", w.ledgers[i].Actor(), x)
	w.want += amount
}

// settleAgain has every ledger read and write again: each writes a new
// transaction, retried (a stale read may fail it unavailable) until it is
// answered.
func (w *settleWorld) settleAgain(round string) {
	w.t.Helper()
	for i := range w.ledgers {
		x := crdt.TxnID(fmt.Sprintf("%s-%d", round, i))
		var err error
		for try := 0; try < 4; try++ {
			var r ledger.Result
			r, err = w.update(i, x, 1)
			if err == nil {
				require.Contains(w.t, []tpncounter.Outcome{tpncounter.Applied, tpncounter.Duplicate}, r.Outcome)
				break
			}
			require.True(w.t, errors.Is(err, crdt.ErrUnavailable) || errors.Is(err, crdt.ErrAmbiguousWrite), "%s: %s: %v", w.ledgers[i].Actor(), x, err)
		}
		require.NoError(w.t, err, "%s: %s after the store recovered", w.ledgers[i].Actor(), x)
		w.want++
	}
}

// verify checks the promise for the transactions amounts: the value counts
// each once, every key decodes, and a retry of each on every ledger, on a
// new ledger and on a new incarnation of each actor is recognised and
// changes nothing.
func (w *settleWorld) verify(amounts map[crdt.TxnID]int64, what string) {
	t := w.t
	t.Helper()
	for _, wt := range w.watches {
		wt.mu.Lock()
		v := slices.Clone(wt.violations)
		wt.mu.Unlock()
		require.Empty(t, v, what)
	}
	st := stored(t, w.mem)
	require.Equal(t, w.want, st.Value(), "%s: each transaction counted once (a difference of one amount: counted twice or never)", what)
	for x := range amounts {
		_, _ = recordOf(t, w.mem, x) // every record decodes
	}
	retriers := slices.Clone(w.ledgers)
	for _, name := range []crdt.ActorID{"z", w.ledgers[0].Actor()} {
		l, err := ledger.New(w.mem, advKey, ledger.Options{Actor: name, Counter: w.copts, RetireAfter: -1, Clock: w.clock.Now})
		require.NoError(t, err)
		retriers = append(retriers, l)
	}
	for _, l := range retriers {
		for _, x := range slices.Sorted(maps.Keys(amounts)) {
			ctx, cancel := context.WithTimeout(context.Background(), settleCallTimeout)
			r, err := l.Update(ctx, x, amounts[x])
			cancel()
			require.NoError(t, err, "%s: retry of %s on %s", what, x, l.Actor())
			require.True(t, isRecognised(r.Outcome), "%s: a retry of %s on %s is applied again: %v", what, x, l.Actor(), r.Outcome)
		}
	}
	require.Equal(t, w.want, stored(t, w.mem).Value(), "%s: after the retries", what)
}

// boundaries schedules events before the store calls of some lanes: the
// event at position p runs before the p-th such call (0-based); events past
// the last call run by finish.
type boundaries struct {
	mu     sync.Mutex
	n      int
	events []settleEvent
	trace  func(format string, args ...any)
	probe  func() bool // whether the store holds x, before each call
	calls  []settleCall
}

// settleCall is one store call at a boundary: its lane, method and key,
// and whether the store held x just before it.
type settleCall struct {
	lane   int
	method string
	record bool
	held   bool
}

// forgetWindows returns, for each boundary of calls, the boundary of the
// account Put that closes the cycle it lies in when that Put removes x from
// the store (the writer forgot x, or gave it up, in a cycle that read the
// account before the boundary), else -1. held is whether the store holds
// x after the last call.
func forgetWindows(calls []settleCall, heldAtEnd bool) []int {
	out := make([]int, len(calls)+1)
	for i := range out {
		out[i] = -1
	}
	heldAfter := func(i int) bool {
		if i+1 < len(calls) {
			return calls[i+1].held
		}
		return heldAtEnd
	}
	for f, c := range calls {
		if c.method != faulty.MethodFetch || c.record {
			continue
		}
		for u := f + 1; u < len(calls); u++ {
			d := calls[u]
			if d.lane != c.lane || d.record {
				continue
			}
			if d.method == faulty.MethodPut && d.held && !heldAfter(u) {
				for i := f + 1; i <= u; i++ {
					out[i] = u
				}
			}
			break
		}
	}
	return out
}

type settleEvent struct {
	at   int
	name string
	fire func()
}

func (b *boundaries) tick(lane int, method, key string) {
	held := b.probe != nil && b.probe()
	b.mu.Lock()
	b.calls = append(b.calls, settleCall{lane: lane, method: method, record: ledger.IsRecordKey(key), held: held})
	at := b.n
	b.n++
	var due []settleEvent
	b.events = slices.DeleteFunc(b.events, func(e settleEvent) bool {
		if e.at <= at {
			due = append(due, e)
			return true
		}
		return false
	})
	b.mu.Unlock()
	for _, e := range due {
		if b.trace != nil {
			b.trace("event %s at %d", e.name, at)
		}
		e.fire()
	}
}

func (b *boundaries) finish() int {
	b.mu.Lock()
	due := b.events
	b.events = nil
	n := b.n
	b.mu.Unlock()
	for _, e := range due {
		e.fire()
	}
	return n
}

// lateKind is how a late copy's put behaves.
type lateKind int

const (
	// lateSlow: the put lands at one boundary and is acknowledged at a
	// later one; the call goes on (confirming, settling) meanwhile.
	lateSlow lateKind = iota
	// lateDoubt: the call's first put is held in flight and its retry lost
	// (ambiguous_write); the held put lands at a boundary.
	lateDoubt
	// lateNever: as lateDoubt, but the held put never lands.
	lateNever
)

func (k lateKind) String() string { return [...]string{"slow", "in doubt", "never lands"}[k] }

// settlePlan is one scenario: ledger 0's copy of x is late (kind0); with
// three ledgers, ledger 1's is too (in doubt); the last ledger (the
// retrier) applies x and writes on past H + F, and with retire a further
// ledger, r, retires idle writers. land0/ack0/land1 are the boundaries of
// the retrier's (and r's) store calls at which the late puts land and are
// acknowledged.
type settlePlan struct {
	names              []crdt.ActorID
	hf                 int // 0: the defaults
	kind0              lateKind
	staleSettle        bool // ledger 0's read after its put is stale
	retire             bool
	land0, ack0, land1 int
	writers            int // 2 or 3
	trace              bool
	countOnly          bool // count the boundaries; check nothing after the run
}

func (p settlePlan) String() string {
	return fmt.Sprintf("names=%v H=F=%d kind=%v staleSettle=%v retire=%v land0=%d ack0=%d land1=%d", p.names, p.hf, p.kind0, p.staleSettle, p.retire, p.land0, p.ack0, p.land1)
}

// settleRun is what a run saw: its boundaries, for each the forget window
// it lies in (forgetWindows), the first boundary of a forgetting cycle, the
// first boundary of the retiring ledger's calls and the first of the
// record Puts it makes before a retirement (n+1 if none).
type settleRun struct {
	n                          int
	windows                    []int
	forgets, retiring, records int
}

// runSettlePlan plays p and checks the promise.
func runSettlePlan(t *testing.T, p settlePlan) settleRun {
	copts := tpncounter.Options{HistoryLength: p.hf, FoldedLength: p.hf}
	h, f := p.hf, p.hf
	if p.hf == 0 {
		h, f = 10, 10
	}
	const x, amount = crdt.TxnID("x"), int64(100)
	names := slices.Clone(p.names)
	retire := make([]time.Duration, len(names))
	for i := range retire {
		retire[i] = -1
	}
	if p.retire {
		names = append(names, "r")
		retire = append(retire, time.Hour)
	}
	w := newSettleWorld(t, copts, names, retire, x)
	w.what = p.String()
	ret := p.writers - 1 // the retrier
	if p.trace {
		for i, ln := range w.lanes {
			name := w.ledgers[i].Actor()
			ln.trace = func(format string, args ...any) { t.Logf("%s: %s", name, fmt.Sprintf(format, args...)) }
		}
	}
	for i := range w.ledgers {
		w.credit(i, crdt.TxnID(fmt.Sprintf("open-%d", i)), 1000)
	}
	b := &boundaries{probe: func() bool {
		sibs, _, err := w.mem.Fetch(context.Background(), advKey)
		if err != nil {
			t.Errorf("reading the store: %v", err)
		}
		return decodeState(t, sibs...).Status(x) != tpncounter.Unknown
	}}
	if p.trace {
		b.trace = t.Logf
	}
	for i := ret; i < len(w.lanes); i++ {
		w.lanes[i].before = func(method, key string) { b.tick(i, method, key) }
	}
	ctx := context.Background()
	_ = ctx
	// Ledger 0's call of x.
	type answer struct {
		r   ledger.Result
		err error
	}
	done0 := make(chan answer, 1)
	var got0 *answer
	wait0 := func() {
		if got0 != nil {
			return
		}
		select {
		case a := <-done0:
			got0 = &a
		case <-time.After(2 * settleCallTimeout):
			t.Errorf("%v: ledger 0's call of x hangs", p)
			got0 = &answer{err: context.DeadlineExceeded}
		}
	}
	if p.staleSettle {
		// The call's own read passes; the next (settling, or the next
		// cycle's) is stale.
		w.lanes[0].plan.set(nil, []faulty.Fault{faulty.Pass, faulty.Stale}, nil)
	}
	switch p.kind0 {
	case lateSlow:
		g := w.lanes[0].slowNext(newSlowPut())
		go func() {
			r, err := w.update(0, x, amount)
			done0 <- answer{r, err}
		}()
		select {
		case <-g.held:
		case <-time.After(settleCallTimeout):
			t.Fatalf("%v: ledger 0 never put", p)
		}
		b.events = append(b.events,
			settleEvent{p.land0, "land 0", func() { close(g.land); <-g.landed }},
			settleEvent{max(p.ack0, p.land0), "ack 0", func() { close(g.ack); wait0() }})
	default:
		w.lanes[0].plan.set([]faulty.Fault{faulty.Hold, faulty.Lose}, nil, nil)
		r, err := w.update(0, x, amount)
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
		got0 = &answer{r, err}
		if p.kind0 == lateDoubt {
			b.events = append(b.events, settleEvent{p.land0, "land 0", func() {
				if err := w.lanes[0].DeliverAll(); err != nil {
					t.Errorf("delivering ledger 0's put: %v", err)
				}
			}})
		} else {
			require.Equal(t, 1, w.lanes[0].DropHeld())
		}
	}
	if p.writers == 3 {
		w.lanes[1].plan.set([]faulty.Fault{faulty.Hold, faulty.Lose}, nil, nil)
		_, err := w.update(1, x, amount)
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
		b.events = append(b.events, settleEvent{p.land1, "land 1", func() {
			if err := w.lanes[1].DeliverAll(); err != nil {
				t.Errorf("delivering ledger 1's put: %v", err)
			}
		}})
	}
	slices.SortStableFunc(b.events, func(a, c settleEvent) int { return a.at - c.at })
	// The retrier applies x (a delivery at once, or the caller's retry
	// while the others are in doubt) and writes on past H + F.
	r, err := w.update(ret, x, amount)
	require.NoError(t, err, "%v: the retrier's call of x", p)
	w.answered(ret, x, r, err)
	w.want += amount
	for i := range h + f + 2 {
		w.credit(ret, crdt.TxnID(fmt.Sprintf("y%02d", i)), 1)
	}
	if p.retire {
		ri := len(w.ledgers) - 1
		for step := range 4 {
			if step%2 == 0 {
				w.clock.Add(2 * time.Hour)
			}
			w.credit(ri, crdt.TxnID(fmt.Sprintf("r%d", step)), 1)
		}
	}
	heldAtEnd := b.probe()
	n := b.finish()
	run := settleRun{n: n, windows: forgetWindows(b.calls, heldAtEnd), forgets: n + 1, retiring: n + 1}
	for i := len(run.windows) - 1; i >= 0; i-- {
		if run.windows[i] >= 0 {
			run.forgets = i
		}
	}
	run.records = n + 1
	for i := len(b.calls) - 1; i >= 0; i-- {
		c := b.calls[i]
		if !p.retire || c.lane != len(w.ledgers)-1 {
			continue
		}
		run.retiring = i
		if i+1 < len(b.calls) && c.method == faulty.MethodPut && c.record && b.calls[i+1].lane == c.lane && b.calls[i+1].method == faulty.MethodPut && b.calls[i+1].record {
			run.records = i
		}
	}
	wait0()
	for i := range w.lanes {
		w.lanes[i].before = nil
	}
	// Ledger 0's answer.
	switch {
	case got0.err == nil:
		require.Contains(t, []tpncounter.Outcome{tpncounter.Applied, tpncounter.Duplicate}, got0.r.Outcome, "%v", p)
		w.answered(0, x, got0.r, got0.err)
	case p.kind0 == lateSlow:
		// Only a settling that read stale may leave the call in doubt.
		require.True(t, p.staleSettle, "%v: the slow call failed: %v", p, got0.err)
		require.ErrorIs(t, got0.err, crdt.ErrAmbiguousWrite, "%v", p)
	}
	// Every ledger reads and writes again, twice.
	w.settleAgain("e1")
	w.settleAgain("e2")
	amounts := map[crdt.TxnID]int64{x: amount}
	if !p.countOnly {
		w.verify(amounts, p.String())
	}
	return run
}

// settlePositions lists the boundaries to try out of n: every one when all
// is set, else the first 8, every tenth, and the last 12 (where the other
// writer folds and forgets).
func settlePositions(n int, all bool) []int {
	var out []int
	for i := 0; i <= n; i++ {
		if all || i < 8 || i%10 == 0 || i >= n-12 {
			out = append(out, i)
		}
	}
	return out
}

// TestAdvSettleTwoWriters: x is delivered to ledgers L0 and L1 at once
// (L0's put slow: it lands at one boundary and is acknowledged at a later
// one, the call confirming and settling meanwhile) or retried on L1 while
// L0's call is in doubt (its put held in flight and landing later, or
// never). L1 applies x, records it, and writes on past H + F (folding and
// forgetting x, or giving its copy up to L0's when L0 sorts first); with
// retire, a third ledger then retires the idle writers. L0's put lands,
// and is acknowledged, before every store call of that sequence in turn
// (both id orders; H=F=1 and the defaults; L0's settling read fresh or
// stale). Once every ledger has read and written again, x counts once, a
// retry of x on any ledger is recognised, and a ledger that answered
// applied for x never takes its copy out. The landings inside L1's
// forgetting cycle are where L0's copy meets L1's and is watched.
//
// Seen to fail against each of these broken variants, one at a time:
//   - settle always putting the record (index.go, record's `case v ==
//     none:` made `case true:`): x counted twice, 2208 for 2108;
//   - the watch off (settle's `if v == meet {` made `if false && ...`): x
//     counted twice, 2208 for 2108, when L0's put lands inside the cycle
//     in which L1 forgets x;
//   - cede doing nothing (`if len(ceded) == 0` made `if true || ...`): x
//     counted zero times, 2008 for 2108, when L0 sorts first;
//   - the confirmation skipped (record's `p.confirm && p.rec.Writer ==
//     l.writer` made false, or its namesOnlyOthers case always taken): x
//     counted twice;
//   - retirement records naming the retired actor (recordRetiring's owner
//     case made false): x counted twice, 3214 for 3114, in doubt with
//     retire;
//   - an idle actor retired with a late copy (lastApplied's `late = true`
//     made `late = false`): x counted twice, 3214 for 3114, with retire;
//   - a copy that met or was taken out still answered applied
//     (group.go's `if o := owners[i]; o != nil` made false): "answered
//     applied for x without its copy in the store".
//
// Scale: COUNTERKIT_CASES set tries every boundary pair (slow) and every
// boundary at the default History and Folded lengths.
func TestAdvSettleTwoWriters(t *testing.T) {
	all := envCases(t, 0) > 0
	for _, names := range [][]crdt.ActorID{{"a", "b"}, {"b", "a"}} {
		for _, hf := range []int{1, 0} {
			for _, kind := range []lateKind{lateSlow, lateDoubt, lateNever} {
				for _, stale := range []bool{false, true} {
					for _, retire := range []bool{false, true} {
						if retire && (hf == 0 || stale) || hf == 0 && stale && !all {
							continue // retirement only at H=F=1, fresh reads; stale reads at the defaults with COUNTERKIT_CASES
						}
						name := fmt.Sprintf("%s-late/H=F=%d/%v/stale=%v/retire=%v", names[0], hf, kind, stale, retire)
						t.Run(name, func(t *testing.T) {
							base := settlePlan{names: names, hf: hf, kind0: kind, staleSettle: stale, retire: retire, writers: 2, land0: 1 << 20, ack0: 1 << 20}
							run := runSettlePlan(t, base)
							if kind == lateNever {
								return
							}
							t.Logf("baseline: %d boundaries, forgetting from %d, retiring from %d, records at %d", run.n, run.forgets, run.retiring, run.records)
							runs := 1
							var smp sampler
							for _, p := range twoWriterSchedules(base, run.n, all) {
								if smp.skip() {
									continue
								}
								runSettlePlan(t, p)
								runs++
							}
							t.Logf("%d schedules over %d boundaries", runs, run.n)
						})
					}
				}
			}
		}
	}
}

// twoWriterSchedules lists the landings (and, slow, acknowledgements) of
// ledger 0's late put to try over n boundaries.
func twoWriterSchedules(base settlePlan, n int, all bool) []settlePlan {
	var out []settlePlan
	for _, land := range settlePositions(n, all || base.hf != 0) {
		acks := []int{land}
		if base.kind0 == lateSlow {
			acks = append(acks, n+1)
			for q := land + 1; q <= n; q++ {
				if all {
					acks = append(acks, q)
				}
			}
		}
		for _, ack := range acks {
			p := base
			p.land0, p.ack0 = land, ack
			out = append(out, p)
		}
	}
	return out
}

// TestAdvSettleLandingInAForgettingCycle plays the schedules in which two
// late copies land once a third writer has forgotten x (H=F=1, ledgers
// "a", "b", "c"), with TestAdvSettleTwoWriters' checks: L0's and L1's
// copies both land (or L1's pending write is put again) once L2 has
// forgotten x. L0, whose copy counts, learns of it at a read and owes its
// record until its next cycle; meanwhile L1 gives its copy up to L0's
// (step 6): x's record names L2, which counted x, so L1 records L2, not
// L0. L0 then settles from that record and takes its copy out.
//
// Seen to fail against the give-up record not judged (index.go record's
// `case p.judge != nil && p.rec.Writer != l.writer:` made `case false:`):
// L0 confirms from L1's record naming it and keeps its copy, x counted
// twice, 3210 for 3110.
func TestAdvSettleLandingInAForgettingCycle(t *testing.T) {
	for _, kind := range []lateKind{lateSlow, lateDoubt} {
		base := settlePlan{names: []crdt.ActorID{"a", "b", "c"}, hf: 1, kind0: kind, writers: 3, land0: 1 << 20, ack0: 1 << 20, land1: 1 << 20, countOnly: true}
		run := runSettlePlan(t, base)
		base.countOnly = false
		for land0 := run.forgets; land0 <= run.n+1; land0 += 4 {
			for land1 := run.forgets; land1 <= run.n+1; land1 += 4 {
				p := base
				p.land0, p.ack0, p.land1 = land0, land0, land1
				t.Run(p.String(), func(t *testing.T) { runSettlePlan(t, p) })
			}
		}
	}
}

// TestAdvSettleThreeWriters: x is delivered to three ledgers. L0's put is
// slow (acknowledged when it lands, or after the rest) or in doubt, L1's
// is in doubt, and L2 applies x and writes on past H + F; the two late
// puts land before every pair of L2's store calls (H=F=1, every order of
// the three ids; every sixth landing of each, every twelfth with -short,
// unless COUNTERKIT_CASES is set).
// Once every ledger has read and written again x counts once, retries of
// it anywhere are recognised, and no ledger that answered applied takes
// its copy out.
//
// Seen to fail against cede doing nothing (`if len(ceded) == 0` made
// `if true || ...`: x counted zero times, 3010 for 3110) and against the
// give-up record not judged (index.go record's `case p.judge != nil &&
// p.rec.Writer != l.writer:` made `case false:`: x counted twice, 3210 for
// 3110, when both late copies land once the third writer forgot x).
func TestAdvSettleThreeWriters(t *testing.T) {
	all := envCases(t, 0) > 0
	step := 6
	switch {
	case all:
		step = 1
	case testing.Short():
		step = 12
	}
	perms := [][]crdt.ActorID{{"a", "b", "c"}, {"a", "c", "b"}, {"b", "a", "c"}, {"b", "c", "a"}, {"c", "a", "b"}, {"c", "b", "a"}}
	for _, names := range perms {
		for _, kind := range []lateKind{lateSlow, lateDoubt} {
			t.Run(fmt.Sprintf("%s%s%s/%v", names[0], names[1], names[2], kind), func(t *testing.T) {
				base := settlePlan{names: names, hf: 1, kind0: kind, writers: 3, land0: 1 << 20, ack0: 1 << 20, land1: 1 << 20}
				// The boundaries up to a landing do not depend on it: count
				// them with both puts landing after the rest.
				count := base
				count.countOnly = true
				run := runSettlePlan(t, count)
				runs := 1
				for land0 := 0; land0 <= run.n+1; land0 += step {
					for land1 := 0; land1 <= run.n+1; land1 += step {
						acks := []int{land0}
						if kind == lateSlow {
							acks = append(acks, run.n+1)
						}
						for _, ack := range acks {
							p := base
							p.land0, p.ack0, p.land1 = land0, ack, land1
							runSettlePlan(t, p)
							runs++
						}
					}
				}
				t.Logf("%d schedules over %d boundaries", runs, run.n)
			})
		}
	}
}

// appliedWatch is takeOutWatch for every transaction a ledger answered
// applied.
type appliedWatch struct {
	mu         sync.Mutex
	writer     crdt.ActorID
	counts     map[crdt.TxnID]bool // watched; the writer's last state: its history copy counts
	violations []string
}

func (w *appliedWatch) start(st *tpncounter.Counter, x crdt.TxnID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.counts[x] = countsInHistory(st, w.writer, x)
}

// follow makes w watch writer, the ledger's incarnation now: the copies of
// an earlier one are left to its retirement (SPEC.md 6.9).
func (w *appliedWatch) follow(writer crdt.ActorID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if writer != w.writer {
		w.writer, w.counts = writer, map[crdt.TxnID]bool{}
	}
}

// read stops watching the copies that a read shows do not count: another
// writer's copy owns the transaction, so the ledger gives its own up and
// takes it out, whatever its later reads show (SPEC.md 6.11 step 6).
func (w *appliedWatch) read(t *testing.T, sibs [][]byte) {
	st := decodeState(t, sibs...)
	w.mu.Lock()
	defer w.mu.Unlock()
	for x, counts := range w.counts {
		if o, ok := st.Owner(x); counts && ok && o.Actor != w.writer {
			w.counts[x] = false
		}
	}
}

func (w *appliedWatch) wrote(t *testing.T, v []byte) {
	st := decodeState(t, v)
	w.mu.Lock()
	defer w.mu.Unlock()
	_, live := maps.Collect(st.LiveActors())[w.writer]
	for x, counts := range w.counts {
		// A retired entry's copies left with the retirement, recorded.
		if counts && live && st.Status(x) == tpncounter.Unknown {
			w.violations = append(w.violations, fmt.Sprintf("%s answered applied for %s, then wrote a state without it (taken out)", w.writer, x))
		}
		w.counts[x] = countsInHistory(st, w.writer, x)
	}
}

// TestAdvSettleRandom drives two ledgers (History and Folded length 1 or
// 2, both id orders) through random steps: a new transaction to one
// ledger, or to both at once (concurrent calls); a retry of a call not
// answered, on either ledger. Puts of the account key are lost, lose
// their acknowledgement or are refused; record puts are refused. Every
// call ends (none hangs) with an answer or unavailable / ambiguous_write;
// a ledger that answered applied holds that copy when it
// answers and never takes it out. Then the store recovers, every ledger
// reads and writes twice, and every call not answered is retried until it
// is: each transaction counts once, and a retry of each on either ledger
// or a new one is recognised.
//
// This mix has neither stale reads nor puts held in flight
// (TestAdvSettleRandomStaleAndLate adds them).
//
// Seen to fail against cede doing nothing (`if len(ceded) == 0` made `if
// true || ...`: 53 of 64 cases at seed 1, counted zero times). Settle
// always putting the record passes here (no late copy);
// TestAdvSettleTwoWriters catches it.
//
// Replay: COUNTERKIT_SEED=<seed> go test ./ledger -run '^TestAdvSettleRandom$'
// (calls made at once take turns drawn from the seed: inTurns). Scale:
// COUNTERKIT_CASES=<n> (cases per configuration). COUNTERKIT_SETTLE_TRACE=1
// logs every store call and the entries each account read and write holds.
func TestAdvSettleRandom(t *testing.T) {
	seed := doubtSeed(t)
	t.Logf("seed %d; replay: COUNTERKIT_SEED=%d go test ./ledger -run '^TestAdvSettleRandom$'", seed, seed)
	settleRandomMixes(t, seed, envCases(t, 16), mixPlain)
}

func settleRandomMixes(t *testing.T, seed int64, cases int, mixes ...string) {
	for _, mix := range mixes {
		for _, hf := range []int{1, 2} {
			for _, order := range []bool{false, true} {
				for c := range cases {
					caseSeed := seed + int64(hf*1_000_003+c*7919) + int64(b2i(order)*17) + int64(len(mix)*100_003)
					t.Run(fmt.Sprintf("%s/H=F=%d/reversed=%v/case%d", mix, hf, order, c), func(t *testing.T) {
						inBubble(t, func(t *testing.T) { settleRandomCase(t, caseSeed, hf, order, 30, mix) })
					})
				}
			}
		}
	}
}

// TestAdvSettleRandomStaleAndLate is TestAdvSettleRandom with stale reads
// of the account key (up to three states back), with late copies (puts
// held in flight and delivered at random steps, and slow puts: the call
// on one ledger lands, and is acknowledged, after the other ledger has
// applied the transaction and made up to 2H + 2 more credits), and with
// both, under the same checks: ten cases of each mix, H=F and order
// (three with -short; COUNTERKIT_CASES with it set).
//
// Seen to fail against the watch off (index.go's settle, `if v == meet {`
// made `if false && ...`: a transaction counted twice for good in 2 of
// 120 cases at seed 1): a late copy settles as meeting the other
// writer's, which then forgets its own from a read made before the
// landing, or from a stale read that does not show the late copy. No
// watch of an owed record's copy (ledger.go's owe, `if o.Actor !=
// l.writer && holdsAmount(...)` made `if false && ...`) passes 600 cases
// here (seeds 1 to 5); TestAdvWatchLateCopy catches it every run.
//
// Replay: COUNTERKIT_SEED=<seed> go test ./ledger -run '^TestAdvSettleRandomStaleAndLate$'
func TestAdvSettleRandomStaleAndLate(t *testing.T) {
	seed := doubtSeed(t)
	t.Logf("seed %d; replay: COUNTERKIT_SEED=%d go test ./ledger -run '^TestAdvSettleRandomStaleAndLate$'", seed, seed)
	settleRandomMixes(t, seed, shortCases(t, 10, 3), mixStale, mixLate, mixFull)
}

// The fault mixes of settleRandomCase.
const (
	mixPlain = "plain" // lost, lost-ack and refused puts; no stale reads, no held or slow puts
	mixLate  = "late"  // held and slow puts, no stale reads
	mixStale = "stale" // stale reads, no held or slow puts
	mixFull  = "full"  // both
)

func settleRandomCase(t *testing.T, seed int64, hf int, reversed bool, steps int, mix string) {
	hold, stale := faulty.Hold, 0.0
	if mix == mixStale || mix == mixPlain {
		hold = faulty.Refuse // no puts held in flight
	}
	if mix == mixStale || mix == mixFull {
		stale = 0.12
	}
	rf := &randomFaults{rng: rand.New(rand.NewSource(seed)), refuseRecord: 0.15,
		puts:  []weightedFault{{faulty.Lose, 0.08}, {faulty.LoseAck, 0.16}, {hold, 0.28}, {faulty.Refuse, 0.36}},
		stale: stale, maxAge: 3}
	policy, intn, setFaults := rf.policy, rf.intn, rf.set
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	copts := tpncounter.Options{HistoryLength: hf, FoldedLength: hf}
	names := []crdt.ActorID{"a", "b"}
	if reversed {
		names = []crdt.ActorID{"b", "a"}
	}
	var lanes []*lane
	var ledgers []*ledger.Ledger
	var watches []*appliedWatch
	for _, name := range names {
		ln := &lane{Siblings: faulty.NewSiblings(mem, faulty.Options{Policy: policy}), mem: mem}
		l, err := ledger.New(ln, advKey, ledger.Options{Actor: name, RetryCount: 1, Backoff: ledger.Backoff{Initial: -1},
			Counter: copts, MaxGroup: 1, RetireAfter: -1, Clock: clock.Now})
		require.NoError(t, err)
		w := &appliedWatch{writer: l.Writer(), counts: map[crdt.TxnID]bool{}}
		ln.wrote = func(v []byte) { w.wrote(t, v) }
		ln.read = func(sibs [][]byte) { w.read(t, sibs) }
		if os.Getenv("COUNTERKIT_SETTLE_TRACE") != "" {
			ln.trace = func(format string, args ...any) { t.Logf("%s: %s", name, fmt.Sprintf(format, args...)) }
		}
		lanes, ledgers, watches = append(lanes, ln), append(ledgers, l), append(watches, w)
	}
	amounts := map[crdt.TxnID]int64{}
	answered := map[crdt.TxnID]bool{}
	var next int
	newTxn := func() crdt.TxnID {
		next++
		x := crdt.TxnID(fmt.Sprintf("x%03d", next))
		amounts[x] = int64(next)
		if next%4 == 0 {
			amounts[x] = -1
		}
		return x
	}
	call := func(i int, x crdt.TxnID) error {
		ctx, cancel := context.WithTimeout(context.Background(), settleCallTimeout)
		defer cancel()
		r, err := ledgers[i].Update(ctx, x, amounts[x])
		switch {
		case err == nil:
			if r.Outcome == tpncounter.Applied {
				st := stored(t, mem)
				if _, live := maps.Collect(st.LiveActors())[ledgers[i].Writer()]; live && st.Status(x) == tpncounter.Unknown {
					t.Errorf("seed %d: %s answered applied for %s, which the store does not hold", seed, names[i], x)
				}
				watches[i].follow(ledgers[i].Writer())
				watches[i].start(st, x)
			}
		case errors.Is(err, context.DeadlineExceeded):
			t.Errorf("seed %d: %s: Update(%s) hangs", seed, names[i], x)
		case errors.Is(err, crdt.ErrUnavailable), errors.Is(err, crdt.ErrAmbiguousWrite):
		default:
			t.Errorf("seed %d: %s: Update(%s): %v", seed, names[i], x, err)
		}
		return err
	}
	note := func(x crdt.TxnID, err error) {
		if err == nil {
			answered[x] = true
		}
	}
	amounts["open"] = 1_000_000
	setFaults(false)
	require.NoError(t, call(0, "open"))
	answered["open"] = true
	setFaults(true)
	for step := range steps {
		if intn(4) == 0 {
			for _, ln := range lanes {
				if ln.Held() > 0 {
					require.NoError(t, ln.Deliver(intn(ln.Held())))
				}
			}
		}
		i := intn(2)
		switch r := intn(8); {
		case r < 3:
			x := newTxn()
			note(x, call(i, x))
		case r < 5:
			// Delivered to both at once.
			x := newTxn()
			errs := make([]error, 2)
			inTurns(intn, lanes, []func(){
				func() { errs[0] = call(0, x) },
				func() { errs[1] = call(1, x) },
			})
			note(x, errs[0])
			note(x, errs[1])
		case r < 7 && (mix == mixLate || mix == mixFull):
			// Slow on ledger i: the other applies x and writes on first.
			x := newTxn()
			g := lanes[i].slowNext(newSlowPut())
			done := make(chan error, 1)
			go func() { done <- call(i, x) }()
			select {
			case <-g.held:
			case err := <-done:
				// The call ended before its put (stale read refused it, or
				// a record is owed): nothing is slow.
				lanes[i].slowNext(nil)
				note(x, err)
				continue
			}
			note(x, call(1-i, x))
			for range intn(hf + hf + 3) {
				y := newTxn()
				note(y, call(1-i, y))
			}
			close(g.land)
			<-g.landed
			close(g.ack)
			note(x, <-done)
		default:
			var pool []crdt.TxnID
			for _, x := range slices.Sorted(maps.Keys(amounts)) {
				if !answered[x] {
					pool = append(pool, x)
				}
			}
			if len(pool) == 0 {
				continue
			}
			x := pool[intn(len(pool))]
			note(x, call(i, x))
		}
		t.Logf("step %d: held %d/%d, pending %v/%v", step, lanes[0].Held(), lanes[1].Held(), ledgers[0].Pending(), ledgers[1].Pending())
	}
	// The store recovers.
	setFaults(false)
	for _, ln := range lanes {
		if intn(2) == 0 {
			require.NoError(t, ln.DeliverAll())
		} else {
			ln.DropHeld()
		}
	}
	for round := range 2 {
		for i := range ledgers {
			x := newTxn()
			err := call(i, x)
			require.NoError(t, err, "seed %d: round %d on %s after the store recovered", seed, round, names[i])
			note(x, err)
		}
	}
	for _, x := range slices.Sorted(maps.Keys(amounts)) {
		if !answered[x] {
			require.NoError(t, call(intn(2), x), "seed %d: %s retried after the store recovered", seed, x)
		}
	}
	for _, w := range watches {
		require.Empty(t, w.violations, "seed %d", seed)
	}
	requireRandomRunExact(t, seed, mem, clock, copts, ledgers, amounts)
}

// TestAdvSettleAppliedAfterAnEarlierAttempt: ledger a's call of x makes a
// first attempt whose put does not land (lost: ambiguous; or refused);
// before its second attempt, ledger b applies x (and, in the second case,
// writes on until it has forgotten x: History and Folded length 1). a's
// second attempt finds x, in the counter or in b's record: the copy that
// counts is b's, and a's never landed. a must answer duplicate, owner b
// (SPEC.md 6.9, 6.11 step 2), not applied: it answered applied before
// (an earlier attempt had "applied" x to a state never stored) and, in
// the lost case, took its pending copy out at its next read.
// TestAdvSettleRandom found both.
func TestAdvSettleAppliedAfterAnEarlierAttempt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  faulty.Fault
		forget bool
	}{
		{"lost, then counted by another ledger", faulty.Lose, false},
		{"refused, then counted and forgotten by another ledger", faulty.Refuse, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			copts := tpncounter.Options{HistoryLength: 1, FoldedLength: 1}
			mk := func(ln *lane, actor crdt.ActorID) *ledger.Ledger {
				l, err := ledger.New(ln, advKey, ledger.Options{Actor: actor, RetryCount: 1, Backoff: ledger.Backoff{Initial: -1}, Counter: copts, MaxGroup: 1, RetireAfter: -1})
				require.NoError(t, err)
				return l
			}
			la, lb := newLane(mem), newLane(mem)
			a, b := mk(la, "a"), mk(lb, "b")
			want := int64(100)
			fetches := 0
			la.before = func(method, key string) {
				if method != faulty.MethodFetch || ledger.IsRecordKey(key) {
					return
				}
				if fetches++; fetches != 2 {
					return
				}
				_, err := b.Update(ctx, "x", 100)
				require.NoError(t, err)
				if tc.forget {
					for i := range 4 {
						_, err := b.Update(ctx, crdt.TxnID(fmt.Sprint("y", i)), 1)
						require.NoError(t, err)
						want++
					}
				}
			}
			la.plan.set([]faulty.Fault{tc.fault}, nil, nil)
			r, err := a.Update(ctx, "x", 100)
			require.NoError(t, err)
			la.before = nil
			_, err = a.Find(ctx)
			require.NoError(t, err)
			require.Equal(t, want, stored(t, mem).Value(), "x counted once")
			require.NotEqual(t, tpncounter.Applied, r.Outcome, "a answered applied; the copy that counts is b's (owner %v)", r.Owner)
		})
	}
}

// requireRandomRunExact ends a random run: each transaction of amounts is
// counted once, and a retry of each, on every ledger and on a new one, is
// recognised and changes nothing.
func requireRandomRunExact(t *testing.T, seed int64, mem store.Siblings, clock *fakeClock, copts tpncounter.Options, ledgers []*ledger.Ledger, amounts map[crdt.TxnID]int64) {
	t.Helper()
	var want int64
	for _, v := range amounts {
		want += v
	}
	require.Equal(t, want, stored(t, mem).Value(), "seed %d: each transaction counted once", seed)
	fresh, err := ledger.New(mem, advKey, ledger.Options{Actor: "z", Counter: copts, RetireAfter: -1, Clock: clock.Now})
	require.NoError(t, err)
	for _, l := range append(slices.Clone(ledgers), fresh) {
		for _, x := range slices.Sorted(maps.Keys(amounts)) {
			r, err := l.Update(context.Background(), x, amounts[x])
			require.NoError(t, err, "seed %d: retry of %s on %s", seed, x, l.Actor())
			require.True(t, isRecognised(r.Outcome), "seed %d: a retry of %s on %s is applied again: %v", seed, x, l.Actor(), r.Outcome)
		}
	}
	require.Equal(t, want, stored(t, mem).Value(), "seed %d: after the retries", seed)
}

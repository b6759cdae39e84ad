package ledger_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// Group commit, deterministically: a hook parks the first Put of a key, so
// that the Updates started meanwhile queue behind the running cycle; the
// test waits until they are all queued (ledger.Queued), then releases the
// Put. The queued Updates then run as one group: one cycle, one Put.

// groupRig is a faulty memory store that counts the Puts reaching it and
// can park the next Put of a key until released.
type groupRig struct {
	t     *testing.T
	inner *memory.Siblings
	st    *faulty.Siblings
	puts  atomic.Int64

	mu    sync.Mutex
	parks []parking // the next Puts to park, in order
}

type parking struct {
	release chan struct{} // closed to let the parked Put go on
	parked  chan struct{} // closed when the Put is parked
}

func newGroupRig(t *testing.T) *groupRig { return newGroupRigWith(t, faulty.Options{}) }

// noLeak fails t if goroutines it started outlive it (queued callers,
// context watchers).
func noLeak(t *testing.T) {
	n := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > n {
			if time.Now().After(deadline) {
				t.Errorf("%d goroutines left running (%d before)", runtime.NumGoroutine(), n)
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
}

func newGroupRigWith(t *testing.T, o faulty.Options) *groupRig {
	r := &groupRig{t: t, inner: memory.NewSiblings()}
	o.Hook = r.hook
	r.st = faulty.NewSiblings(r.inner, o)
	return r
}

func (r *groupRig) hook(_ context.Context, c faulty.Call, after bool) error {
	if after || c.Method != faulty.MethodPut || ledger.IsRecordKey(c.Key) || ledger.IsSeenKey(c.Key) {
		return nil
	}
	r.puts.Add(1)
	r.mu.Lock()
	var p *parking
	if len(r.parks) > 0 {
		p = &r.parks[0]
		r.parks = r.parks[1:]
	}
	r.mu.Unlock()
	if p != nil {
		close(p.parked)
		<-p.release
	}
	return nil
}

// armPark parks the next Put not yet claimed by an earlier armPark;
// release lets it go on.
func (r *groupRig) armPark() (parked <-chan struct{}, release func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := parking{release: make(chan struct{}), parked: make(chan struct{})}
	r.parks = append(r.parks, p)
	return p.parked, sync.OnceFunc(func() { close(p.release) })
}

func (r *groupRig) ledger(opts ledger.Options) *ledger.Ledger {
	r.t.Helper()
	if opts.Actor == "" {
		opts.Actor = "a"
	}
	if opts.Backoff == (ledger.Backoff{}) {
		opts.Backoff = ledger.Backoff{Initial: -1}
	}
	l, err := ledger.New(r.st, "k", opts)
	require.NoError(r.t, err)
	return l
}

// stored returns the join of the siblings stored (read past the faults,
// writing nothing).
func (r *groupRig) stored() *tpncounter.Counter {
	r.t.Helper()
	sibs, _, err := r.inner.Fetch(context.Background(), "k")
	require.NoError(r.t, err)
	j, err := tpncounter.New(tpncounter.Options{})
	require.NoError(r.t, err)
	for _, b := range sibs {
		c, err := tpncounter.New(tpncounter.Options{})
		require.NoError(r.t, err)
		require.NoError(r.t, c.UnmarshalBinary(b))
		require.NoError(r.t, j.Merge(c))
	}
	return j
}

// answer is one Update's Result and error.
type answer struct {
	res ledger.Result
	err error
}

// req is one Update of a group.
type req struct {
	ctx    context.Context
	txn    crdt.TxnID
	amount int64
}

// runGroup makes a first Update (lead, if not empty) whose Put is parked,
// queues reqs behind it in order, runs before (if not nil) while they are
// all queued, releases the Put, and returns the answers: lead's first.
func (r *groupRig) runGroup(l *ledger.Ledger, lead crdt.TxnID, reqs []req, before func()) []answer {
	r.t.Helper()
	ctx := context.Background()
	parked, release := r.armPark()
	defer release()
	out := make([]answer, 1+len(reqs))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		res, err := l.Credit(ctx, lead, 1)
		out[0] = answer{res, err}
	}()
	<-parked
	for i, q := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := q.ctx
			if c == nil {
				c = ctx
			}
			res, err := l.Update(c, q.txn, q.amount)
			out[1+i] = answer{res, err}
		}()
		if ledger.MaxGroupOf(l) == 1 {
			// No queue: the call waits for the ledger's mutex.
			time.Sleep(time.Millisecond)
			continue
		}
		waitFor(r.t, func() bool { return ledger.Queued(l) == i+1 }, "call %d queued", i+1)
	}
	if before != nil {
		before()
	}
	release()
	wg.Wait()
	return out
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t *testing.T, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: "+format, args...)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

func credits(n int, prefix string) []req {
	out := make([]req, n)
	for i := range out {
		out[i] = req{txn: crdt.TxnID(fmt.Sprintf("%s%d", prefix, i)), amount: int64(1 + i)}
	}
	return out
}

func sumOf(reqs []req) int64 {
	var s int64
	for _, q := range reqs {
		s += q.amount
	}
	return s
}

// N Updates queued behind a running cycle are written by one Put; each is
// answered Applied and landed, with the value after the shared write.
func TestGroupCommitOnePutCarriesAll(t *testing.T) {
	noLeak(t)
	r := newGroupRig(t)
	l := r.ledger(ledger.Options{})
	reqs := credits(8, "g")
	out := r.runGroup(l, "lead", reqs, nil)
	require.NoError(t, out[0].err)
	want := 1 + sumOf(reqs)
	for i, a := range out[1:] {
		require.NoError(t, a.err, "call %d", i)
		require.Equal(t, tpncounter.Applied, a.res.Outcome, "call %d", i)
		require.True(t, a.res.Landed, "call %d", i)
		require.Equal(t, want, a.res.Value, "call %d", i)
		require.Equal(t, 1, a.res.Attempts, "call %d", i)
		require.Equal(t, l.Writer(), a.res.Owner.Actor, "call %d", i)
	}
	require.EqualValues(t, 2, r.puts.Load(), "the lead's Put and one Put for the whole group")
	require.Equal(t, want, r.stored().Value())
	// Resends are recognised, alone or grouped.
	out = r.runGroup(l, "lead2", reqs, nil)
	for i, a := range out[1:] {
		require.NoError(t, a.err)
		require.Equal(t, tpncounter.Duplicate, a.res.Outcome, "resend %d", i)
		require.True(t, a.res.Landed)
	}
	require.Equal(t, want+1, r.stored().Value())
}

// MaxGroup bounds a group: 1 writes every Update alone, as without group
// commit (the callers wait for the mutex, with no queue); 3 splits 8
// queued Updates into 3 + 3 + 2.
func TestGroupCommitMaxGroup(t *testing.T) {
	for _, tc := range []struct{ max, puts int }{{1, 1 + 8}, {3, 1 + 3}, {0, 1 + 1}, {8, 1 + 1}} {
		t.Run(fmt.Sprint(tc.max), func(t *testing.T) {
			r := newGroupRig(t)
			l := r.ledger(ledger.Options{MaxGroup: tc.max})
			reqs := credits(8, "g")
			out := r.runGroup(l, "lead", reqs, nil)
			for i, a := range out {
				require.NoError(t, a.err, "call %d", i)
				require.Equal(t, tpncounter.Applied, a.res.Outcome)
			}
			require.EqualValues(t, tc.puts, r.puts.Load())
			require.Equal(t, 1+sumOf(reqs), r.stored().Value())
		})
	}
}

func TestGroupCommitMaxGroupValidated(t *testing.T) {
	st := memory.NewSiblings()
	for _, tc := range []struct {
		opts ledger.Options
		ok   bool
		want int
	}{
		{ledger.Options{MaxGroup: -1}, false, 0},
		{ledger.Options{MaxGroup: 21}, false, 0}, // default window 10 + 10
		{ledger.Options{MaxGroup: 20}, true, 20},
		{ledger.Options{}, true, ledger.DefaultMaxGroup},
		{ledger.Options{Counter: tpncounter.Options{HistoryLength: 2, FoldedLength: 1}}, true, 3},
		{ledger.Options{MaxGroup: 4, Counter: tpncounter.Options{HistoryLength: 2, FoldedLength: 1}}, false, 0},
	} {
		tc.opts.Actor = "a"
		l, err := ledger.New(st, "k", tc.opts)
		if !tc.ok {
			require.ErrorIs(t, err, crdt.ErrInvalidConfig, "%+v", tc.opts)
			_, err = ledger.NewSharded(st, "acct", 2, tc.opts)
			require.ErrorIs(t, err, crdt.ErrInvalidConfig)
			_, err = ledger.NewBook(st, ledger.BookOptions{Options: tc.opts})
			require.ErrorIs(t, err, crdt.ErrInvalidConfig)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, ledger.MaxGroupOf(l))
	}
}

// The shared Put refused on every attempt: every member is told
// crdt.ErrUnavailable (not ambiguous), nothing of the group is stored or
// left in the ledger's state (a later write does not carry it), and
// resending each lands it once.
func TestGroupCommitRefused(t *testing.T) {
	noLeak(t)
	r := newGroupRig(t)
	l := r.ledger(ledger.Options{RetryCount: 1})
	r.st.SetPolicy(counterCalls(faulty.Only(faulty.Script(faulty.Pass, faulty.Refuse, faulty.Refuse), faulty.MethodPut)))
	reqs := credits(6, "g")
	out := r.runGroup(l, "lead", reqs, nil)
	require.NoError(t, out[0].err)
	for i, a := range out[1:] {
		require.ErrorIs(t, a.err, crdt.ErrUnavailable, "call %d", i)
		require.NotErrorIs(t, a.err, crdt.ErrAmbiguousWrite, "call %d", i)
		require.False(t, a.res.Landed)
		require.Equal(t, 2, a.res.Attempts)
	}
	require.EqualValues(t, 1+2, r.puts.Load(), "the lead's Put, then the group's two attempts")
	require.False(t, l.Pending())
	require.EqualValues(t, 1, r.stored().Value())
	// The next write of this ledger carries none of them.
	_, err := l.Find(context.Background())
	require.NoError(t, err)
	got := r.stored()
	require.EqualValues(t, 1, got.Value())
	for _, q := range reqs {
		require.Equal(t, tpncounter.Unknown, got.Status(q.txn), "%s", q.txn)
	}
	// The resends are new to the store: applied once, as one group.
	out = r.runGroup(l, "lead2", reqs, nil)
	for i, a := range out[1:] {
		require.NoError(t, a.err)
		require.Equal(t, tpncounter.Applied, a.res.Outcome, "resend %d", i)
	}
	require.Equal(t, 2+sumOf(reqs), r.stored().Value())
}

// Refused once, then the retry lands: every member is Applied, landed, in
// two attempts (the group's two Puts).
func TestGroupCommitRefusedThenRetried(t *testing.T) {
	r := newGroupRig(t)
	l := r.ledger(ledger.Options{RetryCount: 1})
	r.st.SetPolicy(counterCalls(faulty.Only(faulty.Script(faulty.Pass, faulty.Refuse), faulty.MethodPut)))
	reqs := credits(6, "g")
	out := r.runGroup(l, "lead", reqs, nil)
	for i, a := range out[1:] {
		require.NoError(t, a.err, "call %d", i)
		require.Equal(t, tpncounter.Applied, a.res.Outcome)
		require.Equal(t, 2, a.res.Attempts)
	}
	require.EqualValues(t, 1+2, r.puts.Load())
	require.Equal(t, 1+sumOf(reqs), r.stored().Value())
}

// The shared Put held in flight on every attempt: every member is told
// crdt.ErrAmbiguousWrite; the ledger is pending and holds them all; a
// resend of each is answered Duplicate once it lands; the held writes
// delivered late count nothing twice.
func TestGroupCommitAmbiguous(t *testing.T) {
	noLeak(t)
	r := newGroupRig(t)
	l := r.ledger(ledger.Options{RetryCount: 1})
	r.st.SetPolicy(counterCalls(faulty.Only(faulty.Script(faulty.Pass, faulty.Hold, faulty.Hold), faulty.MethodPut)))
	reqs := credits(6, "g")
	out := r.runGroup(l, "lead", reqs, nil)
	for i, a := range out[1:] {
		require.ErrorIs(t, a.err, crdt.ErrAmbiguousWrite, "call %d", i)
		require.False(t, a.res.Landed)
	}
	require.True(t, l.Pending())
	require.Equal(t, 2, r.st.Held())
	require.EqualValues(t, 1, r.stored().Value(), "nothing of the group landed yet")
	v, err := l.Value(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1+sumOf(reqs), v, "read-your-writes: the pending group")
	// Resend every member, as one group: one Put lands them all, each a
	// Duplicate of the pending write.
	out = r.runGroup(l, "lead2", reqs, nil)
	require.NoError(t, out[0].err)
	for i, a := range out[1:] {
		require.NoError(t, a.err, "resend %d", i)
		require.Equal(t, tpncounter.Duplicate, a.res.Outcome, "resend %d", i)
		require.True(t, a.res.Landed)
	}
	require.False(t, l.Pending())
	want := 2 + sumOf(reqs)
	require.Equal(t, want, r.stored().Value())
	// The held writes land late, after newer ones: counted once.
	require.NoError(t, r.st.DeliverAll())
	require.Equal(t, want, r.stored().Value())
	v, err = l.Value(context.Background())
	require.NoError(t, err)
	require.Equal(t, want, v)
}

// An ambiguous write that landed (lost acknowledgement): the retry's fetch
// finds every member, so the group is answered Applied without writing
// again.
func TestGroupCommitAmbiguousLanded(t *testing.T) {
	r := newGroupRig(t)
	l := r.ledger(ledger.Options{})
	r.st.SetPolicy(counterCalls(faulty.Only(faulty.Script(faulty.Pass, faulty.LoseAck), faulty.MethodPut)))
	reqs := credits(6, "g")
	out := r.runGroup(l, "lead", reqs, nil)
	for i, a := range out[1:] {
		require.NoError(t, a.err, "call %d", i)
		require.Equal(t, tpncounter.Applied, a.res.Outcome)
		require.True(t, a.res.Landed)
		require.Equal(t, 2, a.res.Attempts)
	}
	require.EqualValues(t, 2, r.puts.Load(), "the second attempt found the group stored")
	require.False(t, l.Pending())
	require.Equal(t, 1+sumOf(reqs), r.stored().Value())
}

// Ambiguous, then refused: a member whose transaction is still in the
// pending write is told so (crdt.ErrAmbiguousWrite as well as the
// refusal), since the pending write may still land.
func TestGroupCommitAmbiguousThenRefused(t *testing.T) {
	r := newGroupRig(t)
	l := r.ledger(ledger.Options{RetryCount: 1})
	r.st.SetPolicy(counterCalls(faulty.Only(faulty.Script(faulty.Pass, faulty.Hold, faulty.Refuse), faulty.MethodPut)))
	reqs := credits(3, "g")
	out := r.runGroup(l, "lead", reqs, nil)
	for i, a := range out[1:] {
		require.ErrorIs(t, a.err, crdt.ErrAmbiguousWrite, "call %d", i)
		require.ErrorIs(t, a.err, crdt.ErrUnavailable, "call %d", i)
	}
	require.True(t, l.Pending())
	require.NoError(t, r.st.DeliverAll())
	require.Equal(t, 1+sumOf(reqs), r.stored().Value(), "the held write landed: it was not a refusal")
}

// Members that the group's write does not decide: a duplicate within the
// group (Duplicate, after the first Applied), a conflicting amount (only
// that member fails), a transaction already stored (Duplicate), a
// transaction older than the retry window (crdt.ErrOutsideWindow) and one
// recorded with another amount (crdt.ErrConflictingTransaction), which
// their records refuse, only that member; and invalid input, which never
// queues.
func TestGroupCommitMembersJudgedAlone(t *testing.T) {
	r := newGroupRig(t)
	stamp := func(x crdt.TxnID) (time.Time, bool) {
		if x == "old" {
			return time.Unix(1, 0), true
		}
		var n int
		_, err := fmt.Sscanf(string(x), "t%d", &n)
		return time.Unix(int64(1000+n), 0), err == nil && n > 0
	}
	opts := ledger.Options{Counter: tpncounter.Options{HistoryLength: 2, FoldedLength: 2, TxnTime: stamp},
		Clock: func() time.Time { return time.Unix(2000, 0) }, RetryWindow: 1000 * time.Second} // "old" is outside
	l := r.ledger(opts)
	ctx := context.Background()
	// t1..t6 one at a time: t1 and t2 are forgotten, the horizon is 2.
	for i := 1; i <= 6; i++ {
		_, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("t%d", i)), 1000)
		require.NoError(t, err)
	}
	base := int64(6000)
	reqs := []req{
		{txn: "t10", amount: 5},
		{txn: "t11", amount: 3},
		{txn: "t10", amount: 7},   // conflicts with the first
		{txn: "t10", amount: 5},   // a duplicate of the first, in the group
		{txn: "t6", amount: 1000}, // already stored
		{txn: "old", amount: 9},   // never applied, older than the retry window
		{txn: "t1", amount: 9},    // recorded with another amount
	}
	invalid := make(chan error, 1)
	out := r.runGroup(l, "t20", reqs, func() {
		_, err := l.Credit(ctx, "t12", -1)
		invalid <- err
	})
	require.ErrorIs(t, <-invalid, crdt.ErrInvalidAmount)
	require.NoError(t, out[0].err)
	a := out[1:]
	require.NoError(t, a[0].err)
	require.Equal(t, tpncounter.Applied, a[0].res.Outcome)
	require.NoError(t, a[1].err)
	require.Equal(t, tpncounter.Applied, a[1].res.Outcome)
	require.ErrorIs(t, a[2].err, crdt.ErrConflictingTransaction)
	require.ErrorContains(t, a[2].err, fmt.Sprintf("ledger %q: ", l.Key()), "the error names the account")
	require.NoError(t, a[3].err)
	require.Equal(t, tpncounter.Duplicate, a[3].res.Outcome)
	require.True(t, a[3].res.Landed)
	require.NoError(t, a[4].err)
	require.Contains(t, []tpncounter.Outcome{tpncounter.Duplicate, tpncounter.DuplicateFolded}, a[4].res.Outcome)
	require.True(t, a[4].res.Landed)
	require.ErrorIs(t, a[5].err, crdt.ErrOutsideWindow)
	require.ErrorIs(t, a[6].err, crdt.ErrConflictingTransaction)
	require.EqualValues(t, 6+2, r.puts.Load(), "six credits, the lead, one Put for the group")
	want := base + 1 + 5 + 3
	require.Equal(t, want, r.stored().Value())
	require.Equal(t, want, a[0].res.Value)
}

// A waiter whose context ends while it is queued leaves the queue: it gets
// its context's error, and the group is written without it. A member whose
// context ends once its cycle has started stays in it and gets the
// write's answer (the others' write is not failed for it).
func TestGroupCommitCanceledWaiter(t *testing.T) {
	noLeak(t)
	r := newGroupRig(t)
	l := r.ledger(ledger.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reqs := credits(5, "g")
	reqs[2].ctx = ctx
	out := r.runGroup(l, "lead", reqs, func() {
		cancel()
		waitFor(t, func() bool { return ledger.Queued(l) == 4 }, "the canceled call left the queue")
	})
	for i, a := range out[1:] {
		if i == 2 {
			require.ErrorIs(t, a.err, context.Canceled)
			require.Zero(t, a.res.Attempts)
			continue
		}
		require.NoError(t, a.err, "call %d", i)
		require.Equal(t, tpncounter.Applied, a.res.Outcome)
	}
	require.EqualValues(t, 2, r.puts.Load())
	got := r.stored()
	require.Equal(t, 1+sumOf(reqs)-reqs[2].amount, got.Value())
	require.Equal(t, tpncounter.Unknown, got.Status(reqs[2].txn))

	// Canceled after its cycle started (its Put parked): still answered
	// by the write, which lands.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	r.puts.Store(0)
	p1, rel1 := r.armPark()
	p2, rel2 := r.armPark()
	defer rel1()
	defer rel2()
	var wg sync.WaitGroup
	var errs [3]error
	var outs [3]ledger.Result
	run := func(i int, c context.Context, x crdt.TxnID) {
		wg.Add(1)
		go func() { defer wg.Done(); outs[i], errs[i] = l.Credit(c, x, 10) }()
	}
	run(0, context.Background(), "lead2")
	<-p1
	run(1, ctx2, "h1")
	waitFor(t, func() bool { return ledger.Queued(l) == 1 }, "h1 queued")
	run(2, context.Background(), "h2")
	waitFor(t, func() bool { return ledger.Queued(l) == 2 }, "h2 queued")
	rel1()
	<-p2 // the group's cycle is at its Put
	cancel2()
	rel2()
	wg.Wait()
	for i := range errs {
		require.NoError(t, errs[i], "call %d", i)
		require.Equal(t, tpncounter.Applied, outs[i].Outcome)
		require.True(t, outs[i].Landed)
	}
	require.EqualValues(t, 2, r.puts.Load())
	require.Equal(t, got.Value()+30, r.stored().Value())
}

// The Observer sees one event per Update, grouped or not: each member's
// own outcome and attempts; a call that left the queue is reported with
// its context's error and one attempt, as any operation refused before it
// wrote (observe.Event.Attempts).
func TestGroupCommitObserverPerOperation(t *testing.T) {
	r := newGroupRig(t)
	var mu sync.Mutex
	events := map[string]int{}
	attempts := 0
	obs := observe.Func(func(_ context.Context, e observe.Event) {
		mu.Lock()
		defer mu.Unlock()
		events[e.Op+"/"+e.Outcome]++
		if e.Op == "update" {
			attempts += e.Attempts
		}
	})
	l := r.ledger(ledger.Options{Observer: obs})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reqs := credits(4, "g")
	reqs = append(reqs, req{txn: "g0", amount: 1}, req{ctx: ctx, txn: "gone", amount: 1})
	r.runGroup(l, "lead", reqs, func() {
		cancel()
		waitFor(t, func() bool { return ledger.Queued(l) == 5 }, "the canceled call left the queue")
	})
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, map[string]int{
		"update/" + observe.Applied:              1 + 4,
		"update/" + observe.Duplicate:            1,
		"update/" + observe.OutcomeOf(ctx.Err()): 1,
	}, events)
	require.Equal(t, 1+5+1, attempts)
}

// Book and Sharded route through Ledger.Update, so concurrent writes of one
// key (one sub-key) group too.
func TestGroupCommitBookAndSharded(t *testing.T) {
	ctx := context.Background()
	t.Run("book", func(t *testing.T) {
		r := newGroupRig(t)
		b, err := ledger.NewBook(r.st, ledger.BookOptions{Options: ledger.Options{Actor: "a"}})
		require.NoError(t, err)
		parked, release := r.armPark()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = b.Credit(ctx, "k", "lead", 1) }()
		<-parked
		errs := make([]error, 6)
		for i := range errs {
			wg.Add(1)
			go func() { defer wg.Done(); _, errs[i] = b.Credit(ctx, "k", crdt.TxnID(fmt.Sprint("g", i)), 1) }()
			waitFor(t, func() bool { return ledger.QueuedBook(b, "k") == i+1 }, "call %d queued", i)
		}
		release()
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.EqualValues(t, 2, r.puts.Load())
		v, err := b.Value(ctx, "k")
		require.NoError(t, err)
		require.EqualValues(t, 7, v)
	})
	t.Run("sharded", func(t *testing.T) {
		r := newGroupRig(t)
		s, err := ledger.NewSharded(r.st, "acct", 2, ledger.Options{Actor: "a", Backoff: ledger.Backoff{Initial: -1}})
		require.NoError(t, err)
		var txns []crdt.TxnID
		for i := 0; len(txns) < 7; i++ {
			if x := crdt.TxnID(fmt.Sprint("s", i)); s.Shard(x) == 0 {
				txns = append(txns, x)
			}
		}
		other := crdt.TxnID("s-other")
		for i := 0; s.Shard(other) != 1; i++ {
			other = crdt.TxnID(fmt.Sprint("s-other", i))
		}
		_, err = s.Credit(ctx, other, 1) // writes the layout marker
		require.NoError(t, err)
		r.puts.Store(0)
		parked, release := r.armPark()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = s.Credit(ctx, txns[0], 1) }()
		<-parked
		errs := make([]error, len(txns)-1)
		for i := range errs {
			wg.Add(1)
			go func() { defer wg.Done(); _, errs[i] = s.Credit(ctx, txns[1+i], 1) }()
			waitFor(t, func() bool { return ledger.QueuedSharded(s, 0) == i+1 }, "call %d queued", i)
		}
		release()
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.EqualValues(t, 2, r.puts.Load())
		v, err := s.Value(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 1+len(txns), v)
	})
}

// A group whose state would be larger than a store accepts
// (store.MaxValue): each call whose Apply would pass it fails with
// crdt.ErrTooLarge alone and changes nothing; the first is written.
func TestGroupCommitTooLargeFailsOnlyTheLast(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a state of 8 MiB")
	}
	ctx := context.Background()
	opts := tpncounter.Options{HistoryLength: 1024, FoldedLength: 1024}
	id := func(actor, i, n int) crdt.TxnID {
		x := fmt.Sprintf("a%d-%d-", actor, i)
		return crdt.TxnID(x + strings.Repeat("x", n-len(x)))
	}
	// A filler state: 2048 transactions of 250-byte ids per actor, until
	// only a little room is left below the ledger's cap on Apply.
	limit := store.MaxValue - ledger.WriteRoom(opts)
	c, err := tpncounter.New(opts)
	require.NoError(t, err)
	size := func() int {
		b, err := c.MarshalBinary()
		require.NoError(t, err)
		return len(b)
	}
	actor, n := 0, 0
	for room := limit - size(); room > 600; room = limit - size() {
		// Add about room/260 items, at most what fits the actor's window.
		for k := max(1, (room-500)/260); k > 0; k-- {
			if n == 2048 {
				actor, n = actor+1, 0
			}
			_, err := c.Apply(crdt.ActorID(fmt.Sprint("filler", actor)), id(actor, n, 250), 1)
			require.NoError(t, err)
			n++
		}
	}
	b, err := c.MarshalBinary()
	require.NoError(t, err)
	room := limit - len(b)
	require.True(t, room > 100 && room <= 600, "room %d", room)
	r := newGroupRigWith(t, faulty.Options{History: -1})
	require.NoError(t, r.inner.Put(ctx, "k", "filler", b, nil))
	l := r.ledger(ledger.Options{Counter: opts})
	// The lead's entry takes a few dozen bytes; the first call then fits
	// in what is left, and no second one does.
	first := max(1, room-120)
	reqs := []req{
		{txn: crdt.TxnID(strings.Repeat("f", min(first, 200))), amount: 5},
		{txn: crdt.TxnID(strings.Repeat("s", 250)), amount: 7},
		{txn: crdt.TxnID(strings.Repeat("t", 250)), amount: 9},
	}
	out := r.runGroup(l, "l", reqs, nil)
	require.NoError(t, out[0].err)
	require.NoError(t, out[1].err)
	require.Equal(t, tpncounter.Applied, out[1].res.Outcome)
	require.True(t, out[1].res.Landed)
	require.ErrorIs(t, out[2].err, crdt.ErrTooLarge)
	require.ErrorIs(t, out[3].err, crdt.ErrTooLarge)
	require.EqualValues(t, 2, r.puts.Load())
	got := r.stored()
	require.Equal(t, c.Value()+1+5, got.Value())
	require.Equal(t, tpncounter.Unknown, got.Status(reqs[1].txn))
	require.Equal(t, tpncounter.Unknown, got.Status(reqs[2].txn))
	// Alone, each of the others is refused too: the state is full.
	_, err = l.Credit(ctx, reqs[1].txn, 7)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
}

// panicStore panics in the Puts it is told to.
type panicStore struct {
	*faulty.Siblings
	panics atomic.Int64
}

func (p *panicStore) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	if !ledger.IsRecordKey(key) && p.panics.Add(-1) >= 0 {
		panic("store panicked")
	}
	return p.Siblings.Put(ctx, key, actor, value, token)
}

// A cycle that panics (in the store) does not leave the Ledger locked: the
// leader's caller gets the panic, the others crdt.ErrAmbiguousWrite (their
// transactions may be in the ledger's state), and the Ledger goes on.
func TestGroupCommitPanicInCycle(t *testing.T) {
	noLeak(t)
	ctx := context.Background()
	r := newGroupRig(t)
	ps := &panicStore{Siblings: r.st}
	l, err := ledger.New(ps, "k", ledger.Options{Actor: "a", Backoff: ledger.Backoff{Initial: -1}})
	require.NoError(t, err)
	parked, release := r.armPark()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _, _ = l.Credit(ctx, "lead", 1) }()
	<-parked
	ps.panics.Store(1) // the group's Put
	errs := make([]error, 3)
	var recovered atomic.Value
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					recovered.Store(p)
				}
			}()
			_, errs[i] = l.Credit(ctx, crdt.TxnID(fmt.Sprint("p", i)), 1)
		}()
		waitFor(t, func() bool { return ledger.Queued(l) == i+1 }, "call %d queued", i)
	}
	release()
	wg.Wait()
	require.Equal(t, "store panicked", recovered.Load())
	n := 0
	for _, err := range errs {
		if err != nil {
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			n++
		}
	}
	require.Equal(t, 2, n, "the two calls led by the panicking one")
	// The ledger is free; resends land each once.
	for i := range errs {
		_, err := l.Credit(ctx, crdt.TxnID(fmt.Sprint("p", i)), 1)
		require.NoError(t, err)
	}
	require.EqualValues(t, 4, r.stored().Value())

	// Without grouping (MaxGroup 1) the same: the panic reaches the
	// caller, and the ledger does not take its unwritten state for stored.
	l1, err := ledger.New(ps, "k", ledger.Options{Actor: "b", MaxGroup: 1})
	require.NoError(t, err)
	ps.panics.Store(1)
	require.PanicsWithValue(t, "store panicked", func() { _, _ = l1.Credit(ctx, "q", 1) })
	res, err := l1.Credit(ctx, "q", 1)
	require.NoError(t, err)
	require.True(t, res.Landed)
	require.EqualValues(t, 5, r.stored().Value())
}

// Ambiguous, then the retry's Fetch refused: the same, the pending write
// may still land.
func TestGroupCommitAmbiguousThenFetchRefused(t *testing.T) {
	r := newGroupRig(t)
	l := r.ledger(ledger.Options{RetryCount: 1})
	// The lead's Fetch and Put, the group's Fetch and Put (held), the
	// retry's Fetch (refused).
	r.st.SetPolicy(counterCalls(faulty.Script(faulty.Pass, faulty.Pass, faulty.Pass, faulty.Hold, faulty.Refuse)))
	reqs := credits(3, "g")
	out := r.runGroup(l, "lead", reqs, nil)
	require.NoError(t, out[0].err)
	for i, a := range out[1:] {
		require.ErrorIs(t, a.err, crdt.ErrAmbiguousWrite, "call %d", i)
		require.ErrorIs(t, a.err, crdt.ErrUnavailable, "call %d", i)
	}
	require.True(t, l.Pending())
}

// counterCalls confines p to the ledger's own keys: the calls on
// transaction records (ledger.IsRecordKey) pass untouched.
func counterCalls(p faulty.Policy) faulty.Policy {
	return faulty.Keys(p, func(k string) bool { return !ledger.IsRecordKey(k) })
}

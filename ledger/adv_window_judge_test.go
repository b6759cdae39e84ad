package ledger_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// watchedElsewhere: b opens the account and a credits a0; a's group of x
// and w is held; the caller retries x on b, which counts it and credits
// y0, y1, then y2 in a write held too (b's copy of x forgotten once it
// lands).
func watchedElsewhere(t *testing.T) (mem *memory.Siblings, clock *fakeClock, la, lb *lane, a, b *ledger.Ledger, run *limitRun) {
	t.Helper()
	mem = memory.NewSiblings()
	clock = newFakeClock(time.Unix(1_800_000_000, 0))
	la = newLane(mem)
	oa := limitOptions(clock, "a", -1)
	oa.MaxGroup = 2
	a, err := ledger.New(la, advKey, oa)
	require.NoError(t, err)
	lb, b = limitLedger(t, mem, clock, "b", -1)
	run = &limitRun{t: t}
	run.upd(b, "open", 1000, tpncounter.Applied)
	run.upd(a, "a0", 1, tpncounter.Applied)
	heldGroup(t, la, a, "a0", 1, []crdt.TxnID{"x", "w"}, []int64{5, 9})
	run.upd(b, "x", 5, tpncounter.Applied)
	run.upd(b, "y0", 1, tpncounter.Applied)
	run.upd(b, "y1", 1, tpncounter.Applied)
	lb.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
	_, err = b.Update(context.Background(), "y2", 1)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	lb.plan.set(nil, nil, nil)
	return mem, clock, la, lb, a, b, run
}

// TestWatchJudgedAtItsTime (found by a review): a (MaxGroup 2) applies x
// and w in one write, held in flight. b applies x, y0, y1, then y2 in a
// write from a read without a's copy, which forgets x (counting it) and
// is held. a's held write lands (a's copy counts: the smaller id); a's
// Find owes x's record, and settling it finds b holding x: the copies
// meet, and a watches x. gap later b's held write lands and a's next read
// finds b no longer holding x; judged against the records live when the
// copies met, b's record says b counted it, and a takes its copy out: x
// counts once. Judged at the read, past the window (25h), b's record was
// dead, the watch ended and x counted twice for good. After 5 days 1 hour
// a's read drops its state and takes a new incarnation, and the watch of
// the earlier incarnation's copy ends: x counts twice, the limit SPEC.md
// 6.11 states (found by a review).
func TestWatchJudgedAtItsTime(t *testing.T) {
	for _, gap := range []time.Duration{time.Hour, 25 * time.Hour, 5*24*time.Hour + time.Hour} {
		t.Run(fmt.Sprintf("gap=%v", gap), func(t *testing.T) {
			ctx := context.Background()
			mem, clock, la, lb, a, b, run := watchedElsewhere(t)
			require.True(t, holdsAny(stored(t, mem), "b", "x"), "the store still shows b holding x")

			require.NoError(t, la.Deliver(0))
			la.DropHeld()
			run.want += 9 // w
			_, err := a.Find(ctx)
			require.NoError(t, err)
			unwritten, watching := ledger.Holding(a)
			t.Logf("after a's Find: unwritten %v watching %v", unwritten, watching)
			_, err = a.Find(ctx)
			require.NoError(t, err)
			unwritten, watching = ledger.Holding(a)
			t.Logf("after a's second Find: unwritten %v watching %v", unwritten, watching)

			clock.Add(gap)
			require.NoError(t, lb.Deliver(0)) // b's write lands, forgetting x
			lb.DropHeld()
			run.want += 1 // y2
			st := stored(t, mem)
			t.Logf("after b's write: b holds x %v, a holds x %v, value %d, want %d", holdsAny(st, "b", "x"), holdsAny(st, "a", "x"), st.Value(), run.want)
			run.settle(a, b)
			if gap > 25*time.Hour {
				require.Equal(t, run.want+5, stored(t, mem).Value(), "the stated limit: x counts twice")
				return
			}
			require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
		})
	}
}

// heldGroup runs txns on l as one group whose put (both attempts) ln
// holds: a duplicate call of dup blocks in its fetch while they queue.
func heldGroup(t *testing.T, ln *lane, l *ledger.Ledger, dup crdt.TxnID, dupAmount int64, txns []crdt.TxnID, amounts []int64) {
	t.Helper()
	ctx := context.Background()
	release := make(chan struct{})
	var armed atomic.Bool
	armed.Store(true)
	ln.mu.Lock()
	ln.before = func(method, key string) {
		if method == faulty.MethodFetch && !ledger.IsRecordKey(key) && armed.CompareAndSwap(true, false) {
			<-release
		}
	}
	ln.mu.Unlock()
	done := make(chan error, 1)
	go func() { _, err := l.Update(ctx, dup, dupAmount); done <- err }()
	waitFor(t, func() bool { return !armed.Load() }, "%s's fetch of the account", dup)
	errs := make(chan error, len(txns))
	for i, x := range txns {
		go func() { _, err := l.Update(ctx, x, amounts[i]); errs <- err }()
		waitFor(t, func() bool { return ledger.Queued(l) >= i+1 }, "%d calls queued", i+1)
	}
	ln.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
	close(release)
	require.NoError(t, <-done)
	for range txns {
		require.ErrorIs(t, <-errs, crdt.ErrAmbiguousWrite)
	}
	ln.plan.set(nil, nil, nil)
	ln.mu.Lock()
	ln.before = nil
	ln.mu.Unlock()
}

// holdsAny reports whether a live entry of an incarnation of actor holds x.
func holdsAny(st *tpncounter.Counter, actor string, x crdt.TxnID) bool {
	for w := range st.LiveActors() {
		if len(w) >= len(actor) && string(w[:len(actor)]) == actor {
			for y := range st.Transactions(w) {
				if y == x {
					return true
				}
			}
		}
	}
	return false
}

// TestOwedRecordOfAnEarlierIncarnation (found by a review):
// TestOwedRecordJudgedAtItsTime (a: RetireAfter 1h, RetiredGrace 10 days)
// with longer gaps. Past RetireAfter + RetiredGrace/2 (5 days 1 hour)
// renewStale gives a a new incarnation, so the owed record names the
// earlier one and is judged as another writer's: counted by b. a takes the
// earlier incarnation's late copy out (its read shows that entry as last
// known stored): x counts once. Before, nothing took it out (+5).
func TestOwedRecordOfAnEarlierIncarnation(t *testing.T) {
	for _, gap := range []time.Duration{5*24*time.Hour + 59*time.Minute, 5*24*time.Hour + 61*time.Minute, 11 * 24 * time.Hour} {
		t.Run(fmt.Sprintf("gap=%v", gap), func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			la, a := limitLedger(t, mem, clock, "a", time.Hour)
			_, b := limitLedger(t, mem, clock, "b", -1)
			run := &limitRun{t: t}
			run.upd(b, "open", 1000, tpncounter.Applied)
			run.upd(a, "a0", 1, tpncounter.Applied)
			la.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
			_, err := a.Update(ctx, "x", 5)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			la.plan.set(nil, nil, nil)
			run.upd(b, "x", 5, tpncounter.Applied)
			for i := range 3 {
				run.upd(b, crdt.TxnID(fmt.Sprintf("y%d", i)), 1, tpncounter.Applied)
			}
			require.NoError(t, la.Deliver(0))
			la.DropHeld()
			_, err = a.Find(ctx)
			require.NoError(t, err)
			unwritten, _ := ledger.Holding(a)
			require.True(t, unwritten, "x's record owed")
			w0 := a.Writer()

			clock.Add(gap)
			run.upd(a, "w", 9, tpncounter.Applied)
			t.Logf("a's writer: %s -> %s", w0, a.Writer())
			run.settle(a, b)
			require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
		})
	}
}

// TestGraceDropCarryAcrossAFoldedHalf (found by a review): a
// (RetireAfter 1h, RetiredGrace 2h) credits a0; an hour later r retires
// a's credit half. a debits x in a write held in flight; b debits x and
// three more, forgetting it; a's held write lands, a late copy. a's debit
// w owes x's record, and a Find takes the late copy out, its writes
// refused. Two hours later r folds a's retired credit half and retires
// the debit half with a's late copy of x left out (SPEC.md 6.9).
// a's next read drops its state and carries the take-out at the entry's
// version, both halves' seqs; the store now shows the entry below it (its
// credit half folded), so retake keeps it as if the read were stale, but
// only to RetiredGrace after the take-out, so a then holds nothing
// unwritten (a Book may evict it; before, it held the carry for good).
// Until r's pass retired the debit half with the late copy left out, x
// counted twice here.
func TestGraceDropCarryAcrossAFoldedHalf(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la := newLane(mem)
	a := graceLedger(t, la, clock, "a")
	bo := limitOptions(clock, "b", -1)
	bo.RetiredGrace = 2 * time.Hour // one grace for the account (SPEC.md 6.10)
	b, err := ledger.New(mem, advKey, bo)
	require.NoError(t, err)
	r := graceLedger(t, mem, clock, "r")
	run := &limitRun{t: t}
	run.upd(b, "open", 1000, tpncounter.Applied)
	run.upd(a, "a0", 1, tpncounter.Applied)
	clock.Add(61 * time.Minute)
	run.upd(b, "b1", 1, tpncounter.Applied)
	run.upd(r, "r1", 1, tpncounter.Applied) // retires a (P)
	st := stored(t, mem)
	t.Logf("after r1: a's version %d", st.Version(a.Writer()))

	la.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
	_, err = a.Update(ctx, "x", -5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	la.plan.set(nil, nil, nil)
	run.upd(b, "x", -5, tpncounter.Applied)
	for i := range 3 {
		run.upd(b, crdt.TxnID(fmt.Sprintf("y%d", i)), -1, tpncounter.Applied)
	}
	require.NoError(t, la.Deliver(0))
	la.DropHeld()
	require.Equal(t, run.want-5, stored(t, mem).Value(), "a's late copy counts x a second time")
	run.upd(a, "w", -9, tpncounter.Applied) // x's record owed
	la.plan.set(repeat(faulty.Refuse, 4), nil, nil)
	_, err = a.Find(ctx) // takes the late copy out; its writes refused
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	la.plan.set(nil, nil, nil)
	unwritten, _ := ledger.Holding(a)
	require.True(t, unwritten, "the take-out is not written")
	w0 := a.Writer()
	t.Logf("a's version stored %d", stored(t, mem).Version(w0))

	clock.Add(2*time.Hour + time.Minute)
	run.upd(b, "b2", 1, tpncounter.Applied)
	run.upd(r, "r2", 1, tpncounter.Applied) // folds a's retired P
	st = stored(t, mem)
	t.Logf("after r2: a's version %d, live %v", st.Version(w0), holdsAny(st, "a", "x"))

	for range 3 {
		_, err = a.Find(ctx)
		require.NoError(t, err)
		clock.Add(time.Minute)
	}
	unwritten, _ = ledger.Holding(a)
	t.Logf("after three Finds: a holds an unwritten take-out %v; a's old entry holds x %v", unwritten, holdsAny(stored(t, mem), string(w0), "x"))
	require.False(t, unwritten, "RetiredGrace after the take-out, the carry is dropped")
	require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
	clock.Add(2*time.Hour + time.Minute)
	run.settle(a, b, r)
	require.Equal(t, run.want, stored(t, mem).Value(), "and after later folds")
}

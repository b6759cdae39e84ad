package ledger_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestOwedRecordJudgedAtItsTime (found by the ledger-grace-late scope): a's
// call of x is held; b applies x (its record names b) and three more,
// forgetting x; a's held put lands late, and a's Find learns it: x's
// record is owed. a's next call comes after the retry window, when b's
// record of x is dead. The owed record is judged against the records live
// when it was owed, so a finds b counted x and takes its late copy out: x
// counts once. Judged against those live at the call, it found none,
// named a's copy over b's dead record, and x counted twice for good.
func TestOwedRecordJudgedAtItsTime(t *testing.T) {
	for _, gap := range []time.Duration{25 * time.Hour, 5*24*time.Hour + time.Minute} {
		t.Run(fmt.Sprintf("gap=%v", gap), func(t *testing.T) {
			ctx := context.Background()
			mem, clock, la, a, b, run := limitPair(t, time.Hour)
			retriedElsewhere(t, la, a, b, run, faulty.Hold)
			require.NoError(t, la.Deliver(0))
			la.DropHeld()
			_, err := a.Find(ctx)
			require.NoError(t, err)
			unwritten, _ := ledger.Holding(a)
			require.True(t, unwritten, "x's record owed")
			require.Equal(t, run.want+5, stored(t, mem).Value(), "a's late copy counts x a second time")

			clock.Add(gap)
			run.upd(a, "w", 9, tpncounter.Applied)
			run.settle(a, b)
			require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
		})
	}
}

// TestPendingWriteJudgedAtItsTime (the same hole as
// TestOwedRecordJudgedAtItsTime, found reading it): a's call of x is lost
// (ambiguous, its write pending); the caller retries x on b, which counts
// it and forgets it. a's next call comes gap later: its read does not hold
// x, and x's record names b, so a takes x out of its pending write before
// sending it again (SPEC.md 6.11 step 4). Past the retry window b's record
// is dead at the call, but live when a applied x, which is when a judges
// it: x counts once. Judged at the call, a found no record, sent x again,
// and x counted twice (+5 at 25 hours and at 4 days).
func TestPendingWriteJudgedAtItsTime(t *testing.T) {
	for _, gap := range []time.Duration{time.Hour, 25 * time.Hour, 4 * 24 * time.Hour} {
		t.Run(fmt.Sprintf("gap=%v", gap), func(t *testing.T) {
			mem, clock, la, a, b, run := limitPair(t, time.Hour)
			retriedElsewhere(t, la, a, b, run, faulty.Lose)
			require.True(t, a.Pending(), "x's write in doubt")
			clock.Add(gap)
			run.upd(a, "w", 9, tpncounter.Applied)
			run.settle(a, b)
			require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
		})
	}
}

// TestPendingWriteJudgedAtItsTimeDefaults: TestPendingWriteJudgedAtItsTime
// with the default options (RetryCount 3, history, RetryWindow 24h): a's
// call of x is lost, the caller retries it on b, which counts it and sixty
// credits later has forgotten it; a's next call comes 25 hours later and
// takes x out of its write in doubt: x counts once. Judged at that call,
// b's record was dead and x counted twice.
func TestPendingWriteJudgedAtItsTimeDefaults(t *testing.T) {
	for _, gap := range []time.Duration{time.Hour, 25 * time.Hour} {
		t.Run(fmt.Sprintf("gap=%v", gap), func(t *testing.T) {
			mem, clock, a, b, run := pendingElsewhere(t)
			clock.Add(gap)
			run.upd(a, "w", 9, tpncounter.Applied)
			run.settle(a, b)
			require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
		})
	}
}

// pendingElsewhere: with the defaults, b opens the account and a credits
// a0; a's write of x is lost (pending, answered ambiguous), the caller
// retries x on b, which records it, then b credits 60 more.
func pendingElsewhere(t *testing.T) (*memory.Siblings, *fakeClock, *ledger.Ledger, *ledger.Ledger, *limitRun) {
	t.Helper()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la := newLane(mem)
	opts := func(n crdt.ActorID) ledger.Options {
		return ledger.Options{Actor: n, Clock: clock.Now, Backoff: ledger.Backoff{Initial: -1}}
	}
	a, err := ledger.New(la, advKey, opts("a"))
	require.NoError(t, err)
	b, err := ledger.New(mem, advKey, opts("b"))
	require.NoError(t, err)
	run := &limitRun{t: t}
	run.upd(b, "open", 1000, tpncounter.Applied)
	run.upd(a, "a0", 1, tpncounter.Applied)
	la.plan.set(repeat(faulty.Lose, 4), nil, nil)
	_, err = a.Update(context.Background(), "x", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	la.plan.set(nil, nil, nil)
	run.upd(b, "x", 5, tpncounter.Applied)
	for i := range 60 {
		run.upd(b, crdt.TxnID(fmt.Sprintf("y%d", i)), 1, tpncounter.Applied)
	}
	return mem, clock, a, b, run
}

// retriedElsewhere: b opens the account and a credits a0; a's call of x
// fails ambiguous, both its puts under fault (held or lost: its write
// pending); the caller retries x on b, which counts it and, three
// credits on, forgets it (History and Folded length 1).
func retriedElsewhere(t *testing.T, la *lane, a, b *ledger.Ledger, run *limitRun, fault faulty.Fault) {
	t.Helper()
	run.upd(b, "open", 1000, tpncounter.Applied)
	run.upd(a, "a0", 1, tpncounter.Applied)
	la.plan.set([]faulty.Fault{fault, fault}, nil, nil)
	_, err := a.Update(context.Background(), "x", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	la.plan.set(nil, nil, nil)
	run.upd(b, "x", 5, tpncounter.Applied)
	for i := range 3 {
		run.upd(b, crdt.TxnID(fmt.Sprintf("y%d", i)), 1, tpncounter.Applied)
	}
}

// limitPair makes ledgers a (RetireAfter retire) and b (never retiring)
// on one memory store, with the limit tests' options and clock.
func limitPair(t *testing.T, retire time.Duration) (*memory.Siblings, *fakeClock, *lane, *ledger.Ledger, *ledger.Ledger, *limitRun) {
	t.Helper()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la, a := limitLedger(t, mem, clock, "a", retire)
	_, b := limitLedger(t, mem, clock, "b", -1)
	return mem, clock, la, a, b, &limitRun{t: t}
}

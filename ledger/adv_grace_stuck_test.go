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

// TestPendingWriteAfterTheOtherEntryFolds (found by a review): every
// ledger of the key has RetiredGrace 2h (r: RetireAfter 1h). a's call of x
// is lost (its write pending); the caller retries x on b, which counts it
// and forgets it. a's reads of the account are then stale every 30
// minutes (they succeed, so a keeps its write in doubt), showing b before
// it applied x: unavailable. r retires b's idle entry and folds it. a's
// next fresh read judges x against the records live when a applied it:
// b's record, whose entry the read holds at no version, folded into a
// base with a later cutoff, counted it (as step 3's judgement has it), and
// a takes x out and writes. Judged stale, every later call failed, 33
// hours on. The value is not checked: reads stale for longer than the
// grace period break SPEC.md 6.10's assumption, and a's pending state
// brings b's folded entry back.
func TestPendingWriteAfterTheOtherEntryFolds(t *testing.T) {
	ctx := context.Background()
	mem, clock, la, a, b, r, run := graceTrio(t)
	var err error
	retriedElsewhere(t, la, a, b, run, faulty.Lose)
	require.True(t, a.Pending(), "x's write in doubt")
	b0 := b.Writer()

	cutOff := func() {
		clock.Add(30 * time.Minute)
		la.plan.set(nil, repeat(faulty.StaleBy(faulty.MaxStaleness), 2), nil)
		_, err := a.Value(ctx)
		require.ErrorIs(t, err, crdt.ErrUnavailable)
		la.plan.set(nil, nil, nil)
		t.Logf("cut off: a pending %v writer %s", a.Pending(), a.Writer())
	}
	cutOff()
	cutOff()
	clock.Add(time.Minute)
	run.upd(r, "r1", 1, tpncounter.Applied) // retires b's (and a's) idle entries
	for range 4 {
		cutOff()
	}
	clock.Add(5 * time.Minute)
	run.upd(r, "r2", 1, tpncounter.Applied) // folds them
	st := stored(t, mem)
	t.Logf("after r2: b0 version %d, value %d want %d", st.Version(b0), st.Value(), run.want)
	require.Zero(t, st.Version(b0), "b's entry folded")

	for i := range 50 { // a's calls every 40 minutes, 33 hours
		clock.Add(40 * time.Minute)
		_, err = a.Update(ctx, crdt.TxnID(fmt.Sprintf("w%d", i)), 1)
		if err == nil {
			run.want++
		}
		if i%10 == 0 || i == 49 {
			t.Logf("a's call %d (%v after r2): %v", i, time.Duration(i+1)*40*time.Minute, err)
		}
	}
	t.Logf("value %d want %d (x counts: +5 over want if twice), a pending %v", stored(t, mem).Value(), run.want, a.Pending())
	require.NoError(t, err, "33 hours on, a's calls succeed")
}

// graceTrio makes a and b (never retiring) and r (RetireAfter 1h) on one
// memory store, all with RetiredGrace 2h, a on a lane of its own.
func graceTrio(t *testing.T) (*memory.Siblings, *fakeClock, *lane, *ledger.Ledger, *ledger.Ledger, *ledger.Ledger, *limitRun) {
	t.Helper()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	opts := func(name crdt.ActorID) ledger.Options {
		o := limitOptions(clock, name, -1)
		o.RetiredGrace = 2 * time.Hour
		return o
	}
	la := newLane(mem)
	a, err := ledger.New(la, advKey, opts("a"))
	require.NoError(t, err)
	b, err := ledger.New(mem, advKey, opts("b"))
	require.NoError(t, err)
	return mem, clock, la, a, b, graceLedger(t, mem, clock, "r"), &limitRun{t: t}
}

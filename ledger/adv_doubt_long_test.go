package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestLongDoubtTakenOutBeforeItMeets (found by the restarts simulation
// with reads lagging by at most RetireAfter/2, seed 166): a's write of x
// is lost, so x stays in a's pending write, in doubt. The caller's retry
// of x is applied by b and recorded. After more than RetireAfter a sends
// its write again: sent with x, its copy meets b's, and a's pass records
// x as a's (the copy that counts in its state), while c, whose read
// does not show a's write yet, retires b, idle for RetireAfter by then,
// with x counted in b's total. x then counts twice for good: a's copy
// finds a record naming a and stays. A copy in doubt for RetireAfter/2
// is now judged by its records even when the store holds the
// transaction, and taken out (SPEC.md 6.11 step 4).
func TestLongDoubtTakenOutBeforeItMeets(t *testing.T) {
	got, want := longDoubtRace(t)
	require.Equal(t, want, got, "each transaction counted once")
}

// longDoubtRace runs the schedule of TestLongDoubtTakenOutBeforeItMeets
// and returns the value it leaves and the one it should.
func longDoubtRace(t *testing.T) (got, want int64) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la, a := limitLedger(t, mem, clock, "a", 10*time.Minute)
	_, b := limitLedger(t, mem, clock, "b", -1)
	lc, c := limitLedger(t, mem, clock, "c", 10*time.Minute)
	require.Less(t, a.Writer(), b.Writer())
	run := &limitRun{t: t}
	upd := run.upd
	upd(c, "open", 1000, tpncounter.Applied)
	upd(a, "a0", 1, tpncounter.Applied) // a's entry stored at version 1

	la.plan.set([]faulty.Fault{faulty.Lose, faulty.Lose}, nil, nil)
	_, err := a.Update(ctx, "x", 7)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "x in doubt on a")

	clock.Add(11 * time.Minute)
	upd(b, "x", 7, tpncounter.Applied)  // the retry
	upd(c, "c1", 1, tpncounter.Applied) // c first sees b
	clock.Add(11 * time.Minute)
	_, err = a.Find(ctx) // a's pending write sent again
	require.NoError(t, err)
	lc.plan.set(nil, []faulty.Fault{faulty.StaleBy(1)}, nil)
	upd(c, "c2", 1, tpncounter.Applied) // c's pass reads the state before a's write
	run.settle(a, b, c)
	return stored(t, mem).Value(), run.want
}

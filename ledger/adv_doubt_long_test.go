package ledger_test

import (
	"context"
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

// TestLongDoubtTakenOutBeforeItMeets (found by the restarts simulation
// with reads lagging by at most RetireAfter/2, seed 166): a's write of x
// is lost, so x stays in a's pending write, in doubt. The caller's retry
// of x is applied by b and recorded. After more than RetireAfter a sends
// its write again: sent with x, its copy meets b's, and a's pass records
// x as a's (the copy that counts in its state), while c, whose read
// does not show a's write yet, retires b, idle for RetireAfter by then,
// with x counted in b's total. x then counted twice for good: a's copy
// found a record naming a and stayed. A pass now records nothing for a
// writer whose copy yields to this ledger's copy in doubt (SPEC.md 6.11
// step 5), so a's copy, which would count beside b's and so is kept
// (step 4), counts twice only until a reads again: it finds b retired
// at the version of x's record and takes its copy out.
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

// TestLongDoubtKeptWhenItWouldCount (found by the retirement simulation
// at 200,000 schedules, seeds 5172422352764152584 and
// 4761820710969227613): a's write of x lands but a is not told, so x
// stays in a's pending write, in doubt. b had applied the caller's retry
// of x first, from a read without a's copy, and recorded it. b then reads
// both copies: a's counts (the smaller id), so b gives its own up,
// recording x as a's, but that record's Put is lost, so b owes it. After
// RetireAfter/2, a reads one state stale, b's copy without its own: the
// only record names b at the version read. a's copy would count beside
// b's, so a keeps it (SPEC.md 6.11 step 4). Taken out, as a did before,
// x was counted by no one once b wrote its owed record and took its own
// copy out.
func TestLongDoubtKeptWhenItWouldCount(t *testing.T) {
	got, want := longDoubtGiveUpRace(t, true)
	require.Equal(t, want, got, "each transaction counted once")
}

// longDoubtGiveUpRace runs the schedule of TestLongDoubtKeptWhenItWouldCount
// and returns the value it leaves and the one it should. Without stale,
// a's last read is fresh (TestLongDoubtKeptBesideItsOwnLandedCopy).
func longDoubtGiveUpRace(t *testing.T, stale bool) (got, want int64) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la, a := limitLedger(t, mem, clock, "a", time.Hour)
	lb, b := limitLedger(t, mem, clock, "b", time.Hour)
	require.Less(t, a.Writer(), b.Writer())
	run := &limitRun{t: t}
	upd := run.upd
	upd(a, "a0", 1, tpncounter.Applied)
	upd(b, "b0", 1, tpncounter.Applied)

	// a's put of x is held, its second attempt's lost: x in doubt on a.
	la.plan.set([]faulty.Fault{faulty.Hold, faulty.Lose}, nil, nil)
	_, err := a.Update(ctx, "x", 7)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "x in doubt on a")
	upd(b, "x", 7, tpncounter.Applied) // the retry, recorded naming b
	la.plan.set([]faulty.Fault{faulty.Lose, faulty.Lose}, nil, nil)
	_, err = a.Find(ctx) // reads b's copy; sends x again, lost
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.NoError(t, la.Deliver(0)) // a's held put lands: two copies
	require.True(t, a.Pending())

	// b gives its copy up to a's; its record of that is lost.
	lb.plan.set(nil, nil, []faulty.Fault{faulty.Lose})
	_, err = b.Update(ctx, "b1", 1)
	require.Error(t, err, "b owes the record of x naming a")

	clock.Add(31 * time.Minute)
	if stale {
		la.plan.set(nil, []faulty.Fault{faulty.StaleBy(1)}, nil) // the state before a's copy landed
	}
	_, _ = a.Update(ctx, "a1", 1) // fresh: a's earlier copy of x and b's
	run.settle(a, b)
	run.addLanded(mem, "a1", "b1")
	return stored(t, mem).Value(), run.want
}

// TestLongDoubtThreshold: b's copy of x, in doubt, would not count beside
// the retry's copy on a (a's id is smaller). Judged at RetireAfter/2 or
// later, it is taken out of b's pending write by x's record, which names
// a; 1 ns before, it is sent again, meets a's copy and is given up to it,
// with a second record naming a (SPEC.md 6.11 steps 4 and 6). Either way
// x counts once.
func TestLongDoubtThreshold(t *testing.T) {
	for _, tc := range []struct {
		wait    time.Duration
		takeOut bool
	}{{30*time.Minute - time.Nanosecond, false}, {30 * time.Minute, true}, {time.Hour, true}} {
		t.Run(tc.wait.String(), func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			_, a := limitLedger(t, mem, clock, "a", time.Hour)
			lb, b := limitLedger(t, mem, clock, "b", time.Hour)
			require.Less(t, a.Writer(), b.Writer())
			lb.plan.set([]faulty.Fault{faulty.Lose, faulty.Lose}, nil, nil)
			_, err := b.Update(ctx, "x", 7)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "x in doubt on b")
			res, err := a.Update(ctx, "x", 7)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Applied, res.Outcome)
			clock.Add(tc.wait)
			_, err = b.Update(ctx, "y", 1)
			require.NoError(t, err)
			sibs, _, err := mem.Fetch(ctx, ledger.RecordKey(advKey, "x"))
			require.NoError(t, err)
			if tc.takeOut {
				require.Len(t, sibs, 1, "x's own record alone: b's copy was taken out, not given up")
			} else {
				require.Len(t, sibs, 2, "b gave its copy up, recording a's")
			}
			require.Equal(t, int64(8), stored(t, mem).Value())
		})
	}
}

// addLanded adds to want the amount of each of xs that the store holds
// (a call that failed, whose write may or may not have landed).
func (r *limitRun) addLanded(st store.Siblings, xs ...crdt.TxnID) {
	r.t.Helper()
	for _, x := range xs {
		if a, ok := stored(r.t, st).Amount(x); ok {
			r.want += a
		}
	}
}

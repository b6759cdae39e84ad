package ledger_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestStaleRetirementOfARefusedGiveUp is TestStaleRetirement ("x c's
// newest debit") with c's write of y, which carries the give-up's
// take-out of x, refused: c's state is ahead of the store (found by a
// review). r's pass over a stale state (one without a's copy) would
// retire c at its stored version, x counted in c's retired entry, and c,
// reading its entry retired, would continue from the store: x counted
// twice. The pass reads the records of c's copies (c is due) and finds
// the give-up record naming a at a version its read does not show: it
// does not retire c (SPEC.md 6.9).
func TestStaleRetirementOfARefusedGiveUp(t *testing.T) {
	for _, laterDebit := range []bool{false, true} {
		t.Run(fmt.Sprint("laterDebit=", laterDebit), func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			la, lc := newLane(mem), newLane(mem)
			lr, staleNext := staleOnce(mem)
			a := watchLedger(t, la, clock, "a", -1)
			c := watchLedger(t, lc, clock, "c", -1)
			r := watchLedger(t, lr, clock, "r", time.Hour)
			require.Less(t, a.Writer(), c.Writer())
			run := &limitRun{t: t}
			upd := run.upd
			upd(c, "open", 1000, tpncounter.Applied)

			g, done := slowUpdate(la, a, "x", -1)
			upd(c, "x", -1, tpncounter.Applied)
			if laterDebit {
				upd(c, "w", -2, tpncounter.Applied) // c's newest debit: x is not
			}
			upd(r, "r1", 1, tpncounter.Applied)
			landSlow(t, g, done)
			require.Equal(t, run.want, stored(t, mem).Value(), "x counted once while the copies meet")

			// c's call of y gives x up (record x -> a, copy taken out); both
			// puts refused: c's state is ahead of the store.
			lc.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
			_, err := c.Update(ctx, "y", 5)
			require.ErrorIs(t, err, crdt.ErrUnavailable)
			lc.plan.set(nil, nil, nil)

			clock.Add(61 * time.Minute)
			staleNext.Store(true) // r's next account read: one state back
			upd(r, "r2", 1, tpncounter.Applied)
			_, live := maps.Collect(stored(t, mem).LiveActors())[c.Writer()]
			require.True(t, live, "r's pass finds the give-up record newer than its read and does not retire c")

			upd(c, "u", 1, tpncounter.Applied)
			run.settle(a, c, r)
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
		})
	}
}

// TestGiveUpAndSettledTakeOutRetired (found by a review): w's state is
// ahead of the store with a give-up's take-out (x, to a's late copy) and a
// settled one (m, a copy that met z's and that z then counted from stale
// reads). r's pass, reading the records of all w's copies once w is due,
// finds its copy of m late (z counted it) and retires w with it left out
// (SPEC.md 6.9). w's next read finds its entry retired without every copy
// it took out (m's record is live at the retirement's time), so it
// continues from the store: its newer entry, written, would undo the
// retirement and bring back y, whose owner d then forgets, counting y
// twice.
func TestGiveUpAndSettledTakeOutRetired(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la, ld, lw, lz := newLane(mem), newLane(mem), newLane(mem), newLane(mem)
	a := watchLedger(t, la, clock, "a", -1)
	d := watchLedger(t, ld, clock, "d", -1)
	w := watchLedger(t, lw, clock, "w", -1)
	z := watchLedger(t, lz, clock, "z", -1)
	r := watchLedger(t, mem, clock, "r", time.Hour)
	require.Less(t, a.Writer(), w.Writer())
	require.Less(t, d.Writer(), w.Writer())
	require.Less(t, w.Writer(), z.Writer())
	run := &limitRun{t: t}
	upd := run.upd
	upd(r, "open", 1000, tpncounter.Applied)
	_, err := z.Value(ctx) // z's lane records a state without m
	require.NoError(t, err)

	// m: w's copy lands after z's (w < z: w's owns it), meets it, watched.
	gm, doneM := slowUpdate(lw, w, "m", 2)
	upd(z, "m", 2, tpncounter.Applied)
	landSlow(t, gm, doneM)

	// Late copies of x (a's) and y (d's), as in TestGiveUpAheadOfARetirement.
	ga, doneA := slowUpdate(la, a, "x", 3)
	upd(w, "x", 3, tpncounter.Applied)
	gd, doneD := slowUpdate(ld, d, "y", 7)
	upd(w, "y", 7, tpncounter.Applied)
	upd(r, "r1", 1, tpncounter.Applied) // r sees w at its last stored version
	landSlow(t, ga, doneA)

	// z, reading only states without w's copy of m, folds m into its total
	// and forgets it: it counted m.
	lz.plan.set(nil, repeat(faulty.StaleBy(faulty.MaxStaleness), 12), nil)
	for i := range 6 {
		upd(z, crdt.TxnID(fmt.Sprintf("zz%d", i)), 1, tpncounter.Applied)
	}
	lz.plan.set(nil, nil, nil)

	// w's call of u: resettle takes m out (takenOut), cede gives x up
	// (Ahead); both puts refused.
	lw.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
	_, err = w.Update(ctx, "u", 1)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	lw.plan.set(nil, nil, nil)

	landSlow(t, gd, doneD)
	for i := range 2 {
		upd(a, crdt.TxnID(fmt.Sprintf("a%d", i)), 1, tpncounter.Applied)
		upd(d, crdt.TxnID(fmt.Sprintf("d%d", i)), 1, tpncounter.Applied)
	}
	clock.Add(61 * time.Minute)
	upd(r, "r2", 1, tpncounter.Applied)
	_, live := maps.Collect(stored(t, mem).LiveActors())[w.Writer()]
	require.False(t, live, "r's pass retires w, its late copy of m left out")
	for i := 2; i < 6; i++ {
		upd(d, crdt.TxnID(fmt.Sprintf("d%d", i)), 1, tpncounter.Applied)
	}
	upd(w, "v", 1, tpncounter.Applied)
	run.settle(a, d, w, z, r)
	require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
}

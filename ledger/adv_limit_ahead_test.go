package ledger_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// A writer whose entry is ahead of the store, retired (SPEC.md 6.9, 6.10;
// traced from TestAdvWatchRandom, seed 1795968120842447248,
// H=F=1/case1448 and H=F=0/case843): history and folded record of one
// transaction. c lands and records x; a's copy of x, held in its pending
// write, lands later and owns x (a's id is smaller). c's next call is
// refused (its own entry's seq rises past the stored one) or left in doubt
// (its pending write lost, or landing late). An hour on, r retires c at
// its stored seq, and c's copy leaves without counting; a forgets x,
// counting it. After a refusal, c's next read shows its entry retired: it
// drops what is ahead of the store and takes a new incarnation, so x
// counts once. Before, c wrote from its own entry, which won over the
// retired one and still held x: x counted twice (+22). With a write in
// doubt it still does: the limit SPEC.md 6.11 states as "Retirement of a
// writer whose write is in doubt, or that reads stale" (dropping or
// outranking the write in doubt lost other writers' transactions whose
// copies had deferred to it once it landed).
func TestRetiredWriterAheadOfTheStore(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refused bool
		doubt   bool // c's call in doubt instead: its puts held, landing after a forgot x
		before  bool // and before c reads again (the stated limit)
		lost    bool // c's call in doubt instead: its puts lost, never landing
	}{
		{name: "c's refused call raised its seq", refused: true},
		{name: "c's call in doubt, landing after c's next write (the stated limit)", doubt: true},
		{name: "c's call in doubt, landing before c reads (the stated limit)", doubt: true, before: true},
		{name: "c's call in doubt, puts lost (the stated limit)", lost: true},
		{name: "no refused call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			mk := func(name crdt.ActorID, retire time.Duration) (*lane, *ledger.Ledger) {
				return limitLedger(t, mem, clock, name, retire)
			}
			la, a := mk("a", -1)
			lc, c := mk("c", -1)
			_, r := mk("r", time.Hour)
			require.Less(t, a.Writer(), c.Writer())
			run := &limitRun{t: t}
			upd := run.upd
			upd(a, "open", 1000, tpncounter.Applied)
			upd(c, "c0", 1, tpncounter.Applied)

			// c's call of x is slow; a's fetches before it lands.
			gc, doneC := slowUpdate(lc, c, "x", 22)
			ga, doneA := slowUpdate(la, a, "x", 22)
			la.plan.set([]faulty.Fault{faulty.Hold}, nil, nil) // a's first put: in flight
			ansC := landSlow(t, gc, doneC)
			require.Equal(t, tpncounter.Applied, ansC.r.Outcome)
			run.want += 22
			ansA := landSlow(t, ga, doneA)
			t.Logf("a's call of x: %v owner %+v", ansA.r.Outcome, ansA.r.Owner)
			la.DropHeld() // a's first put never lands; its pending write holds x

			if tc.refused {
				lc.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
				_, err := c.Update(ctx, "cy", 1)
				require.ErrorIs(t, err, crdt.ErrUnavailable)
			}
			if tc.lost {
				lc.plan.set([]faulty.Fault{faulty.Lose, faulty.Lose}, nil, nil)
				_, err := c.Update(ctx, "cy", 1)
				require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			}
			if tc.doubt {
				lc.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
				_, err := c.Update(ctx, "cy", 1)
				require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			}

			upd(a, "a1", 1, tpncounter.Applied) // a's copy of x lands with it
			st := stored(t, mem)
			o, _ := st.Owner("x")
			t.Logf("after a1: owner of x %+v; value %d want %d", o, st.Value(), run.want)

			clock.Add(61 * time.Minute)
			upd(a, "a2", 1, tpncounter.Applied)
			upd(r, "r1", 1, tpncounter.Applied) // c idle: recorded and retired
			_, live := maps.Collect(stored(t, mem).LiveActors())[c.Writer()]
			require.False(t, live, "r retired c")
			upd(a, "a3", 1, tpncounter.Applied)
			upd(a, "a4", 1, tpncounter.Applied)
			_, held := maps.Collect(stored(t, mem).Transactions(a.Writer()))["x"]
			t.Logf("a still holds x: %v; value %d want %d", held, stored(t, mem).Value(), run.want)

			if tc.before {
				require.NoError(t, lc.DeliverAll()) // c's puts land late
				run.want++                          // cy, in them
				st := stored(t, mem)
				_, cHolds := maps.Collect(st.Transactions(c.Writer()))["x"]
				t.Logf("c's held puts landed: c holds x: %v; value %d want %d", cHolds, st.Value(), run.want)
			}
			cw := c.Writer()
			upd(c, "c1", 1, tpncounter.Applied) // c writes again
			if tc.refused {
				require.NotEqual(t, cw, c.Writer(), "c takes a new incarnation")
				upd(c, "cy", 1, tpncounter.Applied) // the caller's retry: applied
			}
			if tc.lost || tc.doubt && !tc.before {
				run.want++ // cy, in c's pending write
			}
			if tc.doubt && !tc.before {
				require.NoError(t, lc.DeliverAll()) // c's puts land late
			}
			st = stored(t, mem)
			_, cHolds := maps.Collect(st.Transactions(c.Writer()))["x"]
			t.Logf("after c1: c holds x: %v; value %d want %d", cHolds, st.Value(), run.want)

			run.settle(a, c, r)
			if !tc.doubt && !tc.lost {
				require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
				return
			}
			require.Equal(t, run.want+22, stored(t, mem).Value(), "the stated limit: x counts twice")
		})
	}
}

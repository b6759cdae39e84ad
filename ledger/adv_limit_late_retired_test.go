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
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestLimitRetiredLateCopyNotNewest is the schedule of TestAdvWatchRandom
// H=F=1/case457 (seed 1795968120842447248, 1500 cases, at de19c30) made
// deterministic. It shows the limit SPEC.md 6.11 states as "when a
// retirement (step 5) retires a late copy that is not its actor's newest
// credit or debit" (with "records, unjudged, a late owner copy"), and
// that the condition is needed. History and folded record hold one
// transaction. a's call of x is in doubt: both puts held in flight. b
// applies x, records it (naming b) and writes on until it has folded x
// into its total and forgotten it. a's first held put lands: a's copy is
// late and counts x a second time. a credits w (or debits it): its put
// lands, so a learns that its pending write landed and owes x's record
// (naming a, the owner in that state: b no longer holds x), to be written
// before its next cycle. a is then idle. An hour later r's pass sees a
// idle; it checks only a's newest credit (w) and newest debit (none) for
// a late copy, records x naming a, unjudged, and retires a: a's retired
// total counts x, as b's does. a's next cycle finds r's record naming a
// and keeps its copy. When x is a's newest credit (a debits w), the pass
// finds it late and does not retire a, and a's next cycle takes the copy
// out; when a reads before the pass, likewise.
func TestLimitRetiredLateCopyNotNewest(t *testing.T) {
	for _, tc := range []struct {
		name      string
		debit     bool // a's next write debits w: x stays a's newest credit
		readFirst bool // a reads (Find) before r's pass
		limit     bool
	}{
		{name: "x not a's newest credit", limit: true},
		{name: "x a's newest credit", debit: true},
		{name: "a reads before the pass", readFirst: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			mk := func(name crdt.ActorID, retire time.Duration) (*lane, *ledger.Ledger) {
				return limitLedger(t, mem, clock, name, retire)
			}
			la, a := mk("a", -1)
			_, b := mk("b", -1)
			_, r := mk("r", time.Hour)
			run := &limitRun{t: t}
			upd := run.upd
			upd(b, "open", 1000, tpncounter.Applied)
			upd(a, "a0", 1, tpncounter.Applied)

			// a's call of x in doubt: both attempts' puts held in flight.
			la.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
			_, err := a.Update(ctx, "x", 5)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			require.Equal(t, 2, la.Held())
			run.want += 5 // x counts once, however it lands

			// b applies x, records it, and writes on until it forgets x.
			upd(b, "x", 5, tpncounter.Applied)
			run.want -= 5
			for i := range 3 {
				upd(b, crdt.TxnID(fmt.Sprintf("y%d", i)), 1, tpncounter.Applied)
			}
			_, held := maps.Collect(stored(t, mem).Transactions(b.Writer()))["x"]
			require.False(t, held, "b counts x in its total and no longer holds it")

			// a's first put lands late; the retry's is lost.
			require.NoError(t, la.Deliver(0))
			la.DropHeld()
			require.Equal(t, run.want+5, stored(t, mem).Value(), "a's late copy counts x a second time")

			// a writes w: its put lands, x's record (naming a) is owed.
			if tc.debit {
				upd(a, "w", -9, tpncounter.Applied)
			} else {
				upd(a, "w", 9, tpncounter.Applied)
			}
			if tc.readFirst {
				_, err := a.Find(ctx)
				require.NoError(t, err)
			}

			clock.Add(61 * time.Minute)
			upd(b, "y9", 1, tpncounter.Applied) // b is not idle
			upd(r, "r1", 1, tpncounter.Applied) // r's pass sees a idle
			_, live := maps.Collect(stored(t, mem).LiveActors())[a.Writer()]
			rec, ok := recordOf(t, mem, "x")
			t.Logf("a live after r's pass: %v; a record of x: %+v (%v)", live, rec, ok)

			run.settle(a, b, r) // every ledger reads and writes again
			if tc.limit {
				require.False(t, live, "r retired a")
				// SPEC.md 6.11, Limits: a retirement retires a late copy
				// that is not its actor's newest credit or debit.
				require.Equal(t, run.want+5, stored(t, mem).Value(), "x (5) counted twice, as SPEC states; fixed, update SPEC and this test")
				return
			}
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
		})
	}
}

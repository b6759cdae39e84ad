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

// TestRetiredLateCopyNotNewest is the schedule of TestAdvWatchRandom
// H=F=1/case457 (seed 1795968120842447248, 1500 cases, at de19c30) made
// deterministic. History and folded record hold one transaction. a's call
// of x is in doubt: both puts held in flight. b applies x, records it
// (naming b) and writes on until it has folded x into its total and
// forgotten it. a's first held put lands: a's copy is late and counts x a
// second time. a credits w (or debits it): its put lands, so a learns
// that its pending write landed and owes x's record, to be written before
// its next cycle. a is then idle. An hour later r's pass finds a due and
// reads the records of all its copies, not only its newest credit and
// debit (SPEC.md 6.9): x's names only b, past it without x, so a's copy
// is late, and a, if retired, retires with it left out. Before, the pass
// judged only a's newest (w), recorded x naming a, unjudged, and retired
// a, whose retired total counted x as b's does.
func TestRetiredLateCopyNotNewest(t *testing.T) {
	for _, tc := range []struct {
		name      string
		debit     bool // a's next write debits w: x stays a's newest credit
		readFirst bool // a reads (Find) before r's pass
	}{
		{name: "x not a's newest credit"},
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

			if !live {
				require.Equal(t, run.want, stored(t, mem).Value(), "r's pass retires a with its late copy x left out")
			}
			run.settle(a, b, r) // every ledger reads and writes again
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
		})
	}
}

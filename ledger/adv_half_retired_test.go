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

// TestHalfRetiredEntryPastTheGrace (found by a scenario written from the
// docs): x credits and debits; y retires x's entry, both halves. x then
// only credits, once a day: its credit half comes back to life, its debit
// half stays retired. Ten days on (RetiredGrace), x debits while y writes
// between x's fetch and put, y's pass folding x's retired debit half into
// the base. x must not write that half again: each half of a ledger's
// entry changes, and is retired, on its own, so the grace rule (SPEC.md
// 6.9 RetiredGrace) dates the entry by the half that changed least
// recently and takes a new incarnation. Dated by the entry as a whole,
// x's put revived the folded half beside the base: the debit counted
// twice, for good.
func TestHalfRetiredEntryPastTheGrace(t *testing.T) {
	for _, race := range []bool{false, true} {
		t.Run(fmt.Sprintf("y writes inside x's debit=%v", race), func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			mk := func(name crdt.ActorID) (*lane, *ledger.Ledger) {
				ln := newLane(mem)
				l, err := ledger.New(ln, advKey, ledger.Options{Actor: name, Clock: clock.Now})
				require.NoError(t, err)
				return ln, l
			}
			lx, x := mk("x")
			_, y := mk("y")
			run := &limitRun{t: t}
			run.upd(x, "p1", 10, tpncounter.Applied)
			run.upd(x, "n1", -5, tpncounter.Applied)
			run.upd(y, "y0", 1, tpncounter.Applied)
			clock.Add(2 * time.Hour)
			run.upd(y, "y1", 1, tpncounter.Applied) // retires x, both halves
			clock.Add(time.Hour)
			for d := range 10 {
				run.upd(x, crdt.TxnID(fmt.Sprintf("pc%d", d)), 1, tpncounter.Applied)
				clock.Add(24 * time.Hour)
			}
			clock.Add(-30 * time.Minute) // x's debit half retired 10 days 30 minutes ago
			if race {
				armed := true
				lx.before = func(method, key string) {
					if armed && method == faulty.MethodPut && key == advKey {
						armed = false
						run.upd(y, "y2", 1, tpncounter.Applied) // folds x's retired debit half
					}
				}
			}
			run.upd(x, "n2", -3, tpncounter.Applied)
			lx.before = nil
			if !race {
				run.upd(y, "y2", 1, tpncounter.Applied)
			}
			for i := range 2 {
				clock.Add(2 * time.Hour)
				run.upd(x, crdt.TxnID(fmt.Sprintf("late%d", i)), -1, tpncounter.Applied)
				run.upd(y, crdt.TxnID(fmt.Sprintf("ylate%d", i)), 1, tpncounter.Applied)
				_, err := x.Find(ctx)
				require.NoError(t, err)
			}
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
		})
	}
}

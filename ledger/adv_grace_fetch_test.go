package ledger_test

import (
	"context"
	"fmt"
	"runtime/debug"
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

// TestGraceDropThenFailedFetch (found by a review): lateTakeOut's late
// copy, up to a's credit w, which owes x's record. a (RetiredGrace 2h)
// then reads (Value) gap later and the account fetch fails. With gap >
// RetiredGrace/2, renewStale has dropped the state and nothing was read.
// a's next Update writes x's record before it reads: settling finds b
// counted x, so a takes its copy out, which needs a state: the flush reads
// one first. Before, takeOut cloned a nil state: the Update panicked, and
// the take-out was lost for good (x counted twice). With gap 50m (no drop)
// the take-out is written: once.
func TestGraceDropThenFailedFetch(t *testing.T) {
	for _, gap := range []time.Duration{50 * time.Minute, 70 * time.Minute} {
		t.Run(fmt.Sprintf("gap=%v", gap), func(t *testing.T) {
			ctx := context.Background()
			mem, clock, la, a, b, run := owedLateCopy(t)
			var err error
			unwritten, _ := ledger.Holding(a)
			t.Logf("a holds unwritten: %v", unwritten)

			clock.Add(gap)
			la.plan.set(nil, []faulty.Fault{faulty.Refuse}, nil)
			_, err = a.Value(ctx)
			require.Error(t, err, "the fetch fails")
			la.plan.set(nil, nil, nil)
			var res ledger.Result
			panics := 0
			for try := range 3 { // the first panics; record has already forgotten x's record
				func() {
					defer func() {
						if p := recover(); p != nil {
							panics++
							if try == 0 {
								t.Logf("a's Update panics: %v\n%s", p, debug.Stack())
							}
						}
					}()
					x := crdt.TxnID(fmt.Sprintf("p%d", try))
					res, err = a.Update(ctx, x, 1)
					t.Logf("%s: %+v %v", x, res, err)
					if err == nil && res.Outcome == tpncounter.Applied {
						run.want++
					}
				}()
			}
			t.Logf("%d of a's 3 Updates panicked", panics)
			run.settle(a, b)
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
			require.Zero(t, panics, "a's Update panics (nil cyc.Local in takeOut)")
		})
	}
}

// owedLateCopy is the account of the RetiredGrace fetch tests: a
// (RetiredGrace 2h, RetireAfter 1h) applies x in a write held in flight;
// b applies x, then y0..y2; a's held put lands late, and a's next credit w
// learns it landed, so x's record (naming a) is owed.
func owedLateCopy(t *testing.T) (*memory.Siblings, *fakeClock, *lane, *ledger.Ledger, *ledger.Ledger, *limitRun) {
	t.Helper()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la := newLane(mem)
	a := graceLedger(t, la, clock, "a")
	_, b := limitLedger(t, mem, clock, "b", -1)
	run := &limitRun{t: t}
	run.upd(b, "open", 1000, tpncounter.Applied)
	run.upd(a, "a0", 1, tpncounter.Applied)
	la.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
	_, err := a.Update(context.Background(), "x", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	run.upd(b, "x", 5, tpncounter.Applied)
	for i := range 3 {
		run.upd(b, crdt.TxnID(fmt.Sprintf("y%d", i)), 1, tpncounter.Applied)
	}
	require.NoError(t, la.Deliver(0))
	la.DropHeld()
	la.plan.set(nil, nil, nil)
	run.upd(a, "w", 9, tpncounter.Applied)
	return mem, clock, la, a, b, run
}

// graceLedger is a limit test's ledger (limitOptions) over st, with
// RetireAfter an hour and RetiredGrace two, so that a read 70 minutes
// after the last one drops its state.
func graceLedger(t *testing.T, st store.Siblings, clock *fakeClock, name crdt.ActorID) *ledger.Ledger {
	t.Helper()
	o := limitOptions(clock, name, time.Hour)
	o.RetiredGrace = 2 * time.Hour
	l, err := ledger.New(st, advKey, o)
	require.NoError(t, err)
	return l
}

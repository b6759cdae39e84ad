package modelcheck

import (
	"time"

	"github.com/counterkit/counterkit/ledger"
)

// meetRetireScope: transaction x is delivered to ledgers A and B at once
// (A's writer id sorts first, so A's copy counts where they meet); each
// then credits once more, B in the half of x, so that its write gives its
// copy up or folds it (History and Folded length 1). C, retiring after an
// hour, starts once A and B are done and writes for three hours: it
// records and retires A and B while their copies of x meet, after one was
// given up, or after one was folded. Puts are refused or lose their
// acknowledgement (records are only refused); reads of the counter may be
// up to staleAge states old (none when 0). No write is held past its
// caller's call: that is the limit SPEC.md 6.11 states as retirement of a
// writer whose write is in doubt. Seen to catch a ledger that never gives
// its copy up (index.go, `if len(ceded) == 0` made `if true || ...`):
// ledger-meet-retire-preempt, x counted 0 times after 820 schedules.
func meetRetireScope(name string, faults, preempts, staleAge int) Scope {
	fates := Of(Refuse, LoseAck)
	if staleAge > 0 {
		fates |= Of(Stale)
	}
	keyFates := func(key string) Fates {
		if ledger.IsRecordKey(key) {
			return Of(Refuse) // records are never read stale (6.11)
		}
		return fates
	}
	txns := []Txn{{ID: "x", Amount: 1}, {ID: "y", Amount: 10}, {ID: "z", Amount: 100},
		{ID: "c1", Amount: 1000}, {ID: "c2", Amount: 10000}, {ID: "c3", Amount: 100000}}
	return Scope{
		Name:      name,
		Fates:     fates,
		KeyFates:  keyFates,
		MaxFaults: faults, MaxPreemptions: preempts, MaxStaleAge: staleAge,
		Build: func(w *World) {
			opts := func(actor string, retireAfter time.Duration) ledger.Options {
				o := ledgerOptions(w, actor, tiny)
				o.RetireAfter = retireAfter
				return o
			}
			a, b := mustLedger(w.Store, "k", opts("a", -1)), mustLedger(w.Store, "k", opts("b", -1))
			c := mustLedger(w.Store, "k", opts("c", time.Hour))
			w.Go("A", func(r *Runner) {
				credit(r, "A1", a, "x", 1)
				credit(r, "A2", a, "z", 100)
			})
			w.Go("B", func(r *Runner) {
				credit(r, "B1", b, "x", 1)
				credit(r, "B2", b, "y", 10)
			})
			w.Go("C", func(r *Runner) {
				r.Wait("A2")
				r.Wait("B2")
				for i := range 3 {
					w.Clock.Advance(time.Hour)
					credit(r, "C"+string(rune('1'+i)), c, txns[3+i].ID, txns[3+i].Amount)
				}
				w.Clock.Advance(time.Hour)
				find(r, "C4", c)
			})
			checkLedgers(w, tiny, txns, "k")
		},
	}
}

package modelcheck

import (
	"testing"
	"time"

	"github.com/counterkit/counterkit/ledger"
)

// graceLateScope: A credits x; when that call fails, B retries x, then
// credits y and z, which forget x (History and Folded length 1). A's
// write of x may be held and land late, beside B's count; A's Find then
// learns it landed and settles its copy (SPEC.md 6.11 step 3), writes
// that may fail. A then neither reads nor writes for RetiredGrace/2 and a
// minute (5 days), past the retry window, credits v (its read drops its
// state, 6.10) and runs Find. A late copy counts twice until its ledger
// reads again, so the promise is checked at the end, after each ledger
// runs Find (checkLedgersSettled).
//
// Three faults (refusals and held puts on the counter's calls) reach the
// paths of interest; two do not, and three cost minutes, so it runs only
// under COUNTERKIT_CASES (TestGraceLateScope). At 106,305 schedules (72 s)
// it found a held put that landed, learned by A's Find, whose owed record
// A wrote only after the retry window, judged against the records live
// then: none, so it named A's late copy and x counted twice
// (TestOwedRecordJudgedAtItsTime in package ledger replays it). Fixed,
// it passes all 415,449 schedules (8 minutes of CPU on a loaded machine).
func graceLateScope(name string, fates, recordFates Fates, faults, preempts int) Scope {
	keyFates := func(key string) Fates {
		if ledger.IsRecordKey(key) {
			return recordFates
		}
		return fates
	}
	txns := []Txn{{ID: "x", Amount: 1}, {ID: "y", Amount: 10}, {ID: "z", Amount: 100}, {ID: "v", Amount: 1000}}
	return Scope{
		Name: name, Fates: fates | recordFates, KeyFates: keyFates,
		MaxFaults: faults, MaxPreemptions: preempts, MaxStaleAge: 1,
		Build: func(w *World) {
			a := mustLedger(w.Store, "k", ledgerOptions(w, "a", tiny))
			b := mustLedger(w.Store, "k", ledgerOptions(w, "b", tiny))
			w.Go("A", func(r *Runner) {
				credit(r, "A1", a, "x", 1)
				r.Wait("B3")
				find(r, "A2", a)
				w.Clock.Advance(ledger.DefaultRetiredGrace/2 + time.Minute)
				credit(r, "A3", a, "v", 1000)
				find(r, "A4", a)
			})
			w.Go("B", func(r *Runner) {
				if failed(r.Wait("A1")) {
					credit(r, "B1", b, "x", 1)
				}
				credit(r, "B2", b, "y", 10)
				credit(r, "B3", b, "z", 100)
			})
			checkLedgersSettled(w, tiny, txns, "k", a, b)
		},
	}
}

// TestGraceLateScope explores graceLateScope at three faults; it runs
// only under COUNTERKIT_CASES.
func TestGraceLateScope(t *testing.T) {
	if !large() {
		t.Skip("three faults take minutes: set COUNTERKIT_CASES to run it")
	}
	run(t, graceLateScope("ledger-grace-late", Of(Refuse, Hold), 0, 3, 0))
}

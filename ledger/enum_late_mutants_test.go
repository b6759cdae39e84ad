//go:build counterkit_mutants

package ledger_test

import (
	"testing"

	"github.com/counterkit/counterkit/ledger"
)

// TestLateCopyEnumeratedCatchesMutants: TestLateCopyEnumerated's
// schedules, to depth 1, find a double count when a pass declines a
// writer holding a late copy (ledger.LateDeclined, the rule before), and
// a lost transaction when it leaves every copy a writer alone holds out
// of its retired total (ledger.LateAll), on a Book and a Sharded account.
func TestLateCopyEnumeratedCatchesMutants(t *testing.T) {
	for _, v := range []string{ledger.LateDeclined, ledger.LateAll} {
		for _, book := range []bool{false, true} {
			restore := ledger.BreakLate(v)
			total := 0
			var first error
			for _, p := range lateScopes() {
				n, fails := p.enumerate(book, 1, 1)
				total += n
				if len(fails) > 0 {
					first = fails[0]
					break
				}
			}
			restore()
			if first == nil {
				t.Errorf("%s, book=%v: %d schedules, none failed", v, book, total)
				continue
			}
			t.Logf("%s, book=%v: caught after %d schedules:\n%.600s", v, book, total, first)
		}
	}
}

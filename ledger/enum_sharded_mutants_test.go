//go:build counterkit_mutants

package ledger_test

import (
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// TestShardedAndBookEnumeratedCatchesMutants: the enumeration of
// TestShardedAndBookEnumerated, at depth 3 over fewer faults, finds a
// double count when every ledger retires idle writers without recording
// their transactions first (ledger.BreakRetirement), for a Sharded account
// and for a Book.
func TestShardedAndBookEnumeratedCatchesMutants(t *testing.T) {
	for _, book := range []bool{false, true} {
		sc := enumScope{name: "retire unrecorded", book: book, actors: 2, depth: 3,
			faults:  []string{"", "hold1", "holdAll", "stale", "recRefuse"},
			ticks:   []time.Duration{20 * time.Minute, 70 * time.Minute},
			restart: true, maxTxns: 2, ids: []crdt.TxnID{"t1", "t3"}}
		restore := ledger.BreakRetirement()
		n, _, _, fails := sc.enumerate(1)
		restore()
		if len(fails) == 0 {
			t.Errorf("book=%v: %d schedules, none failed", book, n)
			continue
		}
		t.Logf("book=%v: caught after %d schedules:\n%s", book, n, fails[0])
	}
}

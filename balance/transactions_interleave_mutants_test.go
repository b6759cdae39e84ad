//go:build counterkit_mutants

package balance_test

import (
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/balance"
)

// TestTransactionsEveryInterleavingCatchesMutants: the enumeration of
// TestTransactionsEveryInterleaving finds a retry inside the window applied
// again when merges do not record transactions (balance.BreakTxnRecords).
// The deadline and placement mutants need a writer stalled past
// SettleGrace or copies of a row at several places, which the timing
// assumption's pruning and these scopes leave out; other tests catch
// them.
func TestTransactionsEveryInterleavingCatchesMutants(t *testing.T) {
	for _, m := range []struct {
		name string
		brk  func() func()
	}{{"no records", balance.BreakTxnRecords}} {
		restore := m.brk()
		caught := false
		for _, sc := range schedScenarios() {
			if !strings.Contains(sc.name, "tick3s") {
				continue
			}
			sc.start = sc.start.Add(time.Hour)
			runs, _, err := enumerateSched(sc, 20000)
			if err != nil && !strings.Contains(err.Error(), "limit") {
				t.Logf("%s caught after %d schedules: %v", m.name, runs, strings.SplitN(err.Error(), "\n", 2)[0])
				caught = true
				break
			}
		}
		restore()
		if !caught {
			t.Errorf("%s: not caught", m.name)
		}
	}
}

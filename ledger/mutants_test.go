//go:build counterkit_mutants

package ledger_test

import (
	"math/rand"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/ledger/ledgertest"
	"github.com/counterkit/counterkit/proptest"
	"github.com/stretchr/testify/require"
)

// The broken variants of group commit (mutants.go) are the failures group
// commit must not have; the group simulation must catch each of them. Run
// with -tags counterkit_mutants.
func TestRetirementRecordRaceCatchesUnrecordedRetirement(t *testing.T) {
	restore := ledger.BreakRetirement()
	defer restore()
	n, failing := ledgertest.CountRetirementRecordRace(t, memory.NewSiblings(), "k")
	t.Logf("a retirement that records nothing: %d of %d schedules fail", failing, n)
	require.Positive(t, failing)
}

func TestLedgerSimulationRetirementCatchesEarlyDating(t *testing.T) {
	restore := ledger.BreakDating()
	defer restore()
	m := retirement(false)
	m.overUntilQuiet = false                  // its double count is caught at the step that makes it
	_, err := runLedgerSimWith(12955, 60, &m) // found by a search once the pass read stored sightings
	t.Logf("dating by any record found: %v", err)
	require.Error(t, err)
}

func TestLongDoubtCatchesCopiesSentAgain(t *testing.T) {
	restore := ledger.BreakLongDoubt()
	defer restore()
	got, want := longDoubtRace(t)
	require.Equal(t, want+7, got, "x (7) counted twice")
	m := longDoubt(false)
	_, err := runLedgerSimWith(6889, 60, &m) // found by a search once the pass read stored sightings
	t.Logf("copies in doubt sent again after RetireAfter: %v", err)
	require.Error(t, err)
}

func TestLongDoubtCatchesATakeOutThatLoses(t *testing.T) {
	restore := ledger.BreakLongDoubtOwn()
	defer restore()
	got, want := longDoubtGiveUpRace(t, true)
	require.Equal(t, want-7, got, "x (7) counted by no one")
	// The simulation's schedules lostInGiveUpRace reached this race
	// before a pass read the stored sightings, whose Fetch moves every
	// later call; seeds 1 to 23,999 of either rows setting no longer do
	// (stop 98), so the traced race above is the check.
}

func TestLedgerSimulationGroupsCatchesBrokenVariants(t *testing.T) {
	for _, v := range []string{ledger.GroupAckEarly, ledger.GroupDropOnRetry, ledger.GroupKeepRefused} {
		t.Run(v, func(t *testing.T) {
			restore := ledger.BreakGroup(v)
			defer restore()
			seed := proptest.Seed()
			rng := rand.New(rand.NewSource(seed))
			n := proptest.Scale(400)
			for i := 0; i < n; i++ {
				s := rng.Int63()
				maxGroup := 0
				if s%2 == 0 {
					maxGroup = 2
				}
				if _, err := runLedgerSimWith(s, 60, &ledgerSim{groups: true, maxGroup: maxGroup}); err != nil {
					t.Logf("caught after %d schedules: schedule seed %d: %v", i+1, s, err)
					return
				}
			}
			t.Fatalf("seed %d: %d schedules never caught the broken variant %q", seed, n, v)
		})
	}
}

//go:build counterkit_mutants

package bounded

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
)

// TestSimulationCatchesForgottenRetries: with an Account that does not
// read records, TestSimulationRetriesAfterTheWindow's schedules apply an
// acknowledged transaction again; with one that applies while its
// unrecorded writes fill its window, holdBackScenario counts t1 twice.
func TestSimulationCatchesForgottenRetries(t *testing.T) {
	t.Run("no record lookup", func(t *testing.T) {
		brokenNoRecordLookup = true
		defer func() { brokenNoRecordLookup = false }()
		seed := proptest.Seed()
		t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
		f := runSims(t, seed, proptest.Scale(5000), 30, false, 2)
		if !strings.Contains(f, "applied again") {
			t.Fatalf("not caught: %q", f)
		}
		t.Logf("caught: %s", strings.SplitN(f, "\n", 2)[0])
	})
	t.Run("no hold-back", func(t *testing.T) {
		brokenNoHoldBack = true
		defer func() { brokenNoHoldBack = false }()
		t3, b1, v := holdBackScenario(t)
		require.ErrorIs(t, t3, crdt.ErrAmbiguousWrite, "t3 applied, its write held")
		require.Equal(t, Applied, b1, "t1 applied again")
		require.Equal(t, int64(1+2+4+1), v)
	})
}

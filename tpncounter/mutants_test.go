//go:build counterkit_mutants

package tpncounter

import (
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/proptest"
)

// The broken variants are the failures the package documentation
// describes; the same simulation must catch each of them. Run with
// -tags counterkit_mutants.
func TestSimulationCatchesBrokenRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    variant
	}{
		{"counts every copy", variantCountEveryCopy},
		{"fold forgets while another actor holds the txn", variantForgetOnFold},
		{"deferred ids shrink the window", variantDeferredShrinksWindow},
		{"retires an actor whose transactions another actor holds", variantRetireShared},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := defaultSimParams()
			if tc.v == variantDeferredShrinksWindow {
				// The schedules that show it: transactions often reach two
				// actors, one of which then goes idle holding them.
				p.actors, p.pBoth, p.idleAfter = 2, 0.6, 15
			}
			if tc.v == variantRetireShared {
				p = retireSimParams()
				p.pBoth = 0.6
			}
			p.variant = tc.v
			expectCaught(t, p, fmt.Sprintf("the broken variant %q", tc.name))
		})
	}
	// The fold simulation (fold_test.go) catches the broken base rules.
	for _, tc := range []struct {
		name string
		v    variant
	}{
		{"merge keeps the entries retired before the winning cutoff", variantMergeKeepsFolded},
		{"the later of two retirements of one entry wins", variantLaterRetirementWins},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer breakRules(tc.v)()
			expectFoldCaught(t, fmt.Sprintf("the broken variant %q", tc.name))
		})
	}
	// The schedules of TestMergeBinaryShifts catch a broken in-place
	// change of an entry in MergeBinary.
	t.Run("a shift leaves its items on their side of the fold boundary", func(t *testing.T) {
		defer breakRules(variantShiftKeepsSides)()
		seed := proptest.Seed()
		_, _, err := runShiftSchedules(seed, proptest.Scale(40))
		if err == nil {
			t.Fatalf("the broken variant went unnoticed; replay: %s", proptest.Replay(t, seed))
		}
		t.Logf("caught: %v", err)
	})
}

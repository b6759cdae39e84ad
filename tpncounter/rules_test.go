//go:build !counterkit_mutants

package tpncounter

import "testing"

// TestSimulationCatchesBrokenRules needs the broken variants of the rules,
// which are built only with the counterkit_mutants tag (mutants_test.go).
func TestSimulationCatchesBrokenRules(t *testing.T) {
	t.Skip("the broken rule variants are built only with -tags counterkit_mutants")
}

//go:build !counterkit_mutants

package balance_test

import "testing"

// TestChecksCatchBrokenVariants needs the broken variants of the rules,
// which are built only with the counterkit_mutants tag (broken_test.go).
func TestChecksCatchBrokenVariants(t *testing.T) {
	t.Skip("the broken rule variants are built only with -tags counterkit_mutants")
}

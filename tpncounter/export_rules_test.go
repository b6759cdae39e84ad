//go:build !counterkit_mutants

package tpncounter

// breakRules accepts only correctVariant: the broken variants exist only
// with the counterkit_mutants build tag.
func breakRules(v variant) (restore func()) {
	if v != correctVariant {
		panic("tpncounter: broken rule variants need -tags counterkit_mutants")
	}
	return func() {}
}

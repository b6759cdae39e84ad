//go:build counterkit_mutants

package tpncounter

// breakRules switches on variant v of the rules for every counter of the
// process (correctVariant: none) and returns a function that switches it
// off again. Tests using it must not run in parallel with other tests of
// the package.
func breakRules(v variant) (restore func()) {
	brokenCountEveryCopy = v == variantCountEveryCopy
	brokenForgetOnFold = v == variantForgetOnFold
	brokenDeferredShrinksWindow = v == variantDeferredShrinksWindow
	brokenRetireShared = v == variantRetireShared
	brokenMergeKeepsFolded = v == variantMergeKeepsFolded
	brokenLaterRetirementWins = v == variantLaterRetirementWins
	brokenShiftKeepsSides = v == variantShiftKeepsSides
	return func() {
		brokenCountEveryCopy, brokenForgetOnFold, brokenDeferredShrinksWindow, brokenRetireShared = false, false, false, false
		brokenMergeKeepsFolded, brokenLaterRetirementWins, brokenShiftKeepsSides = false, false, false
	}
}

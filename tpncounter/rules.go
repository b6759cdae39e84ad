//go:build !counterkit_mutants

package tpncounter

// The rules as documented. Built with the counterkit_mutants tag, these
// become variables that tests set to known-broken variants (mutants.go);
// here they are false constants, so the branches that read them are
// compiled out.
const (
	brokenCountEveryCopy        = false
	brokenForgetOnFold          = false
	brokenDeferredShrinksWindow = false
	brokenRetireShared          = false
	brokenMergeKeepsFolded      = false
	brokenLaterRetirementWins   = false
)

// correctRules reports whether no broken variant is selected.
func correctRules() bool { return true }

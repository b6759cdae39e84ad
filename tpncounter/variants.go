//go:build !counterkit_mutants

package tpncounter

// The switches of the known-broken variants of the rules (mutants.go),
// off: built without the counterkit_mutants tag they are false
// constants, so the branches that read them are compiled out.
const (
	brokenCountEveryCopy        = false
	brokenForgetOnFold          = false
	brokenDeferredShrinksWindow = false
	brokenRetireShared          = false
	brokenMergeKeepsFolded      = false
	brokenLaterRetirementWins   = false
	brokenShiftKeepsSides       = false
)

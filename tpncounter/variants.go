//go:build !counterkit_mutants

package tpncounter

// The broken variants (mutants.go) off: false constants, compiled out.
const (
	brokenCountEveryCopy        = false
	brokenForgetOnFold          = false
	brokenDeferredShrinksWindow = false
	brokenRetireShared          = false
	brokenMergeKeepsFolded      = false
	brokenLaterRetirementWins   = false
	brokenShiftKeepsSides       = false
)

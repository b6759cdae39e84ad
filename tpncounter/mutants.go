//go:build counterkit_mutants

package tpncounter

// Known-broken variants of the rules, built only with the
// counterkit_mutants build tag. Tests switch them on (export_mutants_test.go)
// to show that the simulation catches the failures the package
// documentation describes. They apply to every counter of the process, so
// the tests that set them do not run in parallel with others. Without the
// tag they are false constants (variants.go) and the branches that read them
// are compiled out.
var (
	// brokenCountEveryCopy counts a transaction once per actor holding it,
	// as adding the amount to the total at apply time does.
	brokenCountEveryCopy bool
	// brokenForgetOnFold forgets a transaction as soon as it is folded,
	// even while another actor still holds it (no deferred forgetting).
	brokenForgetOnFold bool
	// brokenDeferredShrinksWindow counts deferred items against
	// FoldedLength, so that they push newer folded items out early: the
	// rule before the window was made to hold for every schedule.
	brokenDeferredShrinksWindow bool
	// brokenRetireShared retires an actor even while another actor still
	// holds one of its transactions.
	brokenRetireShared bool
	// brokenMergeKeepsFolded keeps, in Merge, the retired entries retired
	// before the winning base's cutoff: counted in the base and again.
	brokenMergeKeepsFolded bool
	// brokenLaterRetirementWins lets the later of two retirements of one
	// entry win in Merge: a state that folded the earlier one meets the
	// later one, which no cutoff drops yet.
	brokenLaterRetirementWins bool
	// brokenShiftKeepsSides changes an entry in place in MergeBinary (see
	// applyShift) without taking out and putting back the kept items that
	// cross the fold boundary: their contributions stay those of their
	// old side.
	brokenShiftKeepsSides bool
)

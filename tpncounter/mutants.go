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
	// brokenCountEveryCopy counts a transaction once per holder.
	brokenCountEveryCopy bool
	// brokenForgetOnFold forgets a folded transaction others still hold.
	brokenForgetOnFold bool
	// brokenDeferredShrinksWindow counts deferred items against FoldedLength,
	// pushing newer folded items out early (the rule before the fix).
	brokenDeferredShrinksWindow bool
	// brokenRetireShared retires an actor while another holds its transaction.
	brokenRetireShared bool
	// brokenMergeKeepsFolded keeps, in Merge, entries the winning base holds.
	brokenMergeKeepsFolded bool
	// brokenLaterRetirementWins lets the later of two retirements win in Merge.
	brokenLaterRetirementWins bool
	// brokenShiftKeepsSides shifts an entry in MergeBinary (applyShift) without
	// reinstalling kept items that cross the fold boundary.
	brokenShiftKeepsSides bool
)

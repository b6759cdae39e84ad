//go:build counterkit_mutants

package tpncounter

// Known-broken variants of the rules (counterkit_mutants tag only), switched
// on by tests (export_mutants_test.go) to show the simulation catches them;
// process-wide, so those tests do not run in parallel. Untagged, they are
// false constants (variants.go).
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

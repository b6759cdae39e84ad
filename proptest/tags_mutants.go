//go:build counterkit_mutants

package proptest

// replayTags makes a replay command rebuild the broken variants a
// counterkit_mutants test runs against.
const replayTags = "-tags counterkit_mutants "

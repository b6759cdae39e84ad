//go:build !counterkit_mutants

package proptest

// replayTags holds the build tags a replay command needs; see
// tags_mutants.go.
const replayTags = ""

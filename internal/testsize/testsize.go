// Package testsize holds the rule by which the repository's tests size
// themselves for CI: the race pass (-short) leaves tests of code without
// goroutines to the plain pass, where the race detector would find
// nothing and slow them 6–17×. For tests only.
package testsize

import "testing"

// SequentialReason is the reason every such test gives when it skips.
const SequentialReason = "-short (the race pass): sequential; the full pass runs it without -race"

// SkipSequential skips t under -short: t runs on one goroutine, and the
// plain pass runs it without the race detector.
func SkipSequential(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip(SequentialReason)
	}
}

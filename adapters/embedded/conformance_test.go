package embedded_test

import (
	"context"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/conformance"
	"github.com/counterkit/counterkit/store"
)

// harness makes every store in a fresh data directory. Partitions read
// three rows per page, so that scans cross pages.
type harness struct{}

func (harness) MakeSiblings(_ context.Context, t testing.TB) (store.Siblings, error) {
	db, _ := openTemp(t, embedded.Options{})
	return db.Siblings(), nil
}

func (harness) MakePartitions(_ context.Context, t testing.TB) (store.Partitions, error) {
	db, _ := openTemp(t, embedded.Options{PageSize: 3})
	return db.Partitions(), nil
}

func (harness) Close() {}

func newHarness(context.Context, testing.TB) (conformance.Harness, error) { return harness{}, nil }

// TestConformance is the whole conformance run: the store kit's checks of
// both shapes and every driver's behaviours (ledger, statestore, tally,
// deltalog, balance) on this backend.
func TestConformance(t *testing.T) {
	t.Parallel()
	conformance.Run(t, newHarness)
}

func BenchmarkConformance(b *testing.B) {
	conformance.Benchmark(b, newHarness)
}

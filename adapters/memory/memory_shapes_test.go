package memory_test

import (
	"context"
	"path"
	"slices"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/conformance"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/store/storetest"
)

// harness makes memory stores; Partitions read three rows per page, so
// that every scan crosses many page boundaries.
type harness struct{}

func (harness) MakeSiblings(_ context.Context, t testing.TB) (store.Siblings, error) {
	skipSequentialKitCheck(t)
	return memory.NewSiblings(), nil
}

func (harness) MakePartitions(_ context.Context, t testing.TB) (store.Partitions, error) {
	skipSequentialKitCheck(t)
	return &memory.Partitions{PageSize: 3}, nil
}

// sequentialKitChecks are the store kit's checks (store/storetest) of
// values of store.MaxValue and batches of store.MaxBatch: they run on one
// goroutine (so does this store) and cost most of the kit's time under
// the race detector.
var sequentialKitChecks = []string{"limits", "value-size"}

// skipSequentialKitCheck skips, in the race pass (-short), the check t
// runs when it is one of sequentialKitChecks: the full pass runs it
// without -race. The stores of a check are made on its goroutine, first
// thing, so the skip comes before any store call.
func skipSequentialKitCheck(t testing.TB) {
	if testing.Short() && slices.Contains(sequentialKitChecks, path.Base(t.Name())) {
		t.Skip(testsize.SequentialReason)
	}
}

func (harness) Close() {}

func newHarness(context.Context, testing.TB) (conformance.Harness, error) { return harness{}, nil }

// TestConformance is the whole conformance run: the store kit's checks of
// both shapes and every driver's behaviours on this backend (in the race
// pass, -short, but sequentialKitChecks).
func TestConformance(t *testing.T) { conformance.Run(t, newHarness) }

// Pages of the default size hold whole partitions (in the race pass,
// -short, but sequentialKitChecks).
func TestPartitionsConformance(t *testing.T) {
	storetest.RunPartitions(t, func(t *testing.T) store.Partitions {
		skipSequentialKitCheck(t)
		return memory.NewPartitions()
	})
}

// The fault wrappers with no faults configured keep the contracts (in the
// race pass, -short, but sequentialKitChecks).
func TestFaultyShapesWithoutFaultsConform(t *testing.T) {
	t.Run("Siblings", func(t *testing.T) {
		storetest.RunSiblings(t, func(t *testing.T) store.Siblings {
			skipSequentialKitCheck(t)
			return faulty.NewSiblings(memory.NewSiblings(), faulty.Options{}).Store()
		})
	})
	t.Run("Partitions", func(t *testing.T) {
		storetest.RunPartitions(t, func(t *testing.T) store.Partitions {
			skipSequentialKitCheck(t)
			return faulty.NewPartitions(memory.NewPartitions(), faulty.Options{ScanPage: 7, RecordWrites: true})
		})
	})
}

func BenchmarkConformance(b *testing.B) { conformance.Benchmark(b, newHarness) }

package memory_test

import (
	"context"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/conformance"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/store/storetest"
)

// harness makes memory stores; Partitions read three rows per page, so
// that every scan crosses many page boundaries.
type harness struct{}

func (harness) MakeSiblings(context.Context, testing.TB) (store.Siblings, error) {
	return memory.NewSiblings(), nil
}

func (harness) MakePartitions(context.Context, testing.TB) (store.Partitions, error) {
	return &memory.Partitions{PageSize: 3}, nil
}

func (harness) Close() {}

func newHarness(context.Context, testing.TB) (conformance.Harness, error) { return harness{}, nil }

// TestConformance is the whole conformance run: the store kit's checks of
// both shapes and every driver's behaviours on this backend.
func TestConformance(t *testing.T) { conformance.Run(t, newHarness) }

// Pages of the default size hold whole partitions.
func TestPartitionsConformance(t *testing.T) {
	storetest.RunPartitions(t, func(*testing.T) store.Partitions { return memory.NewPartitions() })
}

// The fault wrappers with no faults configured keep the contracts.
func TestFaultyShapesWithoutFaultsConform(t *testing.T) {
	t.Run("Siblings", func(t *testing.T) {
		storetest.RunSiblings(t, func(*testing.T) store.Siblings {
			return faulty.NewSiblings(memory.NewSiblings(), faulty.Options{}).Store()
		})
	})
	t.Run("Partitions", func(t *testing.T) {
		storetest.RunPartitions(t, func(*testing.T) store.Partitions {
			return faulty.NewPartitions(memory.NewPartitions(), faulty.Options{ScanPage: 7, RecordWrites: true})
		})
	})
}

func BenchmarkConformance(b *testing.B) { conformance.Benchmark(b, newHarness) }

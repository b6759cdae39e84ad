package memory_test

import (
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/store/storetest"
)

func TestSiblingsConformance(t *testing.T) {
	storetest.RunSiblings(t, func(*testing.T) store.Siblings { return memory.NewSiblings() })
}

func TestPartitionsConformance(t *testing.T) {
	storetest.RunPartitions(t, func(*testing.T) store.Partitions { return memory.NewPartitions() })
}

// Small pages make every scan cross many page boundaries.
func TestPartitionsSmallPagesConformance(t *testing.T) {
	storetest.RunPartitions(t, func(*testing.T) store.Partitions { return &memory.Partitions{PageSize: 3} })
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

func BenchmarkSiblings(b *testing.B) {
	storetest.BenchmarkSiblings(b, func(*testing.B) store.Siblings { return memory.NewSiblings() })
}

func BenchmarkPartitions(b *testing.B) {
	storetest.BenchmarkPartitions(b, func(*testing.B) store.Partitions { return memory.NewPartitions() })
}

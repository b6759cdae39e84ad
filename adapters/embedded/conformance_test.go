package embedded_test

import (
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/storetest"
)

// The conformance kit of package store, each check on a fresh directory.

func TestSiblingsConformance(t *testing.T) {
	t.Parallel()
	storetest.RunSiblings(t, func(t *testing.T) store.Siblings {
		db, _ := openTemp(t, embedded.Options{})
		return db.Siblings()
	})
}

func TestPartitionsConformance(t *testing.T) {
	t.Parallel()
	storetest.RunPartitions(t, func(t *testing.T) store.Partitions {
		db, _ := openTemp(t, embedded.Options{PageSize: 3})
		return db.Partitions()
	})
}

func BenchmarkConformance(b *testing.B) {
	b.Run("Siblings", func(b *testing.B) {
		storetest.BenchmarkSiblings(b, func(b *testing.B) store.Siblings {
			db, _ := openTemp(b, embedded.Options{})
			return db.Siblings()
		})
	})
	b.Run("Partitions", func(b *testing.B) {
		storetest.BenchmarkPartitions(b, func(b *testing.B) store.Partitions {
			db, _ := openTemp(b, embedded.Options{})
			return db.Partitions()
		})
	})
}

package tally_test

import (
	"math/rand/v2"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally/tallytest"
)

// TestTallyOnMemory runs the counter's behaviours on memory.Partitions, with
// a small page size so that paging is exercised.
func TestTallyOnMemory(t *testing.T) {
	tallytest.Run(t, func(*testing.T) store.Partitions { return &memory.Partitions{PageSize: 2} })
}

// TestTallyOnStaleRows runs them with stale reads at store.ReadAny: the
// suite's readers must cope.
func TestTallyOnStaleRows(t *testing.T) {
	tallytest.Run(t, func(*testing.T) store.Partitions {
		return newStaleRows(memory.NewPartitions(), rand.New(rand.NewPCG(3, 4)))
	})
}

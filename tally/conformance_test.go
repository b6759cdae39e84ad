package tally_test

import (
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally/tallytest"
)

// TestTallyOnMemory runs the counter's behaviours on memory.Partitions, with
// a small page size so that paging is exercised.
func TestTallyOnMemory(t *testing.T) {
	tallytest.Run(t, func(*testing.T) store.Partitions { return &memory.Partitions{PageSize: 2} })
}

// TestTallyOnStaleRows runs them with stale reads at store.ReadAny, each
// row at any version it held: the counter's readers must cope. The stale
// picks are seeded; replay with the command the test logs.
func TestTallyOnStaleRows(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	tallytest.Run(t, func(t *testing.T) store.Partitions {
		h := fnv.New64a() // one source per subtest, whichever subtests run
		h.Write([]byte(t.Name()))
		return newStaleRows(memory.NewPartitions(), rand.New(rand.NewPCG(uint64(seed), h.Sum64())))
	})
}

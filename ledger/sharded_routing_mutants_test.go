//go:build counterkit_mutants

package ledger

import (
	"fmt"
	"hash/maphash"
	"math/rand"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
)

// byActor routes by actor and transaction: a retry on another actor goes
// elsewhere.
func byActor(s *Sharded, txn crdt.TxnID) int {
	return ShardOf(crdt.TxnID(s.opts.Actor)+"|"+txn, s.n)
}

// byRandomSeed routes by maphash with a seed chosen per Sharded value, as
// a per-process seed would be.
func byRandomSeed() func(s *Sharded, txn crdt.TxnID) int {
	var mu sync.Mutex
	seeds := map[*Sharded]maphash.Seed{}
	return func(s *Sharded, txn crdt.TxnID) int {
		mu.Lock()
		seed, ok := seeds[s]
		if !ok {
			seed = maphash.MakeSeed()
			seeds[s] = seed
		}
		mu.Unlock()
		return int(maphash.String(seed, string(txn)) % uint64(s.n))
	}
}

// breakRouting routes every Sharded of the process with route until the
// test ends.
func breakRouting(t *testing.T, route func(*Sharded, crdt.TxnID) int) {
	brokenRouting = route
	t.Cleanup(func() { brokenRouting = nil })
}

// TestShardedSimulationCatchesBrokenRouting: routings that depend on more
// than the transaction id send a retry to another sub-key, where it counts
// again; both simulations catch them.
func TestShardedSimulationCatchesBrokenRouting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		route func() func(*Sharded, crdt.TxnID) int
	}{{"by actor", func() func(*Sharded, crdt.TxnID) int { return byActor }}, {"per-process random seed", byRandomSeed}} {
		for _, mode := range []shSim{{}, {stale: true, restarts: true}} {
			t.Run(fmt.Sprintf("%s/stale=%v", tc.name, mode.stale), func(t *testing.T) {
				breakRouting(t, tc.route())
				seed := proptest.Seed()
				rng := rand.New(rand.NewSource(seed))
				n := proptest.Scale(50)
				for i := 0; i < n; i++ {
					m := mode
					if _, err := runShardedSim(rng.Int63(), 60, &m); err != nil {
						t.Logf("caught after %d schedules: %v", i+1, err)
						return
					}
				}
				t.Fatalf("seed %d: %d schedules never caught routing %s", seed, n, tc.name)
			})
		}
	}
}

// The concurrent workload catches a routing by actor: a transaction
// delivered to two actors lands in two sub-keys. The transaction records
// recognise most such copies, so a run may count none twice: up to 20
// runs from the seed (a few milliseconds each), one of which must catch
// it. Five runs once missed it in CI, under load, and 20 runs pinned to
// one core (taskset -c 1) missed it every time, the deliveries never
// overlapping: the store now yields after every Fetch.
func TestShardedConcurrentActorsCatchesBrokenRouting(t *testing.T) {
	breakRouting(t, byActor)
	seed := proptest.Seed()
	var err error
	run := int64(0)
	for ; run < 20 && err == nil; run++ {
		_, _, err = concurrentActors(seed+run, 4, 4)
	}
	require.Error(t, err, "seed %d: routing by actor not caught in 20 runs", seed)
	t.Logf("seed %d: caught at run %d: %v", seed, run, err)
}

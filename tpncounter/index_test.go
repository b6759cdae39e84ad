package tpncounter

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
	"github.com/stretchr/testify/require"
)

// TestIndexCollisions drives the index with hashes forced into three values,
// so that every operation runs through the collision chains that real 64-bit
// hashes almost never produce, and compares it with a plain map after every
// step. Replay: COUNTERKIT_SEED=<seed> go test ./tpncounter -run '^TestIndexCollisions$'
func TestIndexCollisions(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	ix := newIndex(0)
	model := map[crdt.TxnID]*ref{}
	hashOf := func(x crdt.TxnID) uint64 { return uint64(len(x) % 3) }
	for step := 0; step < 5000; step++ {
		x := crdt.TxnID(fmt.Sprintf("t%d", rng.Intn(60)))
		h := hashOf(x)
		got, free := ix.find(x, h)
		require.Same(t, model[x], got, "step %d: find %q", step, x)
		if got == nil {
			r := &ref{amt: int64(step) + 1}
			if free {
				ix.insertFree(x, h, r)
			} else {
				ix.insert(x, h, r)
			}
			model[x] = r
		} else if rng.Intn(2) == 0 {
			ix.remove(got)
			delete(model, x)
		}
		require.Equal(t, len(model), ix.n, "step %d", step)
		seen := map[crdt.TxnID]*ref{}
		for y, r := range ix.all {
			require.Equal(t, y, r.id)
			require.NotContains(t, seen, y, "step %d: %q yielded twice", step, y)
			seen[y] = r
		}
		require.Equal(t, model, seen, "step %d", step)
	}
}

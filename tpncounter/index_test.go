package tpncounter

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
	"github.com/stretchr/testify/require"
)

// TestIndexCollisions drives the index with hashes forced into three values,
// so that every operation runs through the long probe runs of colliding
// hashes that real 64-bit hashes almost never produce (including runs that
// wrap around the end of the table), and compares it with a plain map after
// every step. Replay: COUNTERKIT_SEED=<seed> go test ./tpncounter -run '^TestIndexCollisions$'
func TestIndexCollisions(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	for _, hashes := range [][]uint64{{0, 1, 2}, {^uint64(0), ^uint64(0) - 1, 1 << 40}} {
		ix := newIndex(0)
		model := map[crdt.TxnID]int64{} // id -> amount
		hashOf := func(x crdt.TxnID) uint64 { return hashes[len(x)%len(hashes)] }
		for step := 0; step < 5000; step++ {
			x := crdt.TxnID(fmt.Sprintf("t%d", rng.Intn(60)))
			h := hashOf(x)
			got := ix.find(x, h)
			want, ok := model[x]
			require.Equal(t, ok, got != 0, "step %d: find %q", step, x)
			switch {
			case got == 0:
				amt := int64(step) + 1
				ix.insert(x, h, amt, holding{actor: "a"})
				model[x] = amt
			case rng.Intn(2) == 0:
				require.Equal(t, want, ix.at(got).amt, "step %d: %q", step, x)
				ix.remove(got)
				delete(model, x)
			default:
				require.Equal(t, want, ix.at(got).amt, "step %d: %q", step, x)
			}
			require.Equal(t, len(model), ix.n, "step %d", step)
			seen := map[crdt.TxnID]int64{}
			slots := map[slot]bool{}
			for y, s := range ix.all {
				require.Equal(t, y, ix.at(s).id)
				require.NotContains(t, seen, y, "step %d: %q yielded twice", step, y)
				require.False(t, slots[s], "step %d: slot %d yielded twice", step, s)
				require.Equal(t, s, ix.find(y, hashOf(y)), "step %d: %q unreachable", step, y)
				seen[y], slots[s] = ix.at(s).amt, true
			}
			require.Equal(t, model, seen, "step %d", step)
			// Every slot is either live or on the free list, exactly once.
			for s := ix.free; s != 0; s = ix.recs[s].next {
				require.False(t, slots[s], "step %d: slot %d both live and free", step, s)
				require.Empty(t, ix.at(s).id, "step %d: free slot %d keeps its id", step, s)
				slots[s] = true
			}
			require.Len(t, slots, len(ix.recs)-1, "step %d: slots lost", step)
			require.LessOrEqual(t, 2*ix.n, len(ix.tab), "step %d: table over half full", step)
		}
	}
}

// TestIndexHolders checks the inline and spilled holder sets of a record
// against a plain slice model, across clones.
func TestIndexHolders(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	ix := newIndex(0)
	s := ix.insert("x", hashID("x"), 1, holding{actor: "a0"})
	model := []holding{{actor: "a0"}}
	for step := 0; step < 2000; step++ {
		a := crdt.ActorID(fmt.Sprintf("a%d", rng.Intn(5)))
		i := slices.IndexFunc(model, func(h holding) bool { return h.actor == a })
		switch {
		case i < 0:
			h := holding{actor: a, folded: rng.Intn(2) == 0}
			ix.addHolder(s, h)
			model = append(model, h)
		case len(model) > 1 && rng.Intn(2) == 0:
			require.Equal(t, len(model)-1, ix.dropHolder(s, a), "step %d", step)
			model = slices.Delete(model, i, i+1)
		default:
			ix.holders(s)[i].folded = true
			model[i].folded = true
		}
		require.Equal(t, model, ix.holders(s), "step %d", step)
		require.Equal(t, len(model) == 1, ix.single(s), "step %d", step)
		c := ix.clone()
		require.Equal(t, model, c.holders(s), "step %d: clone", step)
		if !c.single(s) {
			c.holders(s)[0].actor = "changed"
			require.Equal(t, model, ix.holders(s), "step %d: clone shares holders", step)
		}
	}
}

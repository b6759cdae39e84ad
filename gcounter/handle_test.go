package gcounter_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/proptest"
)

// TestHandle: Add is Increment for the handle's actor, with its errors, for
// an actor the counter holds and one it does not yet, and after the
// entries are replaced or moved by UnmarshalBinary.
func TestHandle(t *testing.T) {
	c := gcounter.New()
	require.NoError(t, c.Increment("b", 5))
	require.NoError(t, c.Increment("a", 1))
	hb, hz := c.Handle("b"), c.Handle("z") // z is new
	require.NoError(t, hb.Add(2))
	require.NoError(t, hz.Add(3))
	require.NoError(t, hz.Add(0))
	require.Equal(t, int64(7), c.Get("b"))
	require.Equal(t, int64(3), c.Get("z"))
	require.Equal(t, int64(11), c.Value())
	require.Equal(t, crdt.ActorID("z"), hz.Actor())

	require.ErrorIs(t, hb.Add(-1), crdt.ErrInvalidAmount)
	require.ErrorIs(t, hb.Add(math.MaxInt64), crdt.ErrOverflow)
	bad := c.Handle("")
	require.ErrorIs(t, bad.Add(1), crdt.ErrInvalidActor)
	require.Equal(t, int64(11), c.Value(), "refused adds change nothing")

	// Decoding puts the actors in sorted order: a, b, z. The handle of b
	// must follow its actor, not its old position.
	other := gcounter.New()
	require.NoError(t, other.Increment("z", 1))
	require.NoError(t, other.Increment("b", 40))
	require.NoError(t, other.Increment("a", 9))
	data, err := other.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, c.UnmarshalBinary(data))
	require.NoError(t, hb.Add(1))
	require.NoError(t, hz.Add(1))
	require.Equal(t, map[crdt.ActorID]int64{"a": 9, "b": 41, "z": 2}, counts(c))
	require.Equal(t, int64(52), c.Value())
}

func counts(c *gcounter.Counter) map[crdt.ActorID]int64 {
	out := map[crdt.ActorID]int64{}
	for a, n := range c.All() {
		out[a] = n
	}
	return out
}

// TestHandleAddDoesNotAllocate: the point of a handle.
func TestHandleAddDoesNotAllocate(t *testing.T) {
	c := gcounter.New()
	require.NoError(t, c.Increment("a", 1))
	h := c.Handle("a")
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = h.Add(1) }))
}

// TestMergeAgainstMaps merges random counters, built in random orders,
// decoded (sorted), cloned and with actors in common or not, and compares
// every result with the same merge on plain maps; then increments every
// actor by name and through a handle, which must find the merged entries.
func TestMergeAgainstMaps(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	for round := range proptest.Scale(400) {
		pool := make([]crdt.ActorID, 1+rng.IntN(60))
		for i := range pool {
			pool[i] = crdt.ActorID(fmt.Sprintf("%x", rng.Uint64()>>rng.IntN(60)))
		}
		build := func() (*gcounter.Counter, map[crdt.ActorID]int64) {
			c, m := gcounter.New(), map[crdt.ActorID]int64{}
			for range rng.IntN(2 * len(pool)) {
				a, n := pool[rng.IntN(len(pool))], int64(1+rng.IntN(100))
				require.NoError(t, c.Increment(a, n))
				m[a] += n
			}
			switch rng.IntN(3) {
			case 0: // decoded: sorted
				data, err := c.MarshalBinary()
				require.NoError(t, err)
				c = gcounter.New()
				require.NoError(t, c.UnmarshalBinary(data))
			case 1:
				c = c.Clone()
			}
			return c, m
		}
		dst, want := build()
		for range 1 + rng.IntN(3) {
			src, m := build()
			if rng.IntN(4) == 0 {
				src = dst.Clone() // the same layout, then changed
				m = counts(src)
				a := pool[rng.IntN(len(pool))]
				require.NoError(t, src.Increment(a, 7))
				m[a] += 7
			}
			require.NoError(t, dst.Merge(src), "round %d", round)
			for a, n := range m {
				want[a] = max(want[a], n)
			}
			require.Equal(t, want, counts(dst), "round %d", round)
			var total int64
			for _, n := range want {
				total += n
			}
			require.Equal(t, total, dst.Value(), "round %d", round)
		}
		for a := range want {
			require.NoError(t, dst.Increment(a, 1))
			h := dst.Handle(a)
			require.NoError(t, h.Add(1))
			want[a] += 2
		}
		require.Equal(t, want, counts(dst), "round %d: lookups after the merges", round)
	}
}

package tally_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
)

// TestGCRefusesAGroupNoBatchFolds: GC folds whole expires_at groups, in
// expires_at order, and at most store.MaxBatch − 1 = 9,999 deletes a batch
// (SPEC.md 7.4). Mutators born in one microsecond share an expires_at;
// when 10,000 do, no batch holds their group, and no shard after it can
// fold either. GC then fails with crdt.ErrTooLarge naming the group,
// every time, instead of reporting the shards live and writing nothing
// (a review found it silent); reads stay exact. A group of 9,999 folds.
func TestGCRefusesAGroupNoBatchFolds(t *testing.T) {
	testsize.SkipSequential(t)
	ctx := context.Background()
	for _, n := range []int{store.MaxBatch - 1, store.MaxBatch} {
		clk := newClock()
		mem := memory.NewPartitions()
		c, err := tally.New[*tally.Sum](mem, "k", tally.Options{Clock: clk.Now})
		require.NoError(t, err)
		for range n {
			m, err := c.NewMutator() // the clock stands still: one expires_at
			require.NoError(t, err)
			require.NoError(t, m.Update(ctx, addOne(1)))
		}
		clk.Advance(time.Second)
		later, err := c.NewMutator() // a later expires_at
		require.NoError(t, err)
		require.NoError(t, later.Update(ctx, addOne(1)))
		clk.Advance(tally.DefaultLifetime + tally.DefaultGrace + time.Second)
		plan, err := c.GC(ctx)
		if n < store.MaxBatch {
			require.NoError(t, err)
			require.Equal(t, n, plan.Folded, "a group of %d folds", n)
		} else {
			require.True(t, errors.Is(err, crdt.ErrTooLarge), "a group of %d: GC %v, want crdt.ErrTooLarge", n, err)
			require.ErrorContains(t, err, "10000 shards expire at one instant")
			require.Empty(t, plan.Batch.Delete)
		}
		v, err := c.ReadComplete(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(n+1), v.Value())
	}
}

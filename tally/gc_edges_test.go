package tally_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tally"
)

func addOne(n int64) func(*tally.Sum) error { return func(s *tally.Sum) error { return s.Add(n) } }

// TestGCBatchWithinTheStoreLimit (found by a review): 10,000 final shards
// made one GC batch of 10,001 mutations, which every store refuses
// (store.MaxBatch), so every GC failed and the rows only grew until reads
// failed too. A GC folds the whole expires_at groups that fit in one
// batch; the next GC folds the rest.
func TestGCBatchWithinTheStoreLimit(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	mem := memory.NewPartitions()
	c, err := tally.New[*tally.Sum](mem, "k", tally.Options{Clock: clk.Now})
	require.NoError(t, err)
	const n = store.MaxBatch
	for range n {
		m, err := c.NewMutator()
		require.NoError(t, err)
		require.NoError(t, m.Update(ctx, addOne(1)))
		clk.Advance(time.Microsecond) // one expires_at group each
	}
	clk.Advance(tally.DefaultLifetime + tally.DefaultGrace)
	plan, err := c.GC(ctx)
	require.NoError(t, err)
	require.Equal(t, n-1, plan.Folded, "what fits beside the tally")
	require.Equal(t, 1, plan.Live)
	plan, err = c.GC(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, plan.Folded)
	v, err := c.ReadComplete(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(n), v.Value())
	rows, err := mem.Snapshot(ctx, "k", n+1, store.ReadComplete)
	require.NoError(t, err)
	require.Len(t, rows, 1, "the tally alone")
}

// TestGCCutoffBeforeItsRead (found by a review): GC took its cutoff after
// its complete read, so a GC stalled between the two (a slow read, a
// paused process) folded a shard from a read older than the shard's last
// write and hid that acknowledged write behind the tally. The cutoff is
// taken first (SPEC.md 7.5).
func TestGCCutoffBeforeItsRead(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	mem := memory.NewPartitions()
	var m *tally.Mutator[*tally.Sum]
	var once sync.Once
	var late error
	fs := faulty.NewPartitions(mem, faulty.Options{Hook: func(ctx context.Context, call faulty.Call, after bool) error {
		if after && call.Method == faulty.MethodSnapshot && call.Level == store.ReadComplete {
			once.Do(func() {
				clk.Advance(time.Hour) // the mutator still writes
				late = m.Update(ctx, addOne(10))
				clk.Advance(26 * time.Hour) // the GC's clock: past expires_at + Grace
			})
		}
		return nil
	}})
	c, err := tally.New[*tally.Sum](fs, "k", tally.Options{Clock: clk.Now})
	require.NoError(t, err)
	m, err = c.NewMutator()
	require.NoError(t, err)
	require.NoError(t, m.Update(ctx, addOne(1)))
	clk.Advance(21*time.Hour + 59*time.Minute)
	_, err = c.GC(ctx)
	require.NoError(t, err)
	require.NoError(t, late, "the late update is acknowledged")
	v, err := c.ReadComplete(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(11), v.Value(), "both acknowledged updates count")
}

// TestGCWithALargerMaxRowsReadsAgain: a counter past MaxRows refuses
// Read and GC alike (crdt.ErrTooLarge); a GC with a larger MaxRows folds
// its final shards, and reads work again.
func TestGCWithALargerMaxRowsReadsAgain(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	mem := memory.NewPartitions()
	c, err := tally.New[*tally.Sum](mem, "k", tally.Options{Clock: clk.Now, MaxRows: 3})
	require.NoError(t, err)
	for range 4 {
		m, err := c.NewMutator()
		require.NoError(t, err)
		require.NoError(t, m.Update(ctx, addOne(1)))
	}
	clk.Advance(tally.DefaultLifetime + tally.DefaultGrace + time.Second)
	_, err = c.Read(ctx)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	_, err = c.GC(ctx)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	big, err := tally.New[*tally.Sum](mem, "k", tally.Options{Clock: clk.Now, MaxRows: 5})
	require.NoError(t, err)
	plan, err := big.GC(ctx)
	require.NoError(t, err)
	require.Equal(t, 4, plan.Folded)
	v, err := c.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(4), v.Value())
}

// TestStatsPastSumsqNeverFolds checks the package documentation's "a
// Stats counter past 2^128 never folds again, so every later mutator
// leaves a shard": GC folds in expires_at order while the tally fits, the
// shard that takes the sum of squares past 2^128 stops it, and no later
// GC folds that shard or any after it, while reads stay exact.
func TestStatsPastSumsqNeverFolds(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	c, err := tally.New[*tally.Stats](memory.NewPartitions(), "k", tally.Options{Clock: clk.Now})
	require.NoError(t, err)
	observe := func(xs ...int64) {
		t.Helper()
		m, err := c.NewMutator()
		require.NoError(t, err)
		require.NoError(t, m.Update(ctx, func(s *tally.Stats) error {
			for _, x := range xs {
				if err := s.Add(x); err != nil {
					return err
				}
			}
			return nil
		}))
		clk.Advance(time.Minute) // each shard its own expires_at
	}
	for range 3 {
		observe(math.MinInt64, math.MaxInt64) // a sum of squares near 2^127 each
	}
	observe(1)
	observe(2)
	final := tally.DefaultLifetime + tally.DefaultGrace + time.Second
	clk.Advance(final)
	plan, err := c.GC(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, plan.Folded, "the third big shard takes the tally past 2^128")
	require.Equal(t, 3, plan.Live)

	observe(3)
	clk.Advance(final)
	plan, err = c.GC(ctx)
	require.NoError(t, err)
	require.Zero(t, plan.Folded, "nothing after the blocking shard folds")
	require.Equal(t, 4, plan.Live, "the new shard stays too")
	v, err := c.ReadComplete(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(9), v.Count(), "reads stay exact")
	require.False(t, v.Summary().Fits())
}

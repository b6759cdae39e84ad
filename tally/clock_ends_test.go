package tally_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tally"
)

// TestClockBeyondMicroseconds: a clock past what int64 µs hold reads as
// the end it passed, where time.UnixMicro would wrap to the other: a
// mutator past its expires_at stays expired, and a GC at a clock before
// the first µs folds nothing (its cutoff does not wrap either).
func TestClockBeyondMicroseconds(t *testing.T) {
	ctx := context.Background()
	now := time.UnixMicro(math.MaxInt64).Add(-tally.DefaultLifetime - time.Hour)
	c, err := tally.New[*tally.Sum](memory.NewPartitions(), "k", exampleConfig(&now))
	require.NoError(t, err)
	m, err := c.NewMutator()
	require.NoError(t, err)
	require.NoError(t, m.Update(ctx, obsAdd(1)))
	now = m.ExpiresAt().Add(2 * time.Hour) // past the last µs
	require.ErrorIs(t, m.Update(ctx, obsAdd(1)), crdt.ErrExpired)

	now = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	c, err = tally.New[*tally.Sum](memory.NewPartitions(), "k", exampleConfig(&now))
	require.NoError(t, err)
	m, err = c.NewMutator()
	require.NoError(t, err)
	require.NoError(t, m.Update(ctx, obsAdd(7)))
	for _, at := range []time.Time{time.UnixMicro(math.MinInt64).Add(-time.Hour), time.UnixMicro(math.MinInt64 + 1000)} {
		now = at
		plan, err := c.GC(ctx)
		require.NoError(t, err)
		require.Zero(t, plan.Folded, "clock %v: a GC folded a live shard", at)
	}
}

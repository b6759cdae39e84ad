package deltalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/timeid"
)

// Add and Apply read the clock once for the batch (SPEC.md 8.4, "Checks
// of Add and Apply"): the window checks and the write's timestamp come
// from one reading, as they do for balance's Add (the same writer). They
// read it twice (review B of stop 101).
func TestApplyReadsTheClockOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	reads := 0
	clock := func() time.Time { reads++; return now }
	c, err := deltalog.New(memory.NewPartitions(), deltalog.Options{Clock: clock})
	require.NoError(t, err)
	var b deltalog.Batch
	b.Add("a", timeid.New(now), 1)
	b.Add("b", timeid.New(now), 2)
	reads = 0
	require.NoError(t, c.Apply(ctx, &b))
	require.Equal(t, 1, reads, "deltalog Apply")

	ac, err := balance.New(memory.NewPartitions(), balance.Options{Clock: clock})
	require.NoError(t, err)
	reads = 0
	require.NoError(t, ac.Add(ctx, "acct", timeid.New(now), 5))
	require.Equal(t, 1, reads, "balance Add")
}

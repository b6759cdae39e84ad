package deltalog_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
)

// TestMergeAndCompactCheckFirst: Merge and Compact refuse an invalid key
// and a done context before anything else, whatever the clock reads
// (Counters: "before calling the store, every method refuses ..."), and
// both refuse a clock outside the Unix nanoseconds a merge cell records
// (Options.Clock): Compact had answered nothing to compact, and past 2262
// compared a wrapped horizon.
func TestMergeAndCompactCheckFirst(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, at := range []time.Time{{}, time.Unix(0, 0).Add(-time.Second), time.Unix(0, math.MaxInt64).Add(time.Hour), time.Date(2700, 1, 1, 0, 0, 0, 0, time.UTC), base} {
		c, err := deltalog.New(memory.NewPartitions(), advOptions(func() time.Time { return at }))
		require.NoError(t, err)
		_, _, err = c.Merge(context.Background(), "")
		require.ErrorIs(t, err, crdt.ErrInvalidKey, "merge, clock %v", at)
		_, err = c.Compact(context.Background(), "")
		require.ErrorIs(t, err, crdt.ErrInvalidKey, "compact, clock %v", at)
		_, _, err = c.Merge(done, "k")
		require.ErrorIs(t, err, context.Canceled, "merge, clock %v", at)
		_, err = c.Compact(done, "k")
		require.ErrorIs(t, err, context.Canceled, "compact, clock %v", at)
		_, _, err = c.Merge(context.Background(), "k")
		_, cerr := c.Compact(context.Background(), "k")
		if at == base {
			require.NoError(t, err)
			require.NoError(t, cerr)
			continue
		}
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "merge, clock %v", at)
		require.ErrorIs(t, cerr, crdt.ErrInvalidConfig, "compact, clock %v", at)
	}
}

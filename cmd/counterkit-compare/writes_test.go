package main

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/store/faulty"
)

// The help says the writes column is "store writes, resends included".
// With no fault, no timeout and one worker, every ledger credit writes
// the account's key and the transaction's record: count the Puts the
// store received and compare with the column.
func TestWritesColumnCountsStoreWrites(t *testing.T) {
	cfg := goldenConfig()
	cfg.count, cfg.runID = 10, "nuwrites"
	var puts atomic.Int64
	sib := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{Hook: func(_ context.Context, c faulty.Call, after bool) error {
		if after && c.Method == faulty.MethodPut {
			puts.Add(1)
		}
		return nil
	}})
	targets, err := compareTargets([]string{"ledger"}, cfg, nil, sib, nil)
	require.NoError(t, err)
	rows := runComparison(context.Background(), cfg, targets, nil)
	require.Len(t, rows, 1)
	r := rows[0]
	require.Empty(t, r.Error)
	require.Zero(t, r.Drift)
	t.Logf("writes column %d, store puts %d, distinct %d", r.Writes, puts.Load(), r.Distinct)
	require.Equal(t, puts.Load(), r.Writes, "the writes column is the number of store writes")
}

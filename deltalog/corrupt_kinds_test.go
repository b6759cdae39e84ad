package deltalog_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// TestCellOfAnotherTypeOrTooLargeIsCorrupt (found by a review): a stored
// cell of another type, or larger than a cell can be, stops Read, Merge
// and Compact with crdt.ErrCorruptEncoding, as every other damaged cell
// does (the decoder's own kind is kept beside it).
func TestCellOfAnotherTypeOrTooLargeIsCorrupt(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewPartitions()
	dc, err := deltalog.New(mem, deltalog.Options{})
	require.NoError(t, err)
	require.NoError(t, dc.Add(ctx, "k", timeid.New(time.Now()), 5))
	rows, err := mem.Snapshot(ctx, "k", 10, store.ReadComplete)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	good, ts := rows[0], int64(1)<<60
	for name, tc := range map[string]struct {
		value []byte
		kind  error
	}{
		"another type": {[]byte(strings.Replace(string(good.Value), "deltalog.cell", "deltalog.celx", 1)), crdt.ErrTypeMismatch},
		"too large":    {append(append([]byte(nil), good.Value...), make([]byte, 300)...), crdt.ErrTooLarge},
	} {
		t.Run(name, func(t *testing.T) {
			ts++ // over the cell, and over the other case's
			require.NoError(t, mem.Apply(ctx, []store.Mutation{{Partition: "k", Op: store.OpPut, Key: good.Key, Value: tc.value, Timestamp: ts}}))
			_, err := dc.Read(ctx, "k")
			require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
			require.ErrorIs(t, err, tc.kind)
			_, _, err = dc.Merge(ctx, "k")
			require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
			_, err = dc.Compact(ctx, "k")
			require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
		})
	}
}

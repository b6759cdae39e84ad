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
	now := time.Now()
	dc, err := deltalog.New(mem, deltalog.Options{Clock: func() time.Time { return now }})
	require.NoError(t, err)
	require.NoError(t, dc.Add(ctx, "k", timeid.New(now), 5))
	// Past Window, SafetyMargin and CompactGrace, so that Merge and
	// Compact scan the cell too (SPEC.md 8.5).
	now = now.Add(15 * time.Minute)
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

// TestMergeCellNewerThanTheWindowIsCorrupt: a merge cell whose id is not
// older than now − Window, which no merge writes (SPEC.md 8.5), stops Read
// with crdt.ErrCorruptEncoding; read, it would hide every cell Add still
// accepts below it. Merge and Compact, which scan from their cutoffs, do
// not reach it and write nothing. One a microsecond older than now −
// Window is read.
func TestMergeCellNewerThanTheWindowIsCorrupt(t *testing.T) {
	ctx := context.Background()
	for name, ahead := range map[string]time.Duration{
		"a day ahead":       24 * time.Hour,
		"inside the window": -30 * time.Second,
		"at now − Window":   -time.Minute,
		"older":             -time.Minute - time.Microsecond,
	} {
		t.Run(name, func(t *testing.T) {
			clock := &fakeClock{now: base}
			opts := testOptions(clock) // Window 1m
			mem := memory.NewPartitions()
			dc, err := deltalog.New(mem, opts)
			require.NoError(t, err)
			require.NoError(t, dc.Add(ctx, "k", timeid.New(base.Add(-40*time.Second)), 5))
			m := deltalog.Cell{ID: timeid.New(base.Add(ahead)), Kind: deltalog.KindMerge, Delta: 1,
				Stats: deltalog.Stats{Count: 1, Sum: 1, Min: 1, Max: 1, SumSqLo: 1}, Written: base.Add(-time.Hour).UnixNano()}
			b, err := m.MarshalBinary()
			require.NoError(t, err)
			require.NoError(t, mem.Apply(ctx, []store.Mutation{{Partition: "k", Op: store.OpPut, Key: deltalog.EncodeKey(m.ID, m.Kind), Value: b, Timestamp: 1}}))
			require.NoError(t, dc.Add(ctx, "k", timeid.New(base), 7))
			before, err := mem.Snapshot(ctx, "k", 100, store.ReadComplete)
			require.NoError(t, err)
			r, err := dc.Read(ctx, "k")
			if name == "older" {
				require.NoError(t, err)
				require.Equal(t, int64(13), r.Value)
				return
			}
			require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
			require.ErrorContains(t, err, "not older than now − Window")
			_, merged, err := dc.Merge(ctx, "k")
			require.NoError(t, err)
			require.False(t, merged)
			deleted, err := dc.Compact(ctx, "k")
			require.NoError(t, err)
			require.False(t, deleted)
			after, err := mem.Snapshot(ctx, "k", 100, store.ReadComplete)
			require.NoError(t, err)
			require.Equal(t, before, after, "nothing written")
		})
	}
}

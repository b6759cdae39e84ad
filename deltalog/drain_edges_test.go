package deltalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// TestDrainDenseTicks (found by a review): more than MaxMergeCells cells
// close together below the cutoff. In distinct 100 ns ticks the drain
// splits them (it halves down to one tick); in one tick it merges them
// with one scan without the limit, as merges did before the drain
// (SPEC.md 8.5, "Drain"). Every merge succeeds and every read is exact;
// with a drain that gave up at 1 µs with ErrTooLarge, every merge after
// the cluster passed the cutoff failed, for good.
func TestDrainDenseTicks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		max, n  int
		spacing time.Duration
	}{
		{"MaxMergeCells 1, two updates 500 ns apart", 1, 2, 500 * time.Nanosecond},
		{"MaxMergeCells 3, four updates 200 ns apart", 3, 4, 200 * time.Nanosecond},
		{"MaxMergeCells 1000, 1001 updates in one tick", 1000, 1001, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			clock := &fakeClock{now: base}
			opts := testOptions(clock)
			opts.MaxMergeCells = tc.max
			c, err := deltalog.New(memory.NewPartitions(), opts)
			require.NoError(t, err)
			var b deltalog.Batch
			for i := range tc.n {
				b.Add("k", timeid.FromParts(base.Add(time.Duration(i)*tc.spacing), uint16(i), 1), 1)
			}
			require.NoError(t, c.Apply(ctx, &b))
			total := int64(tc.n)
			for s := 5; s <= 300; s += 5 { // five minutes, one update and one merge and compaction every 5 s
				clock.Advance(5 * time.Second)
				require.NoError(t, c.Add(ctx, "k", timeid.FromParts(clock.now, 0, 2), 1))
				total++
				_, _, err := c.Merge(ctx, "k")
				require.NoError(t, err, "merge at %ds", s)
				_, err = c.Compact(ctx, "k")
				require.NoError(t, err)
			}
			r, err := c.Read(ctx, "k")
			require.NoError(t, err)
			require.Equal(t, total, r.Value)
			require.LessOrEqual(t, r.Cells, 20, "the cluster is merged: a read scans the last Window + SafetyMargin")
		})
	}
}

// TestDrainBelowTheNewestMergeCell (found by a review): a drain scan may
// land under the newest merge cell, in what that cell covers before Compact
// deletes it, where a row that does not decode lies and no read reaches.
// Such a scan counts as one that read too many: merges do not fail on it,
// they fold the backlog above, every read exact, and Compact deletes the
// row.
func TestDrainBelowTheNewestMergeCell(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{now: base.Add(time.Hour)}
	opts := testOptions(clock)
	opts.MaxMergeCells = 2
	mem := memory.NewPartitions()
	c, err := deltalog.New(mem, opts)
	require.NoError(t, err)
	cutoff := clock.now.Add(-opts.Window - opts.SafetyMargin)
	var l deltalog.Log
	put := func(cell deltalog.Cell) {
		v, err := cell.MarshalBinary()
		require.NoError(t, err)
		require.NoError(t, mem.Apply(ctx, []store.Mutation{{Partition: "k", Op: store.OpPut, Key: deltalog.EncodeKey(cell.ID, cell.Kind), Value: v, Timestamp: 1}}))
	}
	add := func(at time.Duration) deltalog.Cell {
		cell := deltalog.Cell{ID: timeid.FromParts(cutoff.Add(at), 1, 1), Kind: deltalog.KindRegular, Delta: 1}
		require.NoError(t, l.Insert(cell))
		put(cell)
		return cell
	}
	add(-40 * time.Second)
	add(-35 * time.Second)
	newest := add(-30 * time.Second)
	m, ok, err := l.MergeBefore(newest.ID.Time().Add(time.Nanosecond), clock.now.Add(-time.Minute))
	require.NoError(t, err)
	require.True(t, ok)
	put(m)
	bad := timeid.FromParts(cutoff.Add(-38*time.Second), 9, 9) // under m: no read reaches it
	require.NoError(t, mem.Apply(ctx, []store.Mutation{{Partition: "k", Op: store.OpPut, Key: deltalog.EncodeKey(bad, deltalog.KindRegular), Value: []byte{0xc1}, Timestamp: 1}}))
	for i := range 6 { // the backlog above m
		add(-time.Duration(25-3*i) * time.Second)
	}
	total := int64(9)
	for i := range 10 {
		_, _, err := c.Merge(ctx, "k")
		require.NoError(t, err, "merge %d", i)
		r, err := c.Read(ctx, "k")
		require.NoError(t, err)
		require.Equal(t, total, r.Value)
		clock.Advance(time.Second)
	}
	deleted, err := c.Compact(ctx, "k")
	require.NoError(t, err)
	require.True(t, deleted)
	r, err := c.Read(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, total, r.Value)
	require.Equal(t, 1, r.Cells, "the backlog is merged")
}

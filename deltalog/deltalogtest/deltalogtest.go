// Package deltalogtest runs deltalog's counter-level behaviours against any
// store.Partitions, so that every backend shows the windowed log works on
// it. A backend runs it with one call:
//
//	func TestDeltaLog(t *testing.T) {
//	    deltalogtest.Run(t, func(t *testing.T) store.Partitions { return newStore(t) })
//	}
//
// Each behaviour is its own subtest with a fresh store from newStore, and
// only deltalog.Counters and the store.Partitions interface are used, so the
// suite runs unchanged against a real database. Counter keys are unique per
// subtest, so a backend may share one table between subtests. The store's
// own contract (ordering, timestamps, atomicity) is checked by package
// store/storetest.
package deltalogtest

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/internal/rowlog/rowlogtest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// cells returns counter's stored cells in row order, checking that every
// row decodes and that its key is its cell's.
func cells(t *testing.T, s store.Partitions, counter string) []deltalog.Cell {
	t.Helper()
	var out []deltalog.Cell
	require.NoError(t, s.Scan(context.Background(), counter, nil, store.ReadComplete, func(r store.Row) bool {
		id, kind, err := deltalog.DecodeKey(r.Key)
		require.NoError(t, err)
		var c deltalog.Cell
		require.NoError(t, c.UnmarshalBinary(r.Value))
		require.Equal(t, id, c.ID)
		require.Equal(t, kind, c.Kind)
		out = append(out, c)
		return true
	}))
	return out
}

// kit is deltalog's side of the behaviours it shares with balance.
var kit = rowlogtest.Kit[*deltalog.Counters, deltalog.Batch]{
	Name: "deltalog", Nouns: "Counters",
	New: func(s store.Partitions, now func() time.Time) (*deltalog.Counters, error) {
		// Short windows, so merges and compactions happen within a test.
		return deltalog.New(s, deltalog.Options{Window: time.Minute, FutureSkew: time.Second,
			SafetyMargin: 5 * time.Second, MaxScan: 30 * time.Second, CompactGrace: 40 * time.Second, Clock: now})
	},
	Add:   (*deltalog.Counters).Add,
	Apply: (*deltalog.Counters).Apply,
	Batch: (*deltalog.Batch).Add,
	Read: func(c *deltalog.Counters, ctx context.Context, counter string) (int64, error) {
		r, err := c.Read(ctx, counter)
		return r.Value, err
	},
	Merge: func(c *deltalog.Counters, ctx context.Context, counter string) error {
		_, ok, err := c.Merge(ctx, counter)
		if err == nil && !ok {
			err = errors.New("nothing merged")
		}
		return err
	},
	MergeAfter: 2 * time.Minute,
	Delete:     (*deltalog.Counters).Delete,
	Rows:       func(t *testing.T, s store.Partitions, counter string) int { return len(cells(t, s, counter)) },
}

// Run runs every behaviour against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) store.Partitions) {
	t.Helper()
	ctx := context.Background()
	read := func(t *testing.T, c *deltalog.Counters, k string) deltalog.Reading {
		t.Helper()
		r, err := c.Read(ctx, k)
		require.NoError(t, err)
		return r
	}
	kit.Run(t, newStore)

	t.Run("EmptyCounterReadsZero", func(t *testing.T) {
		c, _, _, k := kit.Setup(t, newStore)
		require.Equal(t, deltalog.Reading{}, read(t, c, k))
	})
	t.Run("CellsAreStoredNewestFirst", func(t *testing.T) {
		c, s, clk, k := kit.Setup(t, newStore)
		// Equal timestamps: the tail decides, as signed bytes.
		ids := []deltalog.ID{timeid.FromParts(clk.T, 0x0001, 1), timeid.FromParts(clk.T, 0x00ff, 1),
			timeid.FromParts(clk.T.Add(-time.Second), 5, 5), timeid.FromParts(clk.T.Add(-2*time.Second), 5, 5)}
		for i, id := range []deltalog.ID{ids[2], ids[0], ids[3], ids[1]} {
			require.NoError(t, c.Add(ctx, k, id, int64(i+1)))
		}
		got := cells(t, s, k)
		require.Len(t, got, 4)
		for i := 1; i < len(got); i++ {
			require.Equal(t, -1, deltalog.CompareCells(got[i-1], got[i]), "row %d", i)
		}
		require.Equal(t, []deltalog.ID{ids[0], ids[1], ids[2], ids[3]}, []deltalog.ID{got[0].ID, got[1].ID, got[2].ID, got[3].ID})
	})
	t.Run("ExtremeValuesRoundTrip", func(t *testing.T) {
		c, _, clk, k := kit.Setup(t, newStore)
		require.NoError(t, c.Add(ctx, k, timeid.New(clk.T), math.MinInt64))
		require.NoError(t, c.Add(ctx, k, timeid.New(clk.T), math.MaxInt64))
		r := read(t, c, k)
		require.Equal(t, int64(-1), r.Value)
		require.Equal(t, int64(math.MinInt64), r.Stats.Min)
		require.Equal(t, int64(math.MaxInt64), r.Stats.Max)
		clk.T = clk.T.Add(2 * time.Minute)
		m, ok, err := c.Merge(ctx, k)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, r.Stats, m.Stats, "the merge cell carries the exact aggregates")
		require.Equal(t, r.Stats, read(t, c, k).Stats)
	})
	t.Run("PastInt64KeepsTheKey", func(t *testing.T) {
		// SPEC.md 8.3: a read past int64 is exact (clamped), the merge cell
		// goes where it fits, and a later update brings the sum back.
		c, _, clk, k := kit.Setup(t, newStore)
		require.NoError(t, c.Add(ctx, k, timeid.New(clk.T), math.MaxInt64))
		clk.T = clk.T.Add(time.Second)
		require.NoError(t, c.Add(ctx, k, timeid.New(clk.T), 1))
		r := read(t, c, k)
		require.Equal(t, int64(math.MaxInt64), r.Value)
		require.Equal(t, "9223372036854775808", r.Stats.BigSum().String())
		clk.T = clk.T.Add(2 * time.Minute)
		m, ok, err := c.Merge(ctx, k)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, int64(1), m.Stats.Count, "the merge cell takes 2^63 - 1 alone")
		require.NoError(t, c.Add(ctx, k, timeid.New(clk.T), -2))
		clk.T = clk.T.Add(2 * time.Minute)
		m, ok, err = c.Merge(ctx, k)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, int64(3), m.Stats.Count)
		require.Equal(t, int64(math.MaxInt64-1), read(t, c, k).Value)
	})
	t.Run("LongReadCrossesPages", func(t *testing.T) {
		c, s, clk, k := kit.Setup(t, newStore)
		start := clk.T
		var want int64
		var b deltalog.Batch
		for i := range 6000 {
			b.Add(k, timeid.FromParts(start.Add(-time.Duration(i)*time.Millisecond), uint16(i%3), uint64(i)), int64(i%7+1))
			want += int64(i%7 + 1)
			if b.Len() == 500 {
				require.NoError(t, c.Apply(ctx, &b))
				b = deltalog.Batch{}
			}
		}
		r := read(t, c, k)
		require.Equal(t, want, r.Value)
		require.Equal(t, 6000, r.Cells)
		require.Len(t, cells(t, s, k), 6000)
	})
	t.Run("MergeThenCompactKeepsTheValue", func(t *testing.T) {
		c, s, clk, k := kit.Setup(t, newStore)
		var want int64
		for i := range 30 {
			d := int64(i - 10)
			if d == 0 {
				continue
			}
			want += d
			require.NoError(t, c.Add(ctx, k, timeid.New(clk.T), d))
			clk.T = clk.T.Add(time.Second)
		}
		clk.T = clk.T.Add(50 * time.Second)
		m, ok, err := c.Merge(ctx, k)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, want, read(t, c, k).Value)
		before := cells(t, s, k)
		clk.T = clk.T.Add(time.Minute)
		did, err := c.Compact(ctx, k)
		require.NoError(t, err)
		require.True(t, did)
		var kept []deltalog.Cell
		for _, cell := range before {
			if deltalog.CompareCells(cell, m) <= 0 {
				kept = append(kept, cell)
			}
		}
		require.Equal(t, kept, cells(t, s, k), "compaction deletes exactly what the merge cell covers")
		r := read(t, c, k)
		require.Equal(t, want, r.Value)
		require.Equal(t, len(kept), r.Cells)
		did, err = c.Compact(ctx, k)
		require.NoError(t, err)
		require.True(t, did, "compacting again is harmless")
		require.Equal(t, kept, cells(t, s, k))
	})
	t.Run("MergeDrainsABacklog", func(t *testing.T) {
		// SPEC.md 8.5, "Drain": with MaxMergeCells 3, a merge that meets
		// 20 cells below its cutoff folds the oldest first, each merge
		// scanning from a time below the cutoff, until one folds them all.
		_, s, clk, k := kit.Setup(t, newStore)
		c, err := deltalog.New(s, deltalog.Options{Window: time.Minute, FutureSkew: time.Second, SafetyMargin: 5 * time.Second,
			MaxScan: 30 * time.Second, CompactGrace: 40 * time.Second, MaxMergeCells: 3, Clock: func() time.Time { return clk.T }})
		require.NoError(t, err)
		var want int64
		for i := range 20 {
			want += int64(i + 1)
			require.NoError(t, c.Add(ctx, k, timeid.New(clk.T), int64(i+1)))
			clk.T = clk.T.Add(time.Second)
		}
		clk.T = clk.T.Add(2 * time.Minute)
		var folded []int64
		for range 20 {
			m, ok, err := c.Merge(ctx, k)
			require.NoError(t, err)
			if !ok {
				break
			}
			folded = append(folded, m.Stats.Count)
			require.Equal(t, want, read(t, c, k).Value, "after merges folding %v updates", folded)
		}
		require.Greater(t, len(folded), 1, "the first merge drains")
		require.Equal(t, int64(20), folded[len(folded)-1], "the last merge cell holds every update")
		for i := 1; i < len(folded); i++ {
			require.Greater(t, folded[i], folded[i-1], "each merge folds more: %v", folded)
		}
		require.Equal(t, 1, read(t, c, k).Cells)
	})
}

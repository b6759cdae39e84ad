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
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// clock is a settable clock, safe for the single goroutine of a subtest.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// options are short windows so merges and compactions happen within a test.
func options(c *clock) deltalog.Options {
	return deltalog.Options{Window: time.Minute, FutureSkew: time.Second,
		SafetyMargin: 5 * time.Second, MaxScan: 30 * time.Second, CompactGrace: 40 * time.Second,
		Clock: c.Now}
}

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

// Run runs every behaviour against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) store.Partitions) {
	t.Helper()
	key := func(t *testing.T) string { return fmt.Sprintf("deltalog-%s-%d", t.Name(), time.Now().UnixNano()) }
	ctx := context.Background()
	setup := func(t *testing.T) (*deltalog.Counters, store.Partitions, *clock, string) {
		s := newStore(t)
		c := &clock{now: time.Now().UTC().Truncate(time.Second)}
		counters, err := deltalog.New(s, options(c))
		require.NoError(t, err)
		return counters, s, c, key(t)
	}
	read := func(t *testing.T, c *deltalog.Counters, k string) deltalog.Reading {
		t.Helper()
		r, err := c.Read(ctx, k)
		require.NoError(t, err)
		return r
	}

	t.Run("EmptyCounterReadsZero", func(t *testing.T) {
		c, _, _, k := setup(t)
		require.Equal(t, deltalog.Reading{}, read(t, c, k))
	})
	t.Run("CellsAreStoredNewestFirst", func(t *testing.T) {
		c, s, clk, k := setup(t)
		// Equal timestamps: the tail decides, as signed bytes.
		ids := []deltalog.ID{timeid.FromParts(clk.now, 0x0001, 1), timeid.FromParts(clk.now, 0x00ff, 1),
			timeid.FromParts(clk.now.Add(-time.Second), 5, 5), timeid.FromParts(clk.now.Add(-2*time.Second), 5, 5)}
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
	t.Run("RetryIsCountedOnce", func(t *testing.T) {
		c, s, clk, k := setup(t)
		id := timeid.New(clk.now)
		for range 3 {
			require.NoError(t, c.Add(ctx, k, id, 4))
		}
		require.Len(t, cells(t, s, k), 1)
		require.Equal(t, int64(4), read(t, c, k).Value)
	})
	t.Run("ExtremeValuesRoundTrip", func(t *testing.T) {
		c, _, clk, k := setup(t)
		require.NoError(t, c.Add(ctx, k, timeid.New(clk.now), math.MinInt64))
		require.NoError(t, c.Add(ctx, k, timeid.New(clk.now), math.MaxInt64))
		r := read(t, c, k)
		require.Equal(t, int64(-1), r.Value)
		require.Equal(t, int64(math.MinInt64), r.Stats.Min)
		require.Equal(t, int64(math.MaxInt64), r.Stats.Max)
		clk.now = clk.now.Add(2 * time.Minute)
		m, ok, err := c.Merge(ctx, k)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, r.Stats, m.Stats, "the merge cell carries the exact aggregates")
		require.Equal(t, r.Stats, read(t, c, k).Stats)
	})
	t.Run("BatchSpansCountersAtomically", func(t *testing.T) {
		c, s, clk, a := setup(t)
		b := a + "-b"
		id := timeid.New(clk.now)
		var ok deltalog.Batch
		ok.Add(a, id, -5)
		ok.Add(b, id, 5)
		require.NoError(t, c.Apply(ctx, &ok))
		require.Equal(t, int64(-5), read(t, c, a).Value)
		require.Equal(t, int64(5), read(t, c, b).Value)
		var bad deltalog.Batch
		bad.Add(a+"-c", timeid.New(clk.now), 1)
		bad.Add(a+"-d", timeid.New(clk.now), 0)
		require.ErrorIs(t, c.Apply(ctx, &bad), crdt.ErrInvalidAmount)
		require.Empty(t, cells(t, s, a+"-c"), "an invalid batch writes nothing")
	})
	t.Run("CountersAreIsolated", func(t *testing.T) {
		c, _, clk, a := setup(t)
		require.NoError(t, c.Add(ctx, a, timeid.New(clk.now), 1))
		require.NoError(t, c.Add(ctx, a+"x", timeid.New(clk.now), 2))
		require.NoError(t, c.Delete(ctx, a+"x"))
		require.Equal(t, int64(1), read(t, c, a).Value)
		require.Zero(t, read(t, c, a+"x").Value)
	})
	t.Run("LongReadCrossesPages", func(t *testing.T) {
		c, s, clk, k := setup(t)
		start := clk.now
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
		c, s, clk, k := setup(t)
		var want int64
		for i := range 30 {
			d := int64(i - 10)
			if d == 0 {
				continue
			}
			want += d
			require.NoError(t, c.Add(ctx, k, timeid.New(clk.now), d))
			clk.now = clk.now.Add(time.Second)
		}
		clk.now = clk.now.Add(50 * time.Second)
		m, ok, err := c.Merge(ctx, k)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, want, read(t, c, k).Value)
		before := cells(t, s, k)
		clk.now = clk.now.Add(time.Minute)
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
	t.Run("DeleteRemovesEverythingAndTheKeyIsReusable", func(t *testing.T) {
		c, s, clk, k := setup(t)
		require.NoError(t, c.Add(ctx, k, timeid.New(clk.now), 3))
		clk.now = clk.now.Add(2 * time.Minute)
		_, ok, err := c.Merge(ctx, k)
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, c.Delete(ctx, k))
		require.Empty(t, cells(t, s, k))
		require.NoError(t, c.Delete(ctx, k), "deleting an empty counter is fine")
		require.NoError(t, c.Add(ctx, k, timeid.New(clk.now), 2))
		require.Equal(t, int64(2), read(t, c, k).Value, "a write after the delete counts")
	})
	t.Run("CancelledContextWritesNothing", func(t *testing.T) {
		c, s, clk, k := setup(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := c.Add(cctx, k, timeid.New(clk.now), 1)
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, crdt.ErrUnavailable)
		require.Empty(t, cells(t, s, k))
	})
	t.Run("CorruptRowsAreReported", func(t *testing.T) {
		c, s, clk, k := setup(t)
		id := timeid.New(clk.now)
		other := deltalog.Cell{ID: timeid.New(clk.now), Kind: deltalog.KindRegular, Delta: 2}
		v, err := other.MarshalBinary()
		require.NoError(t, err)
		put := func(partition string, key, value []byte) {
			require.NoError(t, s.Apply(ctx, []store.Mutation{{Partition: partition, Op: store.OpPut,
				Key: key, Value: value, Timestamp: clk.now.UnixMicro()}}))
		}
		// A row whose key names another cell than its value.
		put(k, deltalog.EncodeKey(id, deltalog.KindRegular), v)
		_, err = c.Read(ctx, k)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
		// A row that does not decode.
		put(k+"-2", deltalog.EncodeKey(id, deltalog.KindRegular), []byte("not a cell"))
		_, err = c.Read(ctx, k+"-2")
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
		// A key that is not a cell key.
		put(k+"-3", []byte("x"), v)
		_, _, err = c.Merge(ctx, k+"-3")
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	})
}

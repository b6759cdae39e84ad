// Package deltalogtest is the conformance suite for deltalog.Store
// implementations. Every backend runs it with one call:
//
//	func TestConformance(t *testing.T) {
//	    deltalogtest.Run(t, func(t *testing.T) deltalog.Store { return newStore(t) })
//	}
//
// Each behaviour is its own subtest with a fresh store from newStore, and
// only the Store interface is used, so the suite runs unchanged against a
// real database. Counter keys are unique per subtest, so a backend may
// share one table between subtests.
package deltalogtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/internal/exact"
)

var epoch = time.Date(2024, 2, 2, 0, 0, 0, 0, time.UTC)

func regular(at time.Duration, node uint64, delta int64) deltalog.Cell {
	return deltalog.Cell{ID: deltalog.IDFromParts(epoch.Add(at), 7, node), Kind: deltalog.KindRegular, Delta: delta}
}

// mergeAt returns a merge cell at c's id whose stats are those of count
// deltas summing to sum: sum itself and count − 1 zeros, so they pass
// Cell.Validate.
func mergeAt(c deltalog.Cell, sum int64, count int64) deltalog.Cell {
	sq := exact.Square(sum)
	st := deltalog.Stats{Count: count, Sum: sum, Min: sum, Max: sum, SumSqHi: sq.Hi, SumSqLo: sq.Lo}
	if count > 1 {
		st.Min, st.Max = min(sum, 0), max(sum, 0)
	}
	return deltalog.Cell{ID: c.ID, Kind: deltalog.KindMerge, Delta: sum, Written: epoch.UnixNano(), Stats: st}
}

func scanAll(t *testing.T, s deltalog.Store, counter string) []deltalog.Cell {
	t.Helper()
	var out []deltalog.Cell
	require.NoError(t, s.Scan(context.Background(), counter, func(c deltalog.Cell) bool {
		out = append(out, c)
		return true
	}))
	return out
}

func insert(t *testing.T, s deltalog.Store, counter string, cells ...deltalog.Cell) {
	t.Helper()
	entries := make([]deltalog.Entry, len(cells))
	for i, c := range cells {
		entries[i] = deltalog.Entry{Counter: counter, Cell: c}
	}
	require.NoError(t, s.Insert(context.Background(), entries))
}

func sorted(cells []deltalog.Cell) []deltalog.Cell {
	out := append([]deltalog.Cell(nil), cells...)
	sort.Slice(out, func(i, j int) bool { return deltalog.CompareCells(out[i], out[j]) < 0 })
	return out
}

// Run runs every conformance test against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) deltalog.Store) {
	t.Helper()
	key := func(t *testing.T) string { return fmt.Sprintf("conf-%s-%d", t.Name(), time.Now().UnixNano()) }
	ctx := context.Background()

	t.Run("EmptyCounterScansNothing", func(t *testing.T) {
		require.Empty(t, scanAll(t, newStore(t), key(t)))
	})
	t.Run("ScanIsClusteringOrder", func(t *testing.T) {
		s, k := newStore(t), key(t)
		cells := []deltalog.Cell{regular(0, 1, 1), regular(time.Second, 1, 2), regular(2*time.Second, 1, -3)}
		cells = append(cells, mergeAt(cells[1], 3, 2))
		// Equal timestamps: order decided by the tail as signed bytes.
		cells = append(cells,
			deltalog.Cell{ID: deltalog.IDFromParts(epoch.Add(5*time.Second), 0x0001, 1), Kind: deltalog.KindRegular, Delta: 5},
			deltalog.Cell{ID: deltalog.IDFromParts(epoch.Add(5*time.Second), 0x00ff, 1), Kind: deltalog.KindRegular, Delta: 6})
		insert(t, s, k, cells[3], cells[0], cells[5], cells[2], cells[4], cells[1])
		got := scanAll(t, s, k)
		require.Equal(t, sorted(cells), got)
		require.Equal(t, deltalog.KindMerge, got[3].Kind, "merge cell precedes the regular cell with its id")
		require.Equal(t, deltalog.KindRegular, got[4].Kind)
	})
	t.Run("CellsRoundTripExactly", func(t *testing.T) {
		s, k := newStore(t), key(t)
		r := regular(0, 1, math.MinInt64)
		m := deltalog.Cell{ID: r.ID, Kind: deltalog.KindMerge, Delta: math.MaxInt64, Written: 1234567890123456789,
			Stats: deltalog.Stats{Count: math.MaxInt64, Sum: math.MaxInt64, Min: math.MinInt64, Max: math.MaxInt64, SumSqHi: math.MaxUint64, SumSqLo: math.MaxUint64}}
		insert(t, s, k, r, m)
		require.Equal(t, []deltalog.Cell{m, r}, scanAll(t, s, k))
	})
	t.Run("InsertIsAnUpsert", func(t *testing.T) {
		s, k := newStore(t), key(t)
		c := regular(0, 1, 4)
		insert(t, s, k, c)
		insert(t, s, k, c)
		require.Equal(t, []deltalog.Cell{c}, scanAll(t, s, k), "rewriting a cell keeps one cell")
		c2 := c
		c2.Delta = 9
		insert(t, s, k, c2)
		require.Equal(t, []deltalog.Cell{c2}, scanAll(t, s, k), "last write wins")
	})
	t.Run("InsertSpansCounters", func(t *testing.T) {
		s, a := newStore(t), key(t)
		b := a + "-b"
		c := regular(0, 1, 4)
		require.NoError(t, s.Insert(ctx, []deltalog.Entry{{Counter: a, Cell: c}, {Counter: b, Cell: regular(0, 1, -4)}}))
		require.Len(t, scanAll(t, s, a), 1)
		require.Equal(t, int64(-4), scanAll(t, s, b)[0].Delta)
	})
	t.Run("InvalidCellIsRefusedAndNothingWritten", func(t *testing.T) {
		s, k := newStore(t), key(t)
		err := s.Insert(ctx, []deltalog.Entry{{Counter: k, Cell: regular(0, 1, 1)}, {Counter: k, Cell: deltalog.Cell{Kind: deltalog.KindRegular, Delta: 1}}})
		require.Error(t, err)
		require.True(t, errors.Is(err, crdt.ErrInvalidTxnID) || errors.Is(err, crdt.ErrInvalidAmount))
		require.Empty(t, scanAll(t, s, k))
	})
	t.Run("ScanStopsWhenAsked", func(t *testing.T) {
		s, k := newStore(t), key(t)
		var cells []deltalog.Cell
		for i := range 25 {
			cells = append(cells, regular(time.Duration(i)*time.Second, 1, int64(i+1)))
		}
		insert(t, s, k, cells...)
		var seen []deltalog.Cell
		require.NoError(t, s.Scan(ctx, k, func(c deltalog.Cell) bool {
			seen = append(seen, c)
			return len(seen) < 3
		}))
		require.Equal(t, sorted(cells)[:3], seen)
	})
	t.Run("LongScanCrossesPages", func(t *testing.T) {
		s, k := newStore(t), key(t)
		var cells []deltalog.Cell
		for i := range 6000 {
			cells = append(cells, regular(time.Duration(i)*time.Millisecond, uint64(i%3), 1))
		}
		for i := 0; i < len(cells); i += 500 {
			insert(t, s, k, cells[i:min(i+500, len(cells))]...)
		}
		require.Equal(t, sorted(cells), scanAll(t, s, k))
	})
	t.Run("CountersAreIsolated", func(t *testing.T) {
		s, a := newStore(t), key(t)
		insert(t, s, a, regular(0, 1, 1))
		insert(t, s, a+"x", regular(0, 2, 2))
		require.Len(t, scanAll(t, s, a), 1)
		require.NoError(t, s.DeleteCounter(ctx, a+"x"))
		require.Len(t, scanAll(t, s, a), 1)
	})
	t.Run("DeleteCoveredRemovesExactlyWhatTheMergeCovers", func(t *testing.T) {
		s, k := newStore(t), key(t)
		var cells []deltalog.Cell
		for i := range 8 {
			cells = append(cells, regular(time.Duration(i)*time.Second, 1, 1))
		}
		m := mergeAt(cells[4], 5, 5)
		older := mergeAt(cells[1], 2, 2)
		insert(t, s, k, append(cells, m, older)...)
		require.NoError(t, s.DeleteCovered(ctx, k, m.ID))
		want := sorted([]deltalog.Cell{cells[7], cells[6], cells[5], m})
		require.Equal(t, want, scanAll(t, s, k))
		require.NoError(t, s.DeleteCovered(ctx, k, m.ID), "idempotent")
		require.Equal(t, want, scanAll(t, s, k))
		// Later writes at a covered id are not resurrected by the delete
		// (the cell is written after it).
	})
	t.Run("DeleteCounterRemovesEverything", func(t *testing.T) {
		s, k := newStore(t), key(t)
		c := regular(0, 1, 1)
		insert(t, s, k, c, mergeAt(c, 1, 2))
		require.NoError(t, s.DeleteCounter(ctx, k))
		require.Empty(t, scanAll(t, s, k))
		require.NoError(t, s.DeleteCounter(ctx, k), "deleting an empty counter is fine")
	})
	t.Run("CancelledContext", func(t *testing.T) {
		s, k := newStore(t), key(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		require.Error(t, s.Insert(cctx, []deltalog.Entry{{Counter: k, Cell: regular(0, 1, 1)}}))
		require.Empty(t, scanAll(t, s, k))
	})
	t.Run("CountersEndToEnd", func(t *testing.T) {
		s, k := newStore(t), key(t)
		now := time.Now().UTC()
		c, err := deltalog.New(s, deltalog.Options{Window: time.Minute, FutureSkew: time.Second,
			SafetyMargin: 5 * time.Second, MaxScan: 30 * time.Second, CompactGrace: 40 * time.Second,
			Clock: func() time.Time { return now }})
		require.NoError(t, err)
		var want int64
		for i := range 30 {
			d := int64(i - 10)
			if d == 0 {
				continue
			}
			want += d
			require.NoError(t, c.Add(ctx, k, deltalog.NewIDAt(now), d))
			now = now.Add(time.Second)
		}
		now = now.Add(50 * time.Second)
		_, ok, err := c.Merge(ctx, k)
		require.NoError(t, err)
		require.True(t, ok)
		now = now.Add(time.Minute)
		did, err := c.Compact(ctx, k)
		require.NoError(t, err)
		require.True(t, did)
		r, err := c.Read(ctx, k)
		require.NoError(t, err)
		require.Equal(t, want, r.Value)
	})
}

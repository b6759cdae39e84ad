package deltalog_test

// deltalog's documented promises at their edges; each test names the
// sentence it checks.

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

func advRows(t *testing.T, st store.Partitions, counter string) []store.Row {
	t.Helper()
	rows, err := st.Snapshot(context.Background(), counter, 1000, store.ReadComplete)
	require.NoError(t, err)
	return rows
}

func advRead(t *testing.T, c *deltalog.Counters, counter string) int64 {
	t.Helper()
	r, err := c.Read(context.Background(), counter)
	require.NoError(t, err)
	return r.Value
}

// TestEdgeRetryAtTheWindowEdge checks SPEC.md 8.4, "Add refuses (nothing
// written) an id whose time is before now − Window or after now +
// FutureSkew (outside_window; both bounds inclusive-accepting)", and 8.5,
// "a retry whose id aged out is refused, never counted twice": a retry
// exactly at now − Window rewrites the same cell, one tick (100 ns) later
// it is refused, and the value counts it once throughout, merged or not.
func TestEdgeRetryAtTheWindowEdge(t *testing.T) {
	ctx := context.Background()
	clock := newAdvClock()
	mem := memory.NewPartitions()
	c, err := deltalog.New(mem, advOptions(clock.Now))
	require.NoError(t, err)
	id := timeid.FromParts(clock.Now(), 3, 3)
	require.NoError(t, c.Add(ctx, "k", id, 5))

	clock.Advance(time.Minute) // the id's time is now − Window exactly
	require.NoError(t, c.Add(ctx, "k", id, 5), "the edge is inside the window")
	require.Equal(t, int64(5), advRead(t, c, "k"))
	require.Len(t, advRows(t, mem, "k"), 1)

	clock.Advance(100 * time.Nanosecond) // one tick past the edge
	before := advRows(t, mem, "k")
	err = c.Add(ctx, "k", id, 5)
	require.ErrorIs(t, err, crdt.ErrOutsideWindow)
	require.Equal(t, before, advRows(t, mem, "k"), "nothing written")

	// Future edge: now + FutureSkew is accepted, one tick more is not.
	now := clock.Now()
	require.NoError(t, c.Add(ctx, "k", timeid.FromParts(now.Add(time.Second), 4, 4), 1))
	require.ErrorIs(t, c.Add(ctx, "k", timeid.FromParts(now.Add(time.Second+100*time.Nanosecond), 5, 5), 1), crdt.ErrOutsideWindow)

	// The merge cutoff (now − Window − SafetyMargin) is strict: at the
	// cutoff the cell stays regular, one tick later it is merged, once.
	clock.Advance(10*time.Second - 100*time.Nanosecond) // id = cutoff
	_, ok, err := c.Merge(ctx, "k")
	require.NoError(t, err)
	require.False(t, ok, "a cell at the cutoff is not merged")
	clock.Advance(100 * time.Nanosecond)
	m, ok, err := c.Merge(ctx, "k")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, id, m.ID)
	require.Equal(t, int64(6), advRead(t, c, "k"))
	require.ErrorIs(t, c.Add(ctx, "k", id, 5), crdt.ErrOutsideWindow, "the merged update's retry is refused")
	clock.Advance(time.Hour)
	_, err = c.Compact(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, int64(6), advRead(t, c, "k"), "compacted or not")
}

// TestEdgeLateCellWithinTheAssumptionIsMerged checks SPEC.md 8.4/8.5, "an
// accepted write lands within SafetyMargin − 2·FutureSkew" so "every merge
// cell holds the exact sum of all regular cells at or below its id": an
// update accepted at the window's edge whose write is held in flight as
// long as the assumption allows, then lands, is in the merge cell that
// first covers it, once.
func TestEdgeLateCellWithinTheAssumptionIsMerged(t *testing.T) {
	ctx := context.Background()
	clock := newAdvClock()
	mem := memory.NewPartitions()
	fs := faulty.NewPartitions(mem, faulty.Options{})
	c, err := deltalog.New(fs, advOptions(clock.Now))
	require.NoError(t, err)
	old := timeid.FromParts(clock.Now(), 1, 1)
	require.NoError(t, c.Add(ctx, "k", timeid.FromParts(clock.Now().Add(-time.Second), 2, 2), 100))
	clock.Advance(time.Minute) // old's time is now − Window: accepted
	fs.SetPolicy(faulty.Script(faulty.Hold))
	require.ErrorIs(t, c.Add(ctx, "k", old, 7), crdt.ErrAmbiguousWrite)
	clock.Advance(8*time.Second - time.Microsecond) // SafetyMargin − 2·FutureSkew, less 1 µs
	require.NoError(t, fs.DeliverAll())
	clock.Advance(2*time.Second + 2*time.Microsecond) // among the first merges that cover old
	m, ok, err := c.Merge(ctx, "k")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, old, m.ID)
	require.Equal(t, int64(107), m.Delta, "the late cell is in the merge cell")
	require.Equal(t, int64(107), advRead(t, c, "k"))
}

// TestEdgeLateCellPastTheAssumptionIsLostNeverTwice checks the package
// doc, "a retry whose ID has aged out of the window is refused, never
// counted twice", when the timing assumption fails: a write held in flight
// past the merge lands below the merge cell. It is lost (reads stop at the
// merge cell), not counted twice, and its retry is refused.
func TestEdgeLateCellPastTheAssumptionIsLostNeverTwice(t *testing.T) {
	ctx := context.Background()
	clock := newAdvClock()
	mem := memory.NewPartitions()
	fs := faulty.NewPartitions(mem, faulty.Options{})
	c, err := deltalog.New(fs, advOptions(clock.Now))
	require.NoError(t, err)
	require.NoError(t, c.Add(ctx, "k", timeid.FromParts(clock.Now(), 2, 2), 100))
	late := timeid.FromParts(clock.Now().Add(-time.Second), 1, 1) // below the merge cell to come
	fs.SetPolicy(faulty.Script(faulty.Hold))
	require.ErrorIs(t, c.Add(ctx, "k", late, 7), crdt.ErrAmbiguousWrite)
	clock.Advance(2 * time.Minute)
	_, ok, err := c.Merge(ctx, "k")
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, fs.DeliverAll()) // lands after the merge that should have held it
	require.Equal(t, int64(100), advRead(t, c, "k"), "lost, not counted twice")
	require.ErrorIs(t, c.Add(ctx, "k", late, 7), crdt.ErrOutsideWindow)
	clock.Advance(time.Hour)
	_, err = c.Compact(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, int64(100), advRead(t, c, "k"))
}

// TestEdgeCompactRacingARead checks Counters.Compact, "deletes ... the cells
// covered by the newest merge cell that has existed for CompactGrace ...
// so no read or merge begun before it is still scanning", and ErrSlowScan,
// "Its result may have missed cells that a compaction removed during the
// scan, so it is discarded": a read paused between the pages of its scan
// while a merge and a compaction run either reads the exact value or fails
// with ErrSlowScan, never a wrong value.
func TestEdgeCompactRacingARead(t *testing.T) {
	for _, pause := range []time.Duration{0, time.Second, 21 * time.Second, time.Hour} {
		for page := 1; page <= 4; page++ {
			ctx := context.Background()
			clock := newAdvClock()
			mem := memory.NewPartitions()
			direct, err := deltalog.New(mem, advOptions(clock.Now))
			require.NoError(t, err)
			want := int64(0)
			for i := range 6 {
				d := int64(i + 1)
				want += d
				require.NoError(t, direct.Add(ctx, "k", timeid.FromParts(clock.Now(), uint16(i), 9), d))
				clock.Advance(10 * time.Second)
			}
			fs := faulty.NewPartitions(mem, faulty.Options{ScanPage: 1, Hook: func(ctx context.Context, c faulty.Call, after bool) error {
				if !after && c.Method == faulty.MethodScanPage {
					if c.N == uint64(page)+1 {
						clock.Advance(pause)
						if _, _, err := direct.Merge(ctx, "k"); err != nil {
							return err
						}
						clock.Advance(pause)
						if _, err := direct.Compact(ctx, "k"); err != nil {
							return err
						}
					}
				}
				return nil
			}})
			reader, err := deltalog.New(fs, advOptions(clock.Now))
			require.NoError(t, err)
			clock.Advance(30 * time.Second) // half the cells are past the merge cutoff
			r, err := reader.Read(ctx, "k")
			if err != nil {
				require.ErrorIs(t, err, deltalog.ErrSlowScan, "pause %v page %d", pause, page)
				continue
			}
			require.Equal(t, want, r.Value, "pause %v page %d: a read that returns is exact", pause, page)
			require.Equal(t, want, advRead(t, direct, "k"))
		}
	}
}

// TestEdgeReusedIDAnotherDelta checks SPEC.md 8.5, "Reusing an id with a
// different delta is not detectable by a write-only Add: the store keeps
// the last write", and Counters.Add, "reusing an id with another delta
// keeps exactly one of the two": nothing worse happens. Reads, merges and
// compaction all see one cell with one delta, the retry of either is
// idempotent while in the window, and one batch holding both is refused
// whole.
func TestEdgeReusedIDAnotherDelta(t *testing.T) {
	ctx := context.Background()
	clock := newAdvClock()
	mem := memory.NewPartitions()
	c, err := deltalog.New(mem, advOptions(clock.Now))
	require.NoError(t, err)
	id := timeid.FromParts(clock.Now(), 6, 6)
	require.NoError(t, c.Add(ctx, "k", id, 5))
	require.NoError(t, c.Add(ctx, "k", id, 7), "undetected")
	require.Equal(t, int64(7), advRead(t, c, "k"), "the last write")
	require.NoError(t, c.Add(ctx, "k", id, 5))
	require.Equal(t, int64(5), advRead(t, c, "k"), "the last write again; one cell")
	require.Len(t, advRows(t, mem, "k"), 1)

	var b deltalog.Batch
	b.Add("k", id, 5)
	b.Add("j", id, 9) // another counter: another cell
	b.Add("k", id, 8)
	before := advRows(t, mem, "k")
	require.ErrorIs(t, c.Apply(ctx, &b), crdt.ErrConflictingTransaction)
	require.Equal(t, before, advRows(t, mem, "k"))
	require.Empty(t, advRows(t, mem, "j"), "the whole batch is refused")

	clock.Advance(2 * time.Minute)
	m, ok, err := c.Merge(ctx, "k")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(5), m.Delta)
	clock.Advance(time.Hour)
	deleted, err := c.Compact(ctx, "k")
	require.NoError(t, err)
	require.True(t, deleted)
	require.Equal(t, int64(5), advRead(t, c, "k"))
	require.ErrorIs(t, c.Add(ctx, "k", id, 7), crdt.ErrOutsideWindow)
}

// TestEdgeInvalidInputChangesNothing checks README.md, "Bad input changes
// nothing. ... invalid ids and keys ... return an error wrapping a
// sentinel in package crdt; the stored state is unchanged", and SPEC.md
// 8.4's order of checks.
func TestEdgeInvalidInputChangesNothing(t *testing.T) {
	ctx := context.Background()
	clock := newAdvClock()
	mem := memory.NewPartitions()
	c, err := deltalog.New(mem, advOptions(clock.Now))
	require.NoError(t, err)
	good := timeid.FromParts(clock.Now(), 1, 1)
	require.NoError(t, c.Add(ctx, "k", good, 1))
	before := advRows(t, mem, "k")
	v4 := timeid.ID(uuid.MustParse("5f1d3c2e-8a4b-4c6d-9e8f-0a1b2c3d4e5f"))
	old := timeid.FromParts(clock.Now().Add(-2*time.Minute), 1, 1)
	for _, tc := range []struct {
		name  string
		key   string
		id    timeid.ID
		delta int64
		want  error
	}{
		{"empty key", "", good, 1, crdt.ErrInvalidKey},
		{"NUL in key", "k\x00", good, 1, crdt.ErrInvalidKey},
		{"key too long", strings.Repeat("k", crdt.MaxKeyLen+1), good, 1, crdt.ErrInvalidKey},
		{"invalid UTF-8 key", "k\xff", good, 1, crdt.ErrInvalidKey},
		{"zero id", "k", timeid.ID{}, 1, crdt.ErrInvalidTxnID},
		{"version 4 id", "k", v4, 1, crdt.ErrInvalidTxnID},
		{"zero delta", "k", good, 0, crdt.ErrInvalidAmount},
		{"old id, zero delta", "k", old, 0, crdt.ErrOutsideWindow},
		{"invalid key before invalid id", "", timeid.ID{}, 0, crdt.ErrInvalidKey},
	} {
		err := c.Add(ctx, tc.key, tc.id, tc.delta)
		require.ErrorIs(t, err, tc.want, tc.name)
		require.Equal(t, before, advRows(t, mem, "k"), tc.name)
		var b deltalog.Batch
		b.Add("k", timeid.FromParts(clock.Now(), 2, 2), 3) // valid, first
		b.Add(tc.key, tc.id, tc.delta)
		require.ErrorIs(t, c.Apply(ctx, &b), tc.want, tc.name)
		require.Equal(t, before, advRows(t, mem, "k"), "%s: the valid update of the batch is not written either", tc.name)
	}
	for _, key := range []string{"", "k\x00", "k\xff"} {
		_, err := c.Read(ctx, key)
		require.ErrorIs(t, err, crdt.ErrInvalidKey)
		_, _, err = c.Merge(ctx, key)
		require.ErrorIs(t, err, crdt.ErrInvalidKey)
		_, err = c.Compact(ctx, key)
		require.ErrorIs(t, err, crdt.ErrInvalidKey)
		require.ErrorIs(t, c.Delete(ctx, key), crdt.ErrInvalidKey)
	}
	require.Equal(t, before, advRows(t, mem, "k"))
}

// TestEdgeMalformedStoredCells checks the package doc, "A cell that does
// not decode stops Read, Merge and Compact of its counter
// (crdt.ErrCorruptEncoding, naming it)", and "Decoders are bounded and
// fuzzed" (README.md): every truncation and every single-bit flip of a
// stored merge cell and of its row key either still decodes as a valid
// cell of that key, or fails Read, and Merge and Compact when their scans
// reach it, with an error wrapping crdt.ErrCorruptEncoding; none panics or
// writes over it.
func TestEdgeMalformedStoredCells(t *testing.T) {
	ctx := context.Background()
	clock := newAdvClock()
	mem := memory.NewPartitions()
	c, err := deltalog.New(mem, advOptions(clock.Now))
	require.NoError(t, err)
	for i, d := range []int64{-3, 9, 4} {
		require.NoError(t, c.Add(ctx, "src", timeid.FromParts(clock.Now().Add(-time.Duration(i)*time.Second), uint16(i), 1), d))
	}
	clock.Advance(2 * time.Minute)
	_, ok, err := c.Merge(ctx, "src")
	require.NoError(t, err)
	require.True(t, ok)
	var cell store.Row
	for _, r := range advRows(t, mem, "src") {
		if r.Key[len(r.Key)-1] == byte(deltalog.KindMerge) {
			cell = r
		}
	}
	require.NotNil(t, cell.Key)

	var variants []store.Row
	for n := 0; n < len(cell.Value); n++ {
		variants = append(variants, store.Row{Key: cell.Key, Value: append([]byte(nil), cell.Value[:n]...)})
	}
	for i := range cell.Value {
		for bit := range 8 {
			v := append([]byte(nil), cell.Value...)
			v[i] ^= 1 << bit
			variants = append(variants, store.Row{Key: cell.Key, Value: v})
		}
	}
	for i := range cell.Key {
		for bit := range 8 {
			k := append([]byte(nil), cell.Key...)
			k[i] ^= 1 << bit
			variants = append(variants, store.Row{Key: k, Value: cell.Value})
		}
	}
	variants = append(variants, store.Row{Key: cell.Key[:len(cell.Key)-1], Value: cell.Value},
		store.Row{Key: append(append([]byte(nil), cell.Key...), 0), Value: cell.Value})
	bad := 0
	for i, row := range variants {
		if len(row.Value) == 0 {
			continue // a store refuses empty values
		}
		counter := "v"
		ts := int64(1) << 60
		require.NoError(t, mem.Apply(ctx, []store.Mutation{{Partition: counter, Op: store.OpDeletePartition, Timestamp: ts + int64(2*i)}}))
		require.NoError(t, mem.Apply(ctx, []store.Mutation{{Partition: counter, Op: store.OpPut, Key: row.Key, Value: row.Value, Timestamp: ts + int64(2*i) + 1}}))
		stored := advRows(t, mem, counter)
		_, errRead := c.Read(ctx, counter)
		_, _, errMerge := c.Merge(ctx, counter)
		_, errCompact := c.Compact(ctx, counter)
		if errRead == nil {
			var got deltalog.Cell
			require.NoError(t, got.UnmarshalBinary(row.Value), "variant %d read fine", i)
			id, kind, err := deltalog.DecodeKey(row.Key)
			require.NoError(t, err, "variant %d", i)
			require.Equal(t, id, got.ID)
			require.Equal(t, kind, got.Kind)
			continue
		}
		bad++
		require.ErrorIs(t, errRead, crdt.ErrCorruptEncoding, "variant %d", i)
		// Merge and Compact scan from their cutoffs (SPEC.md 8.5): each
		// fails on the row when it lies in its scan, and finds nothing
		// otherwise.
		opts := c.Options()
		now := clock.Now()
		for op, e := range map[string]struct {
			err    error
			cutoff time.Time
		}{
			"merge":   {errMerge, now.Add(-opts.Window - opts.SafetyMargin)},
			"compact": {errCompact, now.Add(-opts.CompactGrace - opts.Window - opts.SafetyMargin)},
		} {
			from, ok := timeid.AppendDescendingBefore(nil, e.cutoff)
			if ok && bytes.Compare(row.Key, from) >= 0 {
				require.ErrorIs(t, e.err, crdt.ErrCorruptEncoding, "variant %d: %s", i, op)
			} else {
				require.NoError(t, e.err, "variant %d: %s does not scan the row", i, op)
			}
		}
		require.Equal(t, stored, advRows(t, mem, counter), "variant %d: nothing written over it", i)
	}
	require.Greater(t, bad, len(variants)/2)
}

// TestEdgeMergeClockOutsideUnixNanos checks Options.Clock's "Merge refuses
// a reading before 1970 or after 2262-04-11 with crdt.ErrInvalidConfig":
// a merge cell records its time in Unix nanoseconds, which such a reading
// has none of (it stamped a year-2167 time for a 1582 clock, and failed
// every merge with an invalid amount past 2262). Nothing is written, and
// the readings at both ends of the range merge.
func TestEdgeMergeClockOutsideUnixNanos(t *testing.T) {
	ctx := context.Background()
	const wait = 72 * time.Hour // past the default Window and SafetyMargin
	last := time.Unix(0, math.MaxInt64)
	for _, tc := range []struct {
		name       string
		add, merge time.Time
		ok         bool
	}{
		{"1582", time.Date(1582, 10, 15, 0, 0, 0, 0, time.UTC), time.Date(1582, 10, 18, 0, 0, 0, 0, time.UTC), false},
		{"1969", time.Date(1969, 12, 28, 0, 0, 0, 0, time.UTC), time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC), false},
		{"the Unix epoch", time.Unix(0, 0).Add(-wait), time.Unix(0, 0), true},
		{"the last nanosecond", last.Add(-wait), last, true},
		{"a nanosecond later", last.Add(-wait), last.Add(time.Nanosecond), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := tc.add
			mem := memory.NewPartitions()
			c, err := deltalog.New(mem, deltalog.Options{Clock: func() time.Time { return now }})
			require.NoError(t, err)
			require.NoError(t, c.Add(ctx, "k", timeid.FromParts(now, 1, 1), 3))
			now = tc.merge
			before := advRows(t, mem, "k")
			cell, ok, err := c.Merge(ctx, "k")
			if !tc.ok {
				require.ErrorIs(t, err, crdt.ErrInvalidConfig)
				require.False(t, ok)
				require.Equal(t, before, advRows(t, mem, "k"))
				return
			}
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, tc.merge.UnixNano(), cell.Written)
			require.Equal(t, int64(3), advRead(t, c, "k"))
		})
	}
}

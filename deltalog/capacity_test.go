package deltalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// TestCountersCapacity checks SPEC.md 8.4's capacity formulas: a counter
// taking r updates a second, merged and compacted every I, has reads that
// scan about r·(Window + SafetyMargin + I) cells, since a merge folds only
// cells older than now − Window − SafetyMargin, and merges and compactions
// that scan about r·I, since they start at their cutoffs. It runs 10 a
// second with the defaults, merged every 5 s, past that age.
func TestCountersCapacity(t *testing.T) {
	testsize.SkipSequential(t)
	const rate, every = 10, 5 * time.Second
	ctx := context.Background()
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	st := &counting{mem: memory.NewPartitions()}
	c, err := deltalog.New(st, deltalog.Options{Clock: func() time.Time { return now }})
	require.NoError(t, err)
	o := c.Options()
	wantRead := rate * (o.Window + o.SafetyMargin + every).Seconds()
	wantMerge := rate * every.Seconds()
	most, mostMerge, mostCompact, n, merged, compacted := 0, int64(0), int64(0), 0, 0, 0
	for s := 1; time.Duration(s)*time.Second <= o.Window+o.SafetyMargin+o.CompactGrace+20*every; s++ {
		for i := range rate {
			now = now.Add(time.Second / rate)
			n++
			require.NoError(t, c.Add(ctx, "views", timeid.FromParts(now, uint16(i), 7), 1))
		}
		if time.Duration(s)*time.Second%every == 0 {
			read := st.rowsRead.Load()
			_, ok, err := c.Merge(ctx, "views")
			require.NoError(t, err)
			mostMerge = max(mostMerge, st.rowsRead.Load()-read)
			if ok {
				merged++
			}
			read = st.rowsRead.Load()
			deleted, err := c.Compact(ctx, "views")
			require.NoError(t, err)
			mostCompact = max(mostCompact, st.rowsRead.Load()-read)
			if deleted {
				compacted++
			}
			r, err := c.Read(ctx, "views")
			require.NoError(t, err)
			require.Equal(t, int64(n), r.Value)
			most = max(most, r.Cells)
		}
	}
	t.Logf("%d updates at %d a second, merged and compacted every %v (%d merges, %d compactions): reads scanned at most %d cells, r·(Window + SafetyMargin + I) = %.0f; merges %d and compactions %d, r·I = %.0f",
		n, rate, every, merged, compacted, most, wantRead, mostMerge, mostCompact, wantMerge)
	require.GreaterOrEqual(t, merged, 40)
	require.GreaterOrEqual(t, compacted, 15)
	if r := float64(most) / wantRead; r < 0.9 || r > 1.1 {
		t.Errorf("reads scanned at most %d cells, %.2f× the formula's %.0f", most, r, wantRead)
	}
	// A merge reads the cells of one interval and the merge cell below
	// them; a compaction, those of one interval, the merge cell it deletes
	// under and at most one newer merge cell.
	if float64(mostMerge) > 1.1*wantMerge+1 || float64(mostCompact) > 1.1*wantMerge+2 {
		t.Errorf("merges scanned at most %d cells and compactions %d, over 1.1·r·I = %.0f", mostMerge, mostCompact, 1.1*wantMerge)
	}
}

// slowScans is a store scanning 1/perRow rows a second: the clock reads
// later by perRow for every row a scan passed on (elapsed), until the test
// sets elapsed back to 0 after the call, so that the load's own schedule
// stays as it is.
type slowScans struct {
	store.Partitions
	elapsed *time.Duration
	perRow  time.Duration
}

func (s slowScans) Scan(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	return s.Partitions.Scan(ctx, partition, from, level, func(r store.Row) bool {
		*s.elapsed += s.perRow
		return fn(r)
	})
}

// TestCountersPastReadCapacityRecover checks SPEC.md 8.4's "Capacity": on
// a store scanning 1,000 rows a second (MaxScan 10 s: 10,000 rows), 20
// updates a second keep about 13,300 cells in a read's scan, so reads fail
// ErrSlowScan; merges and compactions, which scan one merge interval's
// cells, go on, and once the rate falls to 2 a second reads come back with
// the exact value. (When merges scanned from the newest cell they failed
// too, and the counter stayed unreadable until deleted.)
func TestCountersPastReadCapacityRecover(t *testing.T) {
	testsize.SkipSequential(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	var elapsed time.Duration
	st := slowScans{Partitions: memory.NewPartitions(), elapsed: &elapsed, perRow: time.Millisecond}
	c, err := deltalog.New(st, deltalog.Options{Clock: func() time.Time { return now.Add(elapsed) }})
	require.NoError(t, err)
	o := c.Options()
	n, failedReads, okReads := 0, 0, 0
	phase := func(rate int, d time.Duration) {
		end := now.Add(d)
		for s := 1; now.Before(end); s++ {
			for i := range rate {
				now = now.Add(time.Second / time.Duration(rate))
				n++
				require.NoError(t, c.Add(ctx, "views", timeid.FromParts(now, uint16(i), 7), 1))
			}
			if s%5 != 0 {
				continue
			}
			_, _, err := c.Merge(ctx, "views")
			elapsed = 0
			require.NoError(t, err, "merge after %d updates", n)
			_, err = c.Compact(ctx, "views")
			elapsed = 0
			require.NoError(t, err, "compaction after %d updates", n)
			if s%60 != 0 {
				continue
			}
			r, err := c.Read(ctx, "views")
			elapsed = 0
			switch {
			case err == nil:
				require.Equal(t, int64(n), r.Value)
				okReads++
			default:
				require.ErrorIs(t, err, deltalog.ErrSlowScan)
				failedReads++
			}
		}
	}
	phase(20, 2*(o.Window+o.SafetyMargin))
	t.Logf("at 20 a second: %d reads failed ErrSlowScan, %d read", failedReads, okReads)
	require.Positive(t, failedReads, "the rate is past the reads' capacity")
	phase(2, o.Window+o.SafetyMargin+time.Minute)
	r, err := c.Read(ctx, "views")
	elapsed = 0
	require.NoError(t, err, "at 2 a second, reads come back")
	require.Equal(t, int64(n), r.Value)
	t.Logf("at 2 a second: %d updates read exactly over %d cells", n, r.Cells)
}

// TestCountersDrainBacklog checks SPEC.md 8.5's drain: after a merger
// outage of an hour at 20 updates a second (72,000 cells below the
// cutoff), on a store scanning 2,000 rows a second (MaxScan 10 s: 20,000
// rows), merges with MaxMergeCells 5,000 fold the backlog oldest first,
// each within MaxScan, every read exact, until merges scan one interval
// again. With MaxMergeCells past the backlog every merge fails
// ErrSlowScan, and the counter stays unmergeable. After the outage the
// load goes on for 10 minutes (the drain takes about two), an hour with
// COUNTERKIT_CASES above 1.
func TestCountersDrainBacklog(t *testing.T) {
	testsize.SkipSequential(t)
	after := 600 // seconds of load after the outage
	if proptest.Scale(1) > 1 {
		after = 3600
	}
	for _, tc := range []struct {
		name  string
		cells int
	}{{"MaxMergeCells 5,000", 5_000}, {"MaxMergeCells past the backlog", 1_000_000}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
			var elapsed time.Duration
			st := &counting{mem: memory.NewPartitions()}
			c, err := deltalog.New(slowScans{Partitions: st, elapsed: &elapsed, perRow: time.Millisecond / 2},
				deltalog.Options{Clock: func() time.Time { return now.Add(elapsed) }, MaxMergeCells: tc.cells})
			require.NoError(t, err)
			n := 0
			second := func() {
				for i := range 20 {
					now = now.Add(time.Second / 20)
					n++
					require.NoError(t, c.Add(ctx, "views", timeid.FromParts(now, uint16(i), 7), 1))
				}
			}
			for range 3600 { // the outage
				second()
			}
			merges, failed, drained, most := 0, 0, 0, int64(0)
			for s := 1; s <= after; s++ {
				second()
				if s%5 != 0 {
					continue
				}
				read := st.rowsRead.Load()
				_, _, err := c.Merge(ctx, "views")
				elapsed = 0
				if err != nil {
					require.ErrorIs(t, err, deltalog.ErrSlowScan)
					if failed++; failed == 5 {
						break // each scans the whole backlog: enough
					}
					continue
				}
				merges++
				if got := st.rowsRead.Load() - read; got > 200 {
					drained = merges + 1
					most = max(most, got)
				}
				if s%60 == 0 {
					r, err := c.Read(ctx, "views")
					elapsed = 0
					if err == nil {
						require.Equal(t, int64(n), r.Value, "after %d merges", merges)
					} else {
						require.ErrorIs(t, err, deltalog.ErrSlowScan)
					}
				}
			}
			read := st.rowsRead.Load()
			_, _, err = c.Merge(ctx, "views")
			elapsed = 0
			last := st.rowsRead.Load() - read
			t.Logf("%d merges, %d failed; from merge %d on each read under 200 cells, those before at most %d; the last %d", merges, failed, drained, most, last)
			if tc.cells > 72_000 {
				require.Zero(t, merges, "no merge scans the backlog within MaxScan")
				return
			}
			require.NoError(t, err)
			require.Zero(t, failed)
			require.LessOrEqual(t, last, int64(200), "the backlog is drained: a merge scans about one interval")
			r, err := c.Read(ctx, "views")
			require.NoError(t, err)
			require.Equal(t, int64(n), r.Value)
		})
	}
}

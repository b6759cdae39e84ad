package deltalog_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

// advOptions are the timing options of every adv_review test: a one-minute
// window, 1 s of skew, a 10 s safety margin, 5 s scans, 20 s compaction
// grace (the smallest CompactGrace New accepts is MaxScan + SafetyMargin).
func advOptions(clock func() time.Time) deltalog.Options {
	return deltalog.Options{Window: time.Minute, FutureSkew: time.Second, SafetyMargin: 10 * time.Second,
		MaxScan: 5 * time.Second, CompactGrace: 20 * time.Second, Clock: clock}
}

// advClock is a settable clock, safe for concurrent use.
type advClock struct {
	mu  sync.Mutex
	now time.Time
}

func newAdvClock() *advClock { return &advClock{now: base} }

func (c *advClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *advClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestDeleteRacingAMergeStaysDeleted checks Counters.Delete,
// "Delete removes the whole counter with one partition delete", and the
// package doc's "Delete shadows every cell written at or before its
// timestamp" (whose only stated exception is an update a process whose
// clock is behind acknowledges within FutureSkew after the Delete).
//
// Steps: a counter holds 3 old updates (value 60). Merge scans it; between
// its scan and its write the counter is deleted (one partition delete,
// acknowledged). The merge then writes its merge cell, computed from the
// scan, with a write timestamp taken after the scan, above the Delete's.
//
// A merge cell stamped at its write survived the Delete, and the deleted
// counter read 60 again; the merge now stamps its cell before its scan
// (SPEC.md 8.5), so the Delete shadows it.
func TestDeleteRacingAMergeStaysDeleted(t *testing.T) {
	ctx := context.Background()
	clock := newAdvClock()
	mem := memory.NewPartitions()
	direct, err := deltalog.New(mem, advOptions(clock.Now))
	require.NoError(t, err)
	for i, d := range []int64{10, 20, 30} {
		require.NoError(t, direct.Add(ctx, "k", timeid.FromParts(clock.Now().Add(-time.Duration(i)*time.Second), uint16(i), 7), d))
	}
	clock.Advance(2 * time.Minute) // every cell is older than now − Window − SafetyMargin

	var once sync.Once
	var delErr error
	fs := faulty.NewPartitions(mem, faulty.Options{Hook: func(ctx context.Context, c faulty.Call, after bool) error {
		if after && c.Method == faulty.MethodScan {
			// The merge has read the counter; it is deleted before the
			// merge writes.
			once.Do(func() { delErr = direct.Delete(ctx, "k") })
		}
		return nil
	}})
	merger, err := deltalog.New(fs, advOptions(clock.Now))
	require.NoError(t, err)
	_, ok, err := merger.Merge(ctx, "k")
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, delErr, "the Delete is acknowledged")

	r, err := direct.Read(ctx, "k")
	require.NoError(t, err)
	require.Zero(t, r.Value, "the counter was deleted after the merge's scan, and nothing was added since; it reads %d from %d cell(s)", r.Value, r.Cells)
	rows, err := mem.Snapshot(ctx, "k", 100, store.ReadComplete)
	require.NoError(t, err)
	require.Empty(t, rows, "Delete removes the whole counter")
}

// TestDeleteBehindAMergerAheadStaysDeleted: a Delete acknowledged after a
// merge's scan began shadows the merge cell even when the deleting
// process's clock is up to FutureSkew behind the merger's (SPEC.md 8.5,
// Merge): the merge cell is stamped no later than its cutoff. Stamped at
// the merger's clock, the cell outlived the Delete with the deleted
// counter's whole total.
func TestDeleteBehindAMergerAheadStaysDeleted(t *testing.T) {
	for _, during := range []bool{true, false} {
		ctx := context.Background()
		clock := newAdvClock() // the deleting process's; the merger's is 0.9 s ahead
		mem := memory.NewPartitions()
		direct, err := deltalog.New(&processClock{Partitions: mem, now: clock.Now}, advOptions(clock.Now))
		require.NoError(t, err)
		for i, d := range []int64{100, 200, 300} {
			require.NoError(t, direct.Add(ctx, "k", timeid.FromParts(clock.Now().Add(-time.Duration(i)*time.Second), uint16(i), 7), d))
		}
		clock.Advance(2 * time.Minute)
		del := func() {
			clock.Advance(100 * time.Millisecond)
			require.NoError(t, direct.Delete(ctx, "k"))
		}
		var once sync.Once
		fs := faulty.NewPartitions(mem, faulty.Options{Hook: func(ctx context.Context, c faulty.Call, after bool) error {
			if during && after && c.Method == faulty.MethodScan {
				once.Do(del)
			}
			return nil
		}})
		merger, err := deltalog.New(fs, advOptions(func() time.Time { return clock.Now().Add(900 * time.Millisecond) }))
		require.NoError(t, err)
		m, ok, err := merger.Merge(ctx, "k")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, int64(600), m.Delta)
		if !during {
			del() // after the merge returned
		}
		r, err := direct.Read(ctx, "k")
		require.NoError(t, err)
		require.Zero(t, r.Value, "Delete during the merge's scan: %v; the deleted counter reads %d from %d cell(s)", during, r.Value, r.Cells)
	}
}

// processClock stamps every write with a write clock of its own, read from
// now, as another process's writes are stamped: the write clock of this
// process is shared by every Counters in it, so a Delete through one would
// be ordered after every write any of them made.
type processClock struct {
	store.Partitions
	now  func() time.Time
	last int64
}

func (p *processClock) Apply(ctx context.Context, muts []store.Mutation) error {
	muts = slices.Clone(muts)
	for i := range muts {
		p.last = max(p.now().UnixMicro(), p.last+1)
		muts[i].Timestamp = p.last
	}
	return p.Partitions.Apply(ctx, muts)
}

package deltalog_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/crdt/crdttest"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

var base = time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)

type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) Advance(d time.Duration) { c.now = c.now.Add(d) }

func testOptions(c *fakeClock) deltalog.Options {
	return deltalog.Options{
		Window: time.Minute, FutureSkew: time.Second, SafetyMargin: 10 * time.Second,
		MaxScan: 5 * time.Second, CompactGrace: 20 * time.Second, Clock: c.Now,
	}
}

func newCounters(t testing.TB, pageSize int) (*deltalog.Counters, *spy, *fakeClock) {
	t.Helper()
	clock := &fakeClock{now: base}
	store := newSpy(pageSize)
	c, err := deltalog.New(store, testOptions(clock))
	require.NoError(t, err)
	return c, store, clock
}

func TestAddIsOneWriteAndNoRead(t *testing.T) {
	c, store, clock := newCounters(t, 0)
	ctx := context.Background()
	for i := range 100 {
		require.NoError(t, c.Add(ctx, "k", timeid.New(clock.Now()), int64(i+1)))
		clock.Advance(time.Millisecond)
	}
	calls := store.Calls()
	require.Equal(t, int64(100), calls.Applies, "one write per increment")
	require.Equal(t, int64(100), calls.Puts)
	require.Zero(t, calls.Scans, "no reads")
	require.Zero(t, calls.RowsRead)
	r, err := c.Read(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, int64(5050), r.Value)
}

func TestRetryIsCountedOnce(t *testing.T) {
	c, store, clock := newCounters(t, 0)
	ctx := context.Background()
	id := timeid.New(clock.Now())
	// The first attempt lands but its acknowledgement is lost.
	store.SetHook(func(_ context.Context, call faulty.Call, after bool) error {
		if after && call.Method == faulty.MethodApply {
			return crdt.ErrAmbiguousWrite
		}
		return nil
	})
	require.ErrorIs(t, c.Add(ctx, "k", id, 7), crdt.ErrAmbiguousWrite)
	store.SetHook(nil)
	clock.Advance(30 * time.Second)
	require.NoError(t, c.Add(ctx, "k", id, 7))
	r, err := c.Read(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, int64(7), r.Value)
}

func TestAddRefusesBadInput(t *testing.T) {
	c, store, clock := newCounters(t, 0)
	ctx := context.Background()
	now := clock.Now()
	cases := []struct {
		name    string
		counter string
		id      deltalog.ID
		delta   int64
		want    error
	}{
		{"too old", "k", timeid.New(now.Add(-time.Minute - time.Millisecond)), 1, crdt.ErrOutsideWindow},
		{"future", "k", timeid.New(now.Add(2 * time.Second)), 1, crdt.ErrOutsideWindow},
		{"zero id", "k", deltalog.ID{}, 1, crdt.ErrInvalidTxnID},
		{"v4 id", "k", deltalog.ID(uuid.New()), 1, crdt.ErrInvalidTxnID},
		{"zero delta", "k", timeid.New(now), 0, crdt.ErrInvalidAmount},
		{"empty key", "", timeid.New(now), 1, crdt.ErrInvalidIdentifier},
		{"control key", "a\x00b", timeid.New(now), 1, deltalog.ErrInvalidKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Add(ctx, tc.counter, tc.id, tc.delta)
			require.ErrorIs(t, err, tc.want)
			if tc.want == deltalog.ErrInvalidKey {
				require.ErrorContains(t, err, crdt.CheckID(tc.counter), "the error gives the reason")
			}
			// In a batch, the error names the counter whose update is bad.
			var b deltalog.Batch
			b.Add("good", timeid.New(now), 1)
			b.Add(tc.counter, tc.id, tc.delta)
			err = c.Apply(ctx, &b)
			require.ErrorIs(t, err, tc.want)
			if tc.counter == "k" {
				require.ErrorContains(t, err, `deltalog "k": `)
			}
		})
	}
	require.Zero(t, store.Calls().Applies, "nothing was written")
	// The window edges are inclusive.
	require.NoError(t, c.Add(ctx, "k", timeid.New(now.Add(-time.Minute)), 1))
	require.NoError(t, c.Add(ctx, "k", timeid.New(now.Add(time.Second)), 1))
}

// TestEveryMethodRefusesInvalidKeys: every Counters method refuses a key
// that breaks crdt.ValidateKey with ErrInvalidKey (crdt.ErrInvalidKey)
// before calling the store, and a 255-byte key is accepted.
func TestEveryMethodRefusesInvalidKeys(t *testing.T) {
	c, store, clock := newCounters(t, 0)
	ctx := context.Background()
	require.Equal(t, crdt.MaxKeyLen, deltalog.MaxKeyLen)
	for name, key := range crdttest.InvalidKeys() {
		t.Run(name, func(t *testing.T) {
			var b deltalog.Batch
			b.Add("ok", timeid.New(clock.Now()), 1)
			b.Add(key, timeid.New(clock.Now()), 1)
			_, _, mergeErr := c.Merge(ctx, key)
			_, compactErr := c.Compact(ctx, key)
			_, readErr := c.Read(ctx, key)
			for method, err := range map[string]error{
				"Add":     c.Add(ctx, key, timeid.New(clock.Now()), 1),
				"Apply":   c.Apply(ctx, &b),
				"Read":    readErr,
				"Merge":   mergeErr,
				"Compact": compactErr,
				"Delete":  c.Delete(ctx, key),
			} {
				require.ErrorIs(t, err, deltalog.ErrInvalidKey, method)
				require.ErrorIs(t, err, crdt.ErrInvalidKey, method)
				require.ErrorIs(t, err, crdt.ErrInvalidIdentifier, method)
				require.ErrorContains(t, err, crdt.CheckID(key), "%s: the error gives the reason", method)
			}
		})
	}
	require.Equal(t, calls{}, store.Calls(), "the store was never called")
	long := strings.Repeat("k", deltalog.MaxKeyLen)
	require.NoError(t, c.Add(ctx, long, timeid.New(clock.Now()), 1))
	r, err := c.Read(ctx, long)
	require.NoError(t, err)
	require.Equal(t, int64(1), r.Value)
}

func TestBatchIsAllOrNothing(t *testing.T) {
	c, store, clock := newCounters(t, 0)
	ctx := context.Background()
	id := timeid.New(clock.Now())

	var bad deltalog.Batch
	bad.Add("a", id, -5)
	bad.Add("b", timeid.New(clock.Now().Add(-time.Hour)), 5)
	require.ErrorIs(t, c.Apply(ctx, &bad), crdt.ErrOutsideWindow)

	var conflict deltalog.Batch
	conflict.Add("a", id, -5)
	conflict.Add("a", id, -6)
	err := c.Apply(ctx, &conflict)
	require.ErrorIs(t, err, crdt.ErrConflictingTransaction)
	require.ErrorContains(t, err, `deltalog "a": `, "named like every other Apply error")
	// Each update is checked (a zero delta) before it is compared with an
	// earlier update of the same (counter, id), as SPEC 8.4 orders it.
	var zero deltalog.Batch
	zero.Add("a", id, -5)
	zero.Add("a", id, 0)
	require.ErrorIs(t, c.Apply(ctx, &zero), crdt.ErrInvalidAmount)
	require.Zero(t, store.Calls().Applies)

	var transfer deltalog.Batch
	transfer.Add("a", id, -5)
	transfer.Add("b", id, 5)
	store.SetHook(func(context.Context, faulty.Call, bool) error { return crdt.ErrUnavailable })
	require.ErrorIs(t, c.Apply(ctx, &transfer), crdt.ErrUnavailable)
	store.SetHook(nil)
	require.Zero(t, store.Len("a")+store.Len("b"), "a refused batch leaves nothing")

	require.NoError(t, c.Apply(ctx, &transfer))
	require.Equal(t, int64(1), store.Calls().Applies, "one store call for the whole batch")
	ra, _ := c.Read(ctx, "a")
	rb, _ := c.Read(ctx, "b")
	require.Equal(t, int64(-5), ra.Value)
	require.Equal(t, int64(5), rb.Value)
	require.NoError(t, c.Apply(ctx, &deltalog.Batch{}), "empty batch is a no-op")
	done, cancel := context.WithCancel(ctx)
	cancel()
	calls := store.Calls()
	require.NoError(t, c.Apply(done, nil), "an empty batch calls nothing, even on a done context")
	require.Equal(t, calls, store.Calls())
	require.ErrorIs(t, c.Apply(done, &transfer), crdt.ErrUnavailable)
}

func TestLogInsertConflictAndOverflow(t *testing.T) {
	var l deltalog.Log
	id := timeid.New(base)
	require.NoError(t, l.Add(id, 5))
	require.NoError(t, l.Add(id, 5), "retry")
	before := l.Clone()
	require.ErrorIs(t, l.Add(id, 6), crdt.ErrConflictingTransaction)
	require.True(t, l.Equal(before), "unchanged after conflict")

	var other deltalog.Log
	require.NoError(t, other.Add(id, 9))
	require.NoError(t, other.Add(timeid.New(base.Add(time.Second)), 1))
	require.ErrorIs(t, l.Merge(&other), crdt.ErrConflictingTransaction)
	require.True(t, l.Equal(before), "merge is all or nothing")

	// Past int64 the read is exact (SPEC.md 8.3) and the merge cell goes
	// where its sum fits: at the older cell, MaxInt64 alone.
	var big deltalog.Log
	first := timeid.New(base)
	require.NoError(t, big.Add(first, math.MaxInt64))
	require.NoError(t, big.Add(timeid.New(base.Add(time.Second)), 1))
	r, err := big.Read()
	require.NoError(t, err)
	require.Equal(t, int64(math.MaxInt64), r.Value)
	require.Equal(t, "9223372036854775808", r.Stats.BigSum().String())
	m, ok, err := big.MergeBefore(base.Add(time.Hour), base)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, first, m.ID)
	require.Equal(t, int64(math.MaxInt64), m.Delta)
	again, err := big.Read()
	require.NoError(t, err)
	require.Equal(t, r, again, "a merge never changes the value")

	// Only the total decides: MaxInt64 + 1 - 2 fits although a partial
	// sum does not.
	var edge deltalog.Log
	require.NoError(t, edge.Add(timeid.New(base), math.MaxInt64))
	require.NoError(t, edge.Add(timeid.New(base.Add(time.Second)), 1))
	require.NoError(t, edge.Add(timeid.New(base.Add(2*time.Second)), -2))
	r, err = edge.Read()
	require.NoError(t, err)
	require.Equal(t, int64(math.MaxInt64-1), r.Value)
	_, ok, err = edge.MergeBefore(base.Add(time.Hour), base)
	require.NoError(t, err)
	require.True(t, ok)

	var small deltalog.Log
	require.NoError(t, small.Add(timeid.New(base), math.MinInt64))
	r, err = small.Read()
	require.NoError(t, err)
	require.Equal(t, int64(math.MinInt64), r.Value)
	// |MinInt64|^2 = 2^126 fits the 128-bit sum of squares exactly.
	require.Equal(t, "85070591730234615865843651857942052864", r.Stats.SumSquares().String())
}

func TestStatsMatchPlainModel(t *testing.T) {
	var l deltalog.Log
	deltas := []int64{3, -7, 12, 1, 1, -2, 40}
	var sum, sq int64
	mn, mx := deltas[0], deltas[0]
	for i, d := range deltas {
		require.NoError(t, l.Add(timeid.New(base.Add(time.Duration(i)*time.Second)), d))
		sum += d
		sq += d * d
		mn, mx = min(mn, d), max(mx, d)
	}
	_, ok, err := l.MergeBefore(base.Add(3500*time.Millisecond), base)
	require.NoError(t, err)
	require.True(t, ok)
	r, err := l.Read()
	require.NoError(t, err)
	require.Equal(t, sum, r.Value)
	require.Equal(t, int64(len(deltas)), r.Stats.Count)
	require.Equal(t, mn, r.Stats.Min)
	require.Equal(t, mx, r.Stats.Max)
	require.Equal(t, sq, r.Stats.SumSquares().Int64())
	mean := float64(sum) / float64(len(deltas))
	gotMean, ok := r.Stats.Mean()
	require.True(t, ok)
	require.InDelta(t, mean, gotMean, 1e-12)
	v, ok := r.Stats.Variance()
	require.True(t, ok)
	require.InDelta(t, float64(sq)/float64(len(deltas))-mean*mean, v, 1e-9)
	require.Equal(t, 4, r.Cells, "3 regular cells above the merge cell, plus it")
}

func TestMergeNeedsOldCellsAndIsIdempotent(t *testing.T) {
	c, store, clock := newCounters(t, 0)
	ctx := context.Background()
	for range 5 {
		require.NoError(t, c.Add(ctx, "k", timeid.New(clock.Now()), 2))
		clock.Advance(10 * time.Second)
	}
	_, ok, err := c.Merge(ctx, "k")
	require.NoError(t, err)
	require.False(t, ok, "nothing is older than window + margin yet")
	clock.Advance(time.Minute + time.Second) // cutoff now just past the newest cell
	m, ok, err := c.Merge(ctx, "k")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(10), m.Delta)
	_, ok, err = c.Merge(ctx, "k")
	require.NoError(t, err)
	require.False(t, ok, "the newest old cell is already merged")
	require.Equal(t, 6, store.Len("k"))
	r, _ := c.Read(ctx, "k")
	require.Equal(t, int64(10), r.Value)
	require.Equal(t, 1, r.Cells)
}

// TestConcurrentMergesAtDifferentCutoffs runs two merges whose reads both
// happen before either writes, at different cutoffs, in both write orders.
func TestConcurrentMergesAtDifferentCutoffs(t *testing.T) {
	for _, order := range []string{"AB", "BA"} {
		t.Run(order, func(t *testing.T) {
			ctx := context.Background()
			store := newSpy(0)
			clockA, clockB := &fakeClock{now: base}, &fakeClock{now: base}
			a, err := deltalog.New(store, testOptions(clockA))
			require.NoError(t, err)
			b, err := deltalog.New(store, testOptions(clockB))
			require.NoError(t, err)
			var want int64
			for i := range 20 {
				d := int64(i%7 - 3)
				if d == 0 {
					d = 11
				}
				want += d
				require.NoError(t, a.Add(ctx, "k", timeid.New(clockA.Now()), d))
				clockA.Advance(5 * time.Second)
			}
			clockB.now = clockA.now.Add(20 * time.Second) // B's cutoff is later
			// Park each merge between its scan and its write.
			planned := map[string]chan struct{}{"A": make(chan struct{}), "B": make(chan struct{})}
			release := map[string]chan struct{}{"A": make(chan struct{}), "B": make(chan struct{})}
			store.SetHook(func(ctx context.Context, call faulty.Call, after bool) error {
				who, _ := ctx.Value(whoKey{}).(string)
				if who != "" && call.Method == faulty.MethodApply && !after {
					close(planned[who])
					<-release[who]
				}
				return nil
			})
			done := make(chan error, 2)
			run := func(who string, c *deltalog.Counters) {
				_, _, err := c.Merge(context.WithValue(ctx, whoKey{}, who), "k")
				done <- err
			}
			go run("A", a)
			<-planned["A"]
			go run("B", b)
			<-planned["B"]
			close(release[string(order[0])])
			require.NoError(t, <-done)
			close(release[string(order[1])])
			require.NoError(t, <-done)
			store.SetHook(nil)
			cells := store.Cells("k")
			merges := 0
			for _, c := range cells {
				if c.Kind == deltalog.KindMerge {
					merges++
				}
			}
			require.Equal(t, 2, merges)
			// B's clock, 20s ahead of A's (past FutureSkew), is the reader's:
			// A's, behind B's merge cell by more than SafetyMargin −
			// FutureSkew, refuses it (SPEC.md 8.5).
			r, err := b.Read(ctx, "k")
			require.NoError(t, err)
			require.Equal(t, want, r.Value)
			// Each merge cell is the exact sum of the regular cells at or
			// below it.
			for _, m := range cells {
				if m.Kind != deltalog.KindMerge {
					continue
				}
				var s int64
				for _, c := range cells {
					if c.Kind == deltalog.KindRegular && c.ID.Compare(m.ID) <= 0 {
						s += c.Delta
					}
				}
				require.Equal(t, s, m.Delta)
			}
		})
	}
}

type whoKey struct{}

func TestCompactWaitsForGraceAndKeepsValue(t *testing.T) {
	c, store, clock := newCounters(t, 0)
	ctx := context.Background()
	for range 10 {
		require.NoError(t, c.Add(ctx, "k", timeid.New(clock.Now()), 3))
		clock.Advance(time.Second)
	}
	clock.Advance(2 * time.Minute)
	_, ok, err := c.Merge(ctx, "k")
	require.NoError(t, err)
	require.True(t, ok)
	did, err := c.Compact(ctx, "k")
	require.NoError(t, err)
	require.False(t, did, "merge cell younger than CompactGrace")
	clock.Advance(20 * time.Second)
	did, err = c.Compact(ctx, "k")
	require.NoError(t, err)
	require.True(t, did)
	require.Equal(t, 1, store.Len("k"))
	r, _ := c.Read(ctx, "k")
	require.Equal(t, int64(30), r.Value)

	require.NoError(t, c.Delete(ctx, "k"))
	require.Zero(t, store.Len("k"))
	require.Equal(t, int64(1), store.Calls().PartitionDeletes, "deleting a counter is one call")
}

// TestSlowScanIsRefused parks a paged read after its first page while a
// merge cell is written and compaction removes what the read has yet to
// see. The read must fail with ErrSlowScan rather than return a wrong sum.
func TestSlowScanIsRefused(t *testing.T) {
	c, store, clock := newCounters(t, 1)
	ctx := context.Background()
	var want int64
	for i := range 6 {
		want += int64(i + 1)
		require.NoError(t, c.Add(ctx, "k", timeid.New(clock.Now()), int64(i+1)))
		clock.Advance(time.Second)
	}
	clock.Advance(2 * time.Minute)
	pages := 0
	store.SetHook(func(ctx context.Context, call faulty.Call, after bool) error {
		if ctx.Value(whoKey{}) == "reader" && (call.Method == faulty.MethodScan || call.Method == faulty.MethodScanPage) && !after {
			pages++
			if pages == 3 {
				// While the reader is parked: merge, wait out the grace,
				// compact.
				_, ok, err := c.Merge(context.Background(), "k")
				require.NoError(t, err)
				require.True(t, ok)
				clock.Advance(time.Minute)
				did, err := c.Compact(context.Background(), "k")
				require.NoError(t, err)
				require.True(t, did)
			}
		}
		return nil
	})
	_, err := c.Read(context.WithValue(ctx, whoKey{}, "reader"), "k")
	require.ErrorIs(t, err, deltalog.ErrSlowScan)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	store.SetHook(nil)
	r, err := c.Read(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, want, r.Value)
}

func TestOptionsValidation(t *testing.T) {
	store := newSpy(0)
	for _, o := range []deltalog.Options{
		{Window: -1},
		{FutureSkew: time.Minute, SafetyMargin: time.Minute},
		{MaxScan: time.Hour},
		// A window whose merge cutoff (now − Window − SafetyMargin) would
		// overflow: a review found Merge then wrote a merge cell at the
		// newest cell's id, which every later Read refused as corrupt.
		{Window: math.MaxInt64 - 5*time.Second},
		{Window: 50*365*24*time.Hour + 1},
	} {
		_, err := deltalog.New(store, o)
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "%+v", o)
	}
	// The longest Window accepted: an add and a merge read back.
	long, err := deltalog.New(newSpy(0), deltalog.Options{Window: 50 * 365 * 24 * time.Hour})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, long.Add(ctx, "k", timeid.New(time.Now()), 3))
	_, _, err = long.Merge(ctx, "k")
	require.NoError(t, err)
	r, err := long.Read(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, int64(3), r.Value)
	_, err = deltalog.New(nil, deltalog.Options{})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	c, err := deltalog.New(store, deltalog.Options{})
	require.NoError(t, err)
	require.Equal(t, 10*time.Minute, c.Options().Window)
}

func TestStoreErrorsPropagate(t *testing.T) {
	c, store, clock := newCounters(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := c.Add(ctx, "k", timeid.New(clock.Now()), 1)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.True(t, errors.Is(err, context.Canceled))
	_, err = c.Read(ctx, "k")
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, store.Len("k"))
}

// TestReadMeanRoundsOnce: a read's mean is stats.Summary's, the exact
// quotient rounded once (SPEC.md 7.1, 8.3), also through a merge cell; the
// empty log has no mean and no variance.
func TestReadMeanRoundsOnce(t *testing.T) {
	var empty deltalog.Log
	r, err := empty.Read()
	require.NoError(t, err)
	_, ok := r.Stats.Mean()
	require.False(t, ok, "an empty log has no mean")
	_, ok = r.Stats.Variance()
	require.False(t, ok, "an empty log has no variance")

	var l deltalog.Log
	deltas := []int64{3518327057984836985, 1, 1} // double(sum)/3 = 1.1727756859949458e+18
	for i, d := range deltas {
		require.NoError(t, l.Add(timeid.New(base.Add(time.Duration(i)*time.Second)), d))
	}
	for _, merged := range []bool{false, true} {
		if merged {
			_, ok, err := l.MergeBefore(base.Add(time.Hour), base)
			require.NoError(t, err)
			require.True(t, ok)
		}
		r, err := l.Read()
		require.NoError(t, err)
		m, ok := r.Stats.Mean()
		require.True(t, ok)
		require.Equal(t, 1.1727756859949455e+18, m, "merged %v: the exact quotient rounded once", merged)
	}
}

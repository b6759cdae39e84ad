package ckotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/observe/ckotel"
	"github.com/counterkit/counterkit/timeid"
)

// The package documentation says store calls are recorded in
// db.client.operation.duration "following the database semantic
// conventions". Those conventions (Semantic conventions for database
// client metrics, db.client.operation.duration, stable) say the metric
// SHOULD be specified with ExplicitBucketBoundaries of
// [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10] (DBDurationBuckets), not
// the bridge's own DurationBuckets: a backend or dashboard built for the
// conventional buckets must see those.
func TestDBClientDurationBucketsFollowConventions(t *testing.T) {
	s := newSDK()
	obs := s.bridge(t, ckotel.Options{DBSystem: "memory"})
	obs.Observe(context.Background(), observe.Event{Component: "store.siblings", Op: "fetch", Outcome: observe.OK,
		Start: time.Now(), Duration: 2 * time.Millisecond})
	m, ok := find(s.metrics(t), "db.client.operation.duration")
	require.True(t, ok)
	require.Equal(t, "s", m.Unit)
	p := m.Data.(metricdata.Histogram[float64]).DataPoints[0]
	require.Equal(t, []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}, p.Bounds,
		"db.client.operation.duration's advised buckets are not the semantic conventions'")
}

// README.md ("Operating it") says drivers report "GC and merge runs (what
// they folded, their lag)", and ckotel documents counterkit.gc.lag as "how
// far behind a GC or merge ran": a deltalog merge and a balance merge that
// fold rows written an hour earlier report a Lag (observe.Event.Lag), and
// counterkit.gc.lag records it, as for tally's GC.
func TestMergesReportLag(t *testing.T) {
	ctx := context.Background()
	written := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	later := written.Add(time.Hour)

	t.Run("deltalog", func(t *testing.T) {
		s := newSDK()
		var events []observe.Event
		rec := observe.Func(func(_ context.Context, e observe.Event) { events = append(events, e) })
		obs := observe.Multi(s.bridge(t, ckotel.Options{}), rec)
		st := memory.NewPartitions()
		w, err := deltalog.New(st, deltalog.Options{Clock: func() time.Time { return written }})
		require.NoError(t, err)
		for i, d := range []int64{1, 2, 3} {
			require.NoError(t, w.Add(ctx, "views", timeid.FromParts(written.Add(-time.Duration(3-i)*time.Second), uint16(i), 1), d))
		}
		c, err := deltalog.New(st, deltalog.Options{Clock: func() time.Time { return later }, Observer: obs})
		require.NoError(t, err)
		_, ok, err := c.Merge(ctx, "views")
		require.NoError(t, err)
		require.True(t, ok, "the merge folded the cells")
		require.Len(t, events, 1)
		require.Positive(t, events[0].Folded, "the merge reports what it folded")
		require.Positive(t, events[0].Lag, "the merge folded cells an hour old and reports no lag")
		_, ok = find(s.metrics(t), "counterkit.gc.lag")
		require.True(t, ok, "counterkit.gc.lag not recorded for a deltalog merge")
	})

	t.Run("balance", func(t *testing.T) {
		s := newSDK()
		var events []observe.Event
		rec := observe.Func(func(_ context.Context, e observe.Event) { events = append(events, e) })
		obs := observe.Multi(s.bridge(t, ckotel.Options{}), rec)
		st := memory.NewPartitions()
		w, err := balance.New(st, balance.Options{Clock: func() time.Time { return written }})
		require.NoError(t, err)
		for i, a := range []int64{25, -5} {
			require.NoError(t, w.Add(ctx, "seller-1", timeid.FromParts(written.Add(-time.Duration(2-i)*time.Second), uint16(i), 2), a))
		}
		ac, err := balance.New(st, balance.Options{Clock: func() time.Time { return later }, Observer: obs})
		require.NoError(t, err)
		rep, err := ac.Merge(ctx, "seller-1")
		require.NoError(t, err)
		require.NotNil(t, rep.Sum, "the merge summed the rows")
		require.Len(t, events, 1)
		require.Positive(t, events[0].Lag, "the merge summed rows an hour old and reports no lag")
		_, ok := find(s.metrics(t), "counterkit.gc.lag")
		require.True(t, ok, "counterkit.gc.lag not recorded for a balance merge")
	})
}

// Held up: the bridge on no-op providers (explicit, or the global ones)
// takes every kind of event, begun or not, with and without an error,
// without panicking.
func TestNoopProvidersDoNotPanic(t *testing.T) {
	for _, o := range []ckotel.Options{{}, {MeterProvider: noop.NewMeterProvider(), TracerProvider: tracenoop.NewTracerProvider()}} {
		obs, err := ckotel.New(o)
		require.NoError(t, err)
		ctx := context.Background()
		for _, e := range []observe.Event{
			{},
			{Component: "store.partitions", Op: "apply", Rows: 3, Bytes: 10, Err: context.Canceled, Outcome: observe.Canceled},
			{Component: "ledger", Op: "update", Attempts: 2, Siblings: 3, Lag: time.Second, Actors: 2, Conflicts: 1, Outcome: observe.Duplicate},
		} {
			obs.Observe(ctx, e)
			c, end := obs.(observe.Starter).Start(ctx, e)
			require.NotNil(t, c)
			end(e)
		}
		ctx2, op := observe.Start(ctx, obs, "tally", "gc")
		require.NotNil(t, ctx2)
		op.End(observe.Event{Err: context.DeadlineExceeded})
	}
}

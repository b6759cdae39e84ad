package ckotel_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/observe/ckotel"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tally"
	"github.com/counterkit/counterkit/timeid"
)

// sdk is an OpenTelemetry SDK pipeline held in memory.
type sdk struct {
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	opts   ckotel.Options
}

func newSDK(views ...sdkmetric.View) *sdk {
	s := &sdk{reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder()}
	s.opts = ckotel.Options{
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader), sdkmetric.WithView(views...)),
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(s.spans)),
	}
	return s
}

func (s *sdk) bridge(t testing.TB, o ckotel.Options) observe.Observer {
	o.MeterProvider, o.TracerProvider = s.opts.MeterProvider, s.opts.TracerProvider
	obs, err := ckotel.New(o)
	require.NoError(t, err)
	return obs
}

func (s *sdk) metrics(t testing.TB) metricdata.ResourceMetrics {
	var rm metricdata.ResourceMetrics
	require.NoError(t, s.reader.Collect(context.Background(), &rm))
	return rm
}

// attrs renders a set as sorted "key=value" strings.
func attrs(kvs ...attribute.KeyValue) []string {
	out := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, string(kv.Key)+"="+kv.Value.Emit())
	}
	sort.Strings(out)
	return out
}

// find returns the metric named name.
func find(rm metricdata.ResourceMetrics, name string) (metricdata.Metrics, bool) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// checkHistogram checks that the histogram name has unit and the bucket
// boundaries bounds on every point, and returns its points as "attributes
// → count".
func checkHistogram(rm metricdata.ResourceMetrics, name, unit string, bounds []float64) (map[string]uint64, error) {
	m, ok := find(rm, name)
	if !ok {
		return nil, fmt.Errorf("no metric %s", name)
	}
	if m.Unit != unit {
		return nil, fmt.Errorf("%s: unit %q, want %q", name, m.Unit, unit)
	}
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		hi, ok := m.Data.(metricdata.Histogram[int64])
		if !ok {
			return nil, fmt.Errorf("%s: %T is no histogram", name, m.Data)
		}
		h = metricdata.Histogram[float64]{}
		for _, p := range hi.DataPoints {
			h.DataPoints = append(h.DataPoints, metricdata.HistogramDataPoint[float64]{Attributes: p.Attributes, Bounds: p.Bounds, Count: p.Count})
		}
	}
	out := map[string]uint64{}
	for _, p := range h.DataPoints {
		if !slices.Equal(p.Bounds, bounds) {
			return nil, fmt.Errorf("%s: bounds %v, want %v", name, p.Bounds, bounds)
		}
		out[strings.Join(attrs(p.Attributes.ToSlice()...), " ")] += p.Count
	}
	return out, nil
}

// sums returns the points of the Int64 counter name as "attributes → value".
func sums(rm metricdata.ResourceMetrics, name string) map[string]int64 {
	out := map[string]int64{}
	m, ok := find(rm, name)
	if !ok {
		return out
	}
	for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
		out[strings.Join(attrs(p.Attributes.ToSlice()...), " ")] += p.Value
	}
	return out
}

// checkParentage checks that every store call's span (Client) is a child
// of a driver operation's span (Internal) recorded with it, within its
// parent's time, and that every driver span is Internal and every store
// span Client.
func checkParentage(spans []sdktrace.ReadOnlySpan) error {
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
	}
	var errs []error
	for _, s := range spans {
		store := false
		for _, kv := range s.Attributes() {
			store = store || kv.Key == "db.operation.name"
		}
		switch {
		case store && s.SpanKind() != trace.SpanKindClient:
			errs = append(errs, fmt.Errorf("store span %q is %v, not Client", s.Name(), s.SpanKind()))
		case !store && s.SpanKind() != trace.SpanKindInternal:
			errs = append(errs, fmt.Errorf("driver span %q is %v, not Internal", s.Name(), s.SpanKind()))
		}
		if !store {
			continue
		}
		p, ok := byID[s.Parent().SpanID()]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("store span %q has no recorded parent", s.Name()))
		case p.SpanKind() != trace.SpanKindInternal || !strings.HasPrefix(p.Name(), "counterkit "):
			errs = append(errs, fmt.Errorf("store span %q is a child of %q, not of a driver operation", s.Name(), p.Name()))
		case s.StartTime().Before(p.StartTime()) || s.EndTime().After(p.EndTime()):
			errs = append(errs, fmt.Errorf("store span %q runs outside its parent %q", s.Name(), p.Name()))
		}
	}
	return errors.Join(errs...)
}

// checkErrorSpans checks that every failed span names its error by its
// sentinel: an error.type of observe.ErrorType's vocabulary (no Go type
// names), the same as its exception event's exception.type and its status.
func checkErrorSpans(spans []sdktrace.ReadOnlySpan) error {
	var errs []error
	for _, s := range spans {
		if s.Status().Code != codes.Error {
			continue
		}
		var typ string
		for _, kv := range s.Attributes() {
			if kv.Key == "error.type" {
				typ = kv.Value.AsString()
			}
		}
		if typ == "" || strings.ContainsAny(typ, "*./") {
			errs = append(errs, fmt.Errorf("span %q: error.type %q", s.Name(), typ))
		}
		if s.Status().Description != typ {
			errs = append(errs, fmt.Errorf("span %q: status %q, error.type %q", s.Name(), s.Status().Description, typ))
		}
		for _, ev := range s.Events() {
			for _, kv := range ev.Attributes {
				if kv.Key == "exception.type" && kv.Value.AsString() != typ {
					errs = append(errs, fmt.Errorf("span %q: exception.type %q, error.type %q", s.Name(), kv.Value.AsString(), typ))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// spanRows renders spans as "name kind parent: attributes", bytes masked.
func spanRows(spans []sdktrace.ReadOnlySpan) []string {
	names := map[trace.SpanID]string{}
	for _, s := range spans {
		names[s.SpanContext().SpanID()] = s.Name()
	}
	var out []string
	for _, s := range spans {
		a := attrs(s.Attributes()...)
		for i, kv := range a {
			if strings.HasPrefix(kv, "counterkit.bytes=") && kv != "counterkit.bytes=0" {
				a[i] = "counterkit.bytes=N"
			}
		}
		parent := names[s.Parent().SpanID()]
		if parent == "" {
			parent = "-"
		}
		out = append(out, fmt.Sprintf("%s|%v|%s|%s", s.Name(), s.SpanKind(), parent, strings.Join(a, " ")))
	}
	return out
}

// TestDeltalogSpansAndMetrics runs a deltalog through a lost
// acknowledgement, its retry, a read and a read whose caller gave up, and
// checks every span and metric point the SDK's in-memory exporter and
// reader hold.
func TestDeltalogSpansAndMetrics(t *testing.T) {
	s := newSDK()
	obs := s.bridge(t, ckotel.Options{DBSystem: "memory", DBNamespace: "ks", DBCollection: "cells"})
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{
		Policy: faulty.Only(faulty.Script(faulty.LoseAck), faulty.MethodApply)})
	c, err := deltalog.New(observe.Partitions(st, obs), deltalog.Options{Clock: func() time.Time { return now }, Observer: obs})
	require.NoError(t, err)
	id := timeid.New(now)
	require.ErrorIs(t, c.Add(ctx, "views", id, 5), crdt.ErrAmbiguousWrite)
	require.NoError(t, c.Add(ctx, "views", id, 5))
	_, err = c.Read(ctx, "views")
	require.NoError(t, err)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.Read(canceled, "views")
	require.ErrorIs(t, err, context.Canceled) // refused before the store is called

	spans := s.spans.Ended()
	require.NoError(t, checkParentage(spans))
	require.NoError(t, checkErrorSpans(spans))
	db := "db.collection.name=cells db.namespace=ks db.operation.name="
	require.Equal(t, []string{
		"apply cells|client|counterkit deltalog add|counterkit.bytes=N counterkit.outcome=ambiguous " + db + "apply db.system.name=memory error.type=ambiguous_write",
		"counterkit deltalog add|internal|-|counterkit.ambiguous=1 counterkit.attempts=1 counterkit.component=deltalog counterkit.operation=add counterkit.outcome=ambiguous error.type=ambiguous_write",
		"apply cells|client|counterkit deltalog add|counterkit.bytes=N counterkit.outcome=ok " + db + "apply db.system.name=memory",
		"counterkit deltalog add|internal|-|counterkit.attempts=1 counterkit.component=deltalog counterkit.operation=add counterkit.outcome=ok",
		"scan cells|client|counterkit deltalog read|counterkit.bytes=N counterkit.outcome=ok " + db + "scan db.response.returned_rows=1 db.system.name=memory",
		"counterkit deltalog read|internal|-|counterkit.attempts=1 counterkit.component=deltalog counterkit.operation=read counterkit.outcome=ok counterkit.rows=1",
		"counterkit deltalog read|internal|-|counterkit.attempts=1 counterkit.component=deltalog counterkit.operation=read counterkit.outcome=canceled error.type=canceled", // the caller canceled: not a store refusal
	}, spanRows(spans))
	for _, sp := range spans {
		require.Equal(t, ckotel.ScopeName, sp.InstrumentationScope().Name)
		require.Equal(t, ckotel.Version, sp.InstrumentationScope().Version)
		require.Contains(t, sp.InstrumentationScope().SchemaURL, "https://opentelemetry.io/schemas/")
	}

	rm := s.metrics(t)
	store, err := checkHistogram(rm, "db.client.operation.duration", "s", ckotel.DBDurationBuckets)
	require.NoError(t, err)
	dbm := "db.collection.name=cells db.namespace=ks db.operation.name="
	require.Equal(t, map[string]uint64{
		"counterkit.outcome=ambiguous " + dbm + "apply db.system.name=memory error.type=ambiguous_write": 1,
		"counterkit.outcome=ok " + dbm + "apply db.system.name=memory":                                   1,
		"counterkit.outcome=ok " + dbm + "scan db.system.name=memory":                                    1,
	}, store)
	ops, err := checkHistogram(rm, "counterkit.operation.duration", "s", ckotel.DurationBuckets)
	require.NoError(t, err)
	drv := "counterkit.component=deltalog counterkit.operation="
	require.Equal(t, map[string]uint64{
		drv + "add counterkit.outcome=ambiguous error.type=ambiguous_write": 1,
		drv + "add counterkit.outcome=ok":                                   1,
		drv + "read counterkit.outcome=ok":                                  1,
		drv + "read counterkit.outcome=canceled":                            1, // not a failure: no error.type
	}, ops)
	bytes, err := checkHistogram(rm, "counterkit.state.bytes", "By", ckotel.ByteBuckets)
	require.NoError(t, err)
	require.Len(t, bytes, 3, "store calls that moved bytes: two applies, one scan")
	require.Equal(t, map[string]int64{drv + "add counterkit.outcome=ambiguous error.type=ambiguous_write": 1}, sums(rm, "counterkit.writes.ambiguous"))
	require.Equal(t, map[string]int64{
		drv + "add counterkit.outcome=ambiguous error.type=ambiguous_write": 1,
		drv + "add counterkit.outcome=ok":                                   1,
		drv + "read counterkit.outcome=ok":                                  1,
		drv + "read counterkit.outcome=canceled":                            1,
	}, sums(rm, "counterkit.attempts"))
	require.Empty(t, sums(rm, "counterkit.retries"), "no operation retried")
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, ckotel.ScopeName, sm.Scope.Name)
		require.Equal(t, ckotel.Version, sm.Scope.Version)
	}
}

// drive runs one operation of each converted driver, each over its own
// wrapped in-memory store, with obs as Observer and store observer.
var drivers = map[string]func(t *testing.T, obs observe.Observer){
	"deltalog": func(t *testing.T, obs observe.Observer) {
		c, err := deltalog.New(observe.Partitions(memory.NewPartitions(), obs), deltalog.Options{Observer: obs})
		require.NoError(t, err)
		require.NoError(t, c.Add(context.Background(), "views", timeid.New(time.Now()), 1))
	},
	"balance": func(t *testing.T, obs observe.Observer) {
		ac, err := balance.New(observe.Partitions(memory.NewPartitions(), obs), balance.Options{Observer: obs})
		require.NoError(t, err)
		require.NoError(t, ac.Add(context.Background(), "seller-1", timeid.New(time.Now()), 30))
		_, err = ac.Balance(context.Background(), "seller-1")
		require.NoError(t, err)
	},
	"tally": func(t *testing.T, obs observe.Observer) {
		c, err := tally.New[*tally.Sum](observe.Partitions(memory.NewPartitions(), obs), "page",
			tally.Options{Observer: obs, NewID: func() crdt.ActorID { return "web-1" }})
		require.NoError(t, err)
		m, err := c.NewMutator()
		require.NoError(t, err)
		require.NoError(t, m.Update(context.Background(), func(s *tally.Sum) error { return s.Add(3) }))
		_, err = c.Read(context.Background())
		require.NoError(t, err)
	},
}

// Every driver's store calls are children of its operation's span.
func TestStoreSpansAreChildren(t *testing.T) {
	for name, drive := range drivers {
		t.Run(name, func(t *testing.T) {
			s := newSDK()
			drive(t, s.bridge(t, ckotel.Options{}))
			spans := s.spans.Ended()
			require.NoError(t, checkParentage(spans))
			clients := 0
			for _, sp := range spans {
				if sp.SpanKind() == trace.SpanKindClient {
					clients++
					require.Contains(t, attrs(sp.Attributes()...), "db.system.name=memory", "detected from the store")
				}
			}
			require.Positive(t, clients)
		})
	}
}

// The checks catch the faults the bridge had: spans made after the
// operation (siblings, not children), the SDK's default buckets, Go type
// names as exception types.
func TestChecksCatchBrokenVariants(t *testing.T) {
	t.Run("spans made after the operation", func(t *testing.T) {
		s := newSDK()
		b := s.bridge(t, ckotel.Options{})
		drivers["deltalog"](t, observe.Func(b.Observe)) // hides Start
		require.ErrorContains(t, checkParentage(s.spans.Ended()), "has no recorded parent")
	})
	t.Run("every span Internal", func(t *testing.T) {
		s := newSDK()
		tr := s.opts.TracerProvider.Tracer("x")
		ctx, op := tr.Start(context.Background(), "counterkit deltalog add")
		_, st := tr.Start(ctx, "apply", trace.WithAttributes(attribute.String("db.operation.name", "apply")))
		st.End()
		op.End()
		require.ErrorContains(t, checkParentage(s.spans.Ended()), "not Client")
	})
	t.Run("default buckets", func(t *testing.T) {
		// What the SDK uses when an instrument gives no advice.
		s := newSDK(sdkmetric.NewView(sdkmetric.Instrument{Name: "*"}, sdkmetric.Stream{
			Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: []float64{0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000}}}))
		drivers["deltalog"](t, s.bridge(t, ckotel.Options{}))
		_, err := checkHistogram(s.metrics(t), "db.client.operation.duration", "s", ckotel.DBDurationBuckets)
		require.ErrorContains(t, err, "bounds")
	})
	t.Run("Go type as exception type", func(t *testing.T) {
		s := newSDK()
		_, sp := s.opts.TracerProvider.Tracer("x").Start(context.Background(), "counterkit deltalog add")
		sp.RecordError(fmt.Errorf("w: %w", crdt.ErrUnavailable))
		sp.SetAttributes(attribute.String("error.type", "unavailable"))
		sp.SetStatus(codes.Error, "unavailable")
		sp.End()
		require.ErrorContains(t, checkErrorSpans(s.spans.Ended()), "*fmt.wrapError")
	})
}

// A store call of 3 ms lands in the (1 ms, 5 ms] bucket, not the first.
func TestDurationBuckets(t *testing.T) {
	s := newSDK()
	obs := s.bridge(t, ckotel.Options{})
	obs.Observe(context.Background(), observe.Event{Component: "store.siblings", Op: "put", Outcome: observe.OK,
		Start: time.Now(), Duration: 3 * time.Millisecond})
	m, ok := find(s.metrics(t), "db.client.operation.duration")
	require.True(t, ok)
	p := m.Data.(metricdata.Histogram[float64]).DataPoints[0]
	i := slices.Index(p.Bounds, 0.005)
	require.Positive(t, i)
	want := make([]uint64, len(p.Bounds)+1)
	want[i] = 1
	require.Equal(t, want, p.BucketCounts)
}

// An operation reported only at its end (an Observer that is not begun
// with Start) still gets a span with its own times, kind and attributes,
// and a GC's counts reach their metrics; zero counts are left out.
func TestObserveWithoutStart(t *testing.T) {
	s := newSDK()
	obs := s.bridge(t, ckotel.Options{})
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	obs.Observe(context.Background(), observe.Event{Component: "tally", Op: "gc", Outcome: observe.OK,
		Start: start, Duration: 2 * time.Second, Attempts: 2, Ambiguous: 1, Folded: 3, Retired: 5, Lag: 90 * time.Second, Actors: 4})
	spans := s.spans.Ended()
	require.Len(t, spans, 1)
	require.Equal(t, start, spans[0].StartTime())
	require.Equal(t, start.Add(2*time.Second), spans[0].EndTime())
	require.Equal(t, []string{"counterkit tally gc|internal|-|counterkit.actors=4 counterkit.ambiguous=1 counterkit.attempts=2 " +
		"counterkit.component=tally counterkit.folded=3 counterkit.lag=90 counterkit.operation=gc counterkit.outcome=ok counterkit.retired=5"}, spanRows(spans))
	rm := s.metrics(t)
	set := "counterkit.component=tally counterkit.operation=gc counterkit.outcome=ok"
	require.Equal(t, map[string]int64{set: 1}, sums(rm, "counterkit.retries"))
	require.Equal(t, map[string]int64{set: 3}, sums(rm, "counterkit.gc.folded"))
	require.Equal(t, map[string]int64{set: 5}, sums(rm, "counterkit.actors.retired"))
	lag, err := checkHistogram(rm, "counterkit.gc.lag", "s", ckotel.LagBuckets)
	require.NoError(t, err)
	require.Equal(t, map[string]uint64{set: 1}, lag)
	require.Empty(t, sums(rm, "counterkit.siblings.merged"))
}

// Nil providers mean the global ones, which do nothing until set.
func TestNewWithGlobalProviders(t *testing.T) {
	obs, err := ckotel.New(ckotel.Options{})
	require.NoError(t, err)
	ctx, op := observe.Start(context.Background(), obs, "ledger", "update")
	require.False(t, trace.SpanFromContext(ctx).SpanContext().IsValid())
	op.End(observe.Event{})
}

// A provider declared and left unset (a nil pointer in the interface)
// means the global one too, rather than a panic at the first call.
func TestNewWithNilPointerProviders(t *testing.T) {
	var mp *sdkmetric.MeterProvider
	var tp *sdktrace.TracerProvider
	obs, err := ckotel.New(ckotel.Options{MeterProvider: mp, TracerProvider: tp})
	require.NoError(t, err)
	ctx, op := observe.Start(context.Background(), obs, "ledger", "update")
	require.False(t, trace.SpanFromContext(ctx).SpanContext().IsValid())
	op.End(observe.Event{Attempts: 1, Actors: 1})
}

// A store call's span is named by its collection, else its namespace,
// else its operation alone.
func TestStoreSpanNames(t *testing.T) {
	for _, c := range []struct {
		o    ckotel.Options
		want string
	}{
		{ckotel.Options{DBNamespace: "ks", DBCollection: "tbl"}, "fetch tbl"},
		{ckotel.Options{DBNamespace: "ks"}, "fetch ks"},
		{ckotel.Options{}, "fetch"},
	} {
		s := newSDK()
		obs := s.bridge(t, c.o)
		_, _, err := observe.Siblings(memory.NewSiblings(), obs).Fetch(context.Background(), "k")
		require.NoError(t, err)
		spans := s.spans.Ended()
		require.Len(t, spans, 1)
		require.Equal(t, c.want, spans[0].Name(), "%+v", c.o)
	}
}

// A negative lag (writers' clocks that disagree) is a span attribute, as
// any non-zero count; the lag histogram records positive lags only.
func TestNegativeLag(t *testing.T) {
	s := newSDK()
	obs := s.bridge(t, ckotel.Options{})
	for _, lag := range []time.Duration{-2 * time.Second, 3 * time.Second} {
		_, op := observe.Start(context.Background(), obs, "balance", "merge")
		op.End(observe.Event{Attempts: 1, Lag: lag})
	}
	var got []string
	for _, sp := range s.spans.Ended() {
		for _, kv := range sp.Attributes() {
			if kv.Key == "counterkit.lag" {
				got = append(got, kv.Value.Emit())
			}
		}
	}
	require.Equal(t, []string{"-2", "3"}, got)
	lag, err := checkHistogram(s.metrics(t), "counterkit.gc.lag", "s", ckotel.LagBuckets)
	require.NoError(t, err)
	var n uint64
	for _, c := range lag {
		n += c
	}
	require.EqualValues(t, 1, n, "the positive lag alone: %v", lag)
}

// ackLoser loses the acknowledgement of the next n Puts (they land).
type ackLoser struct {
	store.Siblings
	n int
}

func (a *ackLoser) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	err := a.Siblings.Put(ctx, key, actor, value, token)
	if err == nil && a.n > 0 {
		a.n--
		return fmt.Errorf("lost ack: %w", crdt.ErrAmbiguousWrite)
	}
	return err
}

// A ledger's lost acknowledgement, retry and duplicate reach the counters
// an operator watches, under the same attributes as its spans.
func TestLedgerMetrics(t *testing.T) {
	s := newSDK()
	obs := s.bridge(t, ckotel.Options{})
	ctx := context.Background()
	st := observe.Siblings(&ackLoser{Siblings: memory.NewSiblings(), n: 1}, obs)
	l, err := ledger.New(st, "wallet", ledger.Options{Actor: "api-1", Observer: obs, Backoff: ledger.Backoff{Initial: -1}})
	require.NoError(t, err)
	_, err = l.Credit(ctx, "t1", 10) // ack lost, retried, recognised as landed
	require.NoError(t, err)
	_, err = l.Credit(ctx, "t1", 10) // the client's retry: a duplicate
	require.NoError(t, err)

	rm := s.metrics(t)
	upd := "counterkit.component=ledger counterkit.operation=update counterkit.outcome="
	require.Equal(t, map[string]int64{upd + "applied": 1}, sums(rm, "counterkit.writes.ambiguous"))
	require.Equal(t, map[string]int64{upd + "applied": 1}, sums(rm, "counterkit.retries"))
	require.Equal(t, map[string]int64{upd + "duplicate": 1}, sums(rm, "counterkit.duplicates"))
	ops, err := checkHistogram(rm, "counterkit.operation.duration", "s", ckotel.DurationBuckets)
	require.NoError(t, err)
	require.Equal(t, map[string]uint64{upd + "applied": 1, upd + "duplicate": 1}, ops)
	calls, err := checkHistogram(rm, "db.client.operation.duration", "s", ckotel.DBDurationBuckets)
	require.NoError(t, err)
	require.Equal(t, uint64(1), calls["counterkit.outcome=ambiguous db.operation.name=put error.type=ambiguous_write"], calls)
	require.NoError(t, checkErrorSpans(s.spans.Ended()))
	for _, sp := range s.spans.Ended() {
		if sp.Name() == "counterkit ledger update" {
			require.NotContains(t, attrs(sp.Attributes()...), "counterkit.conflicts=0")
			require.Contains(t, attrs(sp.Attributes()...), "counterkit.actors=1")
		}
	}
}

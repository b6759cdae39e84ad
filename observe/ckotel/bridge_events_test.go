package ckotel_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
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

// obsOpenSpans is a SpanProcessor counting spans started and ended.
type obsOpenSpans struct{ started, ended atomic.Int64 }

func (p *obsOpenSpans) OnStart(context.Context, sdktrace.ReadWriteSpan) { p.started.Add(1) }
func (p *obsOpenSpans) OnEnd(sdktrace.ReadOnlySpan)                     { p.ended.Add(1) }
func (p *obsOpenSpans) Shutdown(context.Context) error                  { return nil }
func (p *obsOpenSpans) ForceFlush(context.Context) error                { return nil }

// obsSDK is an in-memory SDK pipeline whose tracer also counts open spans.
func obsSDK(t *testing.T, o ckotel.Options) (observe.Observer, *sdkmetric.ManualReader, *tracetest.SpanRecorder, *obsOpenSpans) {
	t.Helper()
	reader, rec, open := sdkmetric.NewManualReader(), tracetest.NewSpanRecorder(), &obsOpenSpans{}
	o.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	o.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSpanProcessor(open))
	obs, err := ckotel.New(o)
	require.NoError(t, err)
	return obs, reader, rec, open
}

// obsMetricAttrs returns every attribute of every metric data point.
func obsMetricAttrs(t *testing.T, reader *sdkmetric.ManualReader) map[string][]attribute.KeyValue {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := map[string][]attribute.KeyValue{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			add := func(s attribute.Set) { out[m.Name] = append(out[m.Name], s.ToSlice()...) }
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					add(p.Attributes)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					add(p.Attributes)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					add(p.Attributes)
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					add(p.Attributes)
				}
			default:
				t.Fatalf("metric %s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return out
}

// Every driver run through the bridge, concurrently, with keys,
// transaction ids and actor ids that carry a marker, store faults and
// refusals: no metric attribute and no span attribute, event or status
// carries the marker (no key, id, actor or amount), every metric
// attribute key is one of the documented ones, every span that started
// ended, store spans are Client children of Internal driver spans, and
// the run is clean under -race.
func TestBridgeNoIdentifiersConcurrent(t *testing.T) {
	const marker = "zq9marker"
	ctx := context.Background()
	obs, reader, rec, open := obsSDK(t, ckotel.Options{DBNamespace: "ns", DBCollection: "coll"})
	now := time.Now()
	policy := faulty.Seeded(3, faulty.Rates{Refuse: 0.1, LoseAck: 0.1})

	sib := observe.Siblings(faulty.NewSiblings(memory.NewSiblings(), faulty.Options{Policy: policy}), obs)
	parts := observe.Partitions(faulty.NewPartitions(memory.NewPartitions(), faulty.Options{Policy: policy}), obs)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			actor := crdt.ActorID(fmt.Sprintf("%s-actor-%d", marker, g))
			l, err := ledger.New(sib, fmt.Sprintf("%s-key-%d", marker, g%2), ledger.Options{Actor: actor, Observer: obs, Backoff: ledger.Backoff{Initial: -1}})
			if err != nil {
				panic(err)
			}
			for i := range 10 {
				_, _ = l.Update(ctx, crdt.TxnID(fmt.Sprintf("%s-txn-%d-%d", marker, g, i%4)), int64(i%3-1))
			}
			_, _ = l.Value(ctx)
			_, _ = l.HasTransaction(ctx, crdt.TxnID(marker+"-txn"))
			dl, _ := deltalog.New(parts, deltalog.Options{Observer: obs})
			for i := range 5 {
				_ = dl.Add(ctx, fmt.Sprintf("%s-counter-%d", marker, g), timeid.New(now), int64(i))
			}
			_, _ = dl.Read(ctx, marker+"-counter-0")
			ac, _ := balance.New(parts, balance.Options{Observer: obs})
			_ = ac.Add(ctx, fmt.Sprintf("%s-acct-%d", marker, g), timeid.New(now), 7)
			_ = ac.Add(ctx, marker+"-acct", timeid.New(now.Add(-time.Hour)), 7) // outside the window
			_, _ = ac.Balance(ctx, fmt.Sprintf("%s-acct-%d", marker, g))
			tc, _ := tally.New[*tally.Sum](parts, fmt.Sprintf("%s-tally-%d", marker, g), tally.Options{Observer: obs,
				NewID: func() crdt.ActorID { return crdt.ActorID(fmt.Sprintf("%s-m-%d", marker, g)) }})
			m, _ := tc.NewMutator()
			_ = m.Update(ctx, func(s *tally.Sum) error { return s.Add(1) })
			_, _ = tc.Read(ctx)
		}()
	}
	wg.Wait()

	require.Equal(t, open.started.Load(), open.ended.Load(), "spans started and not ended")
	allowed := map[attribute.Key]bool{
		"counterkit.component": true, "counterkit.operation": true, "counterkit.outcome": true, "error.type": true,
		"db.system.name": true, "db.operation.name": true, "db.namespace": true, "db.collection.name": true,
	}
	for name, kvs := range obsMetricAttrs(t, reader) {
		for _, kv := range kvs {
			require.True(t, allowed[kv.Key], "metric %s has attribute %s", name, kv.Key)
			require.NotContains(t, kv.Value.Emit(), marker, "metric %s attribute %s", name, kv.Key)
		}
	}
	spans := rec.Ended()
	require.NotEmpty(t, spans)
	for _, s := range spans {
		require.NotContains(t, s.Name(), marker)
		require.NotContains(t, s.Status().Description, marker, s.Name())
		for _, kv := range s.Attributes() {
			require.NotContains(t, kv.Value.Emit(), marker, "span %s attribute %s", s.Name(), kv.Key)
		}
		for _, ev := range s.Events() {
			for _, kv := range ev.Attributes {
				require.NotContains(t, kv.Value.Emit(), marker, "span %s event %s attribute %s", s.Name(), ev.Name, kv.Key)
			}
		}
	}
	require.NoError(t, checkParentage(spans))
	require.NoError(t, checkErrorSpans(spans))
}

// A failed driver operation has status Error, error.type and an
// exception event; a refused one (invalid, outside the window) and a
// canceled one have error.type but status Unset and no event; a store
// call's span is Client, named "<op> <collection>", with the database
// attributes; a driver's is Internal, "counterkit <component> <op>".
func TestBridgeStatusAndNames(t *testing.T) {
	obs, _, rec, _ := obsSDK(t, ckotel.Options{DBSystem: "cassandra", DBNamespace: "ks", DBCollection: "tbl"})
	ctx := context.Background()
	for _, c := range []struct {
		err    error
		failed bool
	}{
		{fmt.Errorf("x: %w", crdt.ErrUnavailable), true},
		{fmt.Errorf("x: %w", crdt.ErrAmbiguousWrite), true},
		{context.DeadlineExceeded, true},
		{fmt.Errorf("x: %w", crdt.ErrInvalidAmount), false},
		{fmt.Errorf("x: %w", crdt.ErrOutsideWindow), false},
		{context.Canceled, false},
	} {
		rec.Reset()
		c2, op := observe.Start(ctx, obs, "ledger", "update")
		st := observe.Siblings(memory.NewSiblings(), obs)
		_, _, err := st.Fetch(c2, "k")
		require.NoError(t, err)
		op.End(observe.Event{Err: c.err})
		spans := rec.Ended()
		require.Len(t, spans, 2)
		store, drv := spans[0], spans[1]
		require.Equal(t, "fetch tbl", store.Name())
		require.Equal(t, trace.SpanKindClient, store.SpanKind())
		require.Contains(t, attrs(store.Attributes()...), "db.system.name=memory") // the adapter's, before Options.DBSystem
		require.Contains(t, attrs(store.Attributes()...), "db.namespace=ks")
		require.Contains(t, attrs(store.Attributes()...), "db.collection.name=tbl")
		require.Contains(t, attrs(store.Attributes()...), "db.operation.name=fetch")
		require.Equal(t, "counterkit ledger update", drv.Name())
		require.Equal(t, trace.SpanKindInternal, drv.SpanKind())
		require.Contains(t, attrs(drv.Attributes()...), "error.type="+observe.ErrorType(c.err))
		if c.failed {
			require.Equal(t, codes.Error, drv.Status().Code, "%v", c.err)
			require.Len(t, drv.Events(), 1)
		} else {
			require.Equal(t, codes.Unset, drv.Status().Code, "%v", c.err)
			require.Empty(t, drv.Events())
		}
	}
}

// A driver whose store panics ends its span, and the store call's, all
// the same, with status Error: a process that recovers panics per request
// leaks no span.
func TestBridgePanicEndsSpans(t *testing.T) {
	ctx := context.Background()
	obs, _, rec, open := obsSDK(t, ckotel.Options{})
	st := observe.Partitions(faulty.NewPartitions(memory.NewPartitions(), faulty.Options{
		Hook: func(context.Context, faulty.Call, bool) error { panic("store exploded") }}), obs)
	tc, err := tally.New[*tally.Sum](st, "page", tally.Options{Observer: obs})
	require.NoError(t, err)
	m, err := tc.NewMutator()
	require.NoError(t, err)
	dl, err := deltalog.New(st, deltalog.Options{Observer: obs})
	require.NoError(t, err)
	for _, call := range []func(){
		func() { _ = m.Update(ctx, func(s *tally.Sum) error { return s.Add(1) }) },
		func() { _, _ = tc.Read(ctx) },
		func() { _, _ = tc.GC(ctx) },
		func() { _ = dl.Add(ctx, "views", timeid.New(time.Now()), 1) },
	} {
		func() {
			defer func() { require.Equal(t, "store exploded", recover()) }()
			call()
		}()
	}
	require.Equal(t, int64(8), open.started.Load(), "four operations and their store calls")
	require.Equal(t, open.started.Load(), open.ended.Load(), "a span was started and never ended")
	spans := rec.Ended()
	require.NoError(t, checkParentage(spans))
	for _, s := range spans {
		require.Equal(t, codes.Error, s.Status().Code, s.Name())
	}
}

// A refused operation (outside the window) is no failure: its metric
// points have no error.type (the conventions': "if and only if the
// operation failed"), though its span names the refusal.
func TestBridgeRefusalMetricHasNoErrorType(t *testing.T) {
	obs, reader, rec, _ := obsSDK(t, ckotel.Options{})
	_, op := observe.Start(context.Background(), obs, "ledger", "update")
	op.End(observe.Event{Err: fmt.Errorf("x: %w", crdt.ErrOutsideWindow), Attempts: 1})
	_, op = observe.Start(context.Background(), obs, "ledger", "value")
	op.End(observe.Event{Err: fmt.Errorf("x: %w", crdt.ErrUnavailable), Attempts: 1, Refused: 1})
	points := obsMetricAttrs(t, reader)["counterkit.operation.duration"]
	require.NotEmpty(t, points)
	var types []string
	for _, kv := range points {
		if kv.Key == "error.type" {
			types = append(types, kv.Value.Emit())
		}
	}
	require.Equal(t, []string{"unavailable"}, types, "only the failure's point has error.type")
	spans := rec.Ended()
	require.Len(t, spans, 2)
	require.Contains(t, attrs(spans[0].Attributes()...), "error.type=outside_window")
	require.Equal(t, codes.Unset, spans[0].Status().Code)
}

// A record sweep's store calls through an observed store (keys listed,
// dead records deleted in a batch) carry the database conventions' row
// count and batch size.
func TestBridgeSweepCalls(t *testing.T) {
	ctx := context.Background()
	obs, _, rec, _ := obsSDK(t, ckotel.Options{DBNamespace: "ks", DBCollection: "tbl"})
	st := observe.Siblings(memory.NewSiblings(), obs)
	l, err := ledger.New(st, "acct", ledger.Options{Actor: "a"})
	require.NoError(t, err)
	for _, x := range []crdt.TxnID{"t1", "t2", "t3"} { // t3's record dates a: kept
		_, err := l.Credit(ctx, x, 1)
		require.NoError(t, err)
	}
	rec.Reset()
	sweepable := st.(interface {
		store.Siblings
		store.SiblingDeleter
		ledger.KeyLister
	})
	later := func() time.Time { return time.Now().Add(ledger.DefaultExpireAfter + time.Hour) }
	res, err := ledger.ExpireAllRecords(ctx, sweepable, ledger.ExpireOptions{Clock: later})
	require.NoError(t, err)
	require.Equal(t, ledger.ExpireResult{Deleted: 2, Dating: 1}, res)
	got := map[string][]string{}
	for _, s := range rec.Ended() {
		a := attrs(s.Attributes()...)
		for _, kv := range a {
			if kv == "db.response.returned_rows=3" || kv == "db.operation.batch.size=2" {
				got[s.Name()] = append(got[s.Name()], kv)
			}
		}
	}
	require.Equal(t, map[string][]string{
		"keys tbl":         {"db.response.returned_rows=3"},
		"delete_batch tbl": {"db.operation.batch.size=2"},
	}, got)
}

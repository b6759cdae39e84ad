package ckotel_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/observe/ckotel"
)

// stuckExporter is a span and metric exporter whose every export blocks
// until release is closed, as one sending to a collector that stopped
// answering does.
type stuckExporter struct {
	release chan struct{}
	calls   atomic.Int64
}

func (e *stuckExporter) wait(ctx context.Context) error {
	e.calls.Add(1)
	select {
	case <-e.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *stuckExporter) ExportSpans(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
	return e.wait(ctx)
}
func (e *stuckExporter) Export(ctx context.Context, _ *metricdata.ResourceMetrics) error {
	return e.wait(ctx)
}
func (e *stuckExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}
func (e *stuckExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}
func (e *stuckExporter) ForceFlush(context.Context) error { return nil }
func (e *stuckExporter) Shutdown(context.Context) error   { return nil }

// With the SDK's batch span processor and periodic reader, exports run on
// the SDK's goroutines: an exporter that never returns (a collector that
// stopped answering) does not slow counter operations down, even once the
// span queue is full and spans are dropped.
func TestStuckExporterDoesNotBlockOperations(t *testing.T) {
	exp := &stuckExporter{release: make(chan struct{})}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Millisecond), sdktrace.WithMaxQueueSize(64)))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(time.Millisecond))))
	t.Cleanup(func() {
		close(exp.release)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tp.Shutdown(ctx)
		_ = mp.Shutdown(ctx)
	})
	obs, err := ckotel.New(ckotel.Options{MeterProvider: mp, TracerProvider: tp})
	require.NoError(t, err)
	l, err := ledger.New(observe.Siblings(memory.NewSiblings(), obs), "acct-1", ledger.Options{Actor: "api-1", Observer: obs})
	require.NoError(t, err)
	ctx := context.Background()
	update := func(prefix string, n int) error {
		for i := range n {
			if _, err := l.Update(ctx, crdt.TxnID(fmt.Sprintf("%s%d", prefix, i)), 1); err != nil {
				return err
			}
		}
		return nil
	}
	require.NoError(t, update("t", 10))
	require.Eventually(t, func() bool { return exp.calls.Load() >= 2 }, 5*time.Second, time.Millisecond,
		"both exporters are stuck in an export")
	// Each update makes a ledger span and two store call spans: far past
	// the queue.
	done := make(chan error, 1)
	go func() { done <- update("u", 500) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("operations wait for the stuck exporters")
	}
	v, err := l.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(510), v)
}

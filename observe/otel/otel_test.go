package otel_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
	cotel "github.com/counterkit/counterkit/observe/otel"
	"github.com/counterkit/counterkit/store"
)

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

func setup(t *testing.T) (observe.Observer, *sdkmetric.ManualReader, *tracetest.SpanRecorder) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	obs, err := cotel.New(cotel.Options{Meter: mp.Meter("counterkit"), Tracer: tp.Tracer("counterkit")})
	require.NoError(t, err)
	return obs, reader, rec
}

// sums returns every Int64 sum, keyed by "name outcome".
func sums(t *testing.T, r *sdkmetric.ManualReader) map[string]int64 {
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, p := range s.DataPoints {
					o, _ := p.Attributes.Value("outcome")
					out[m.Name+" "+o.AsString()] += p.Value
				}
			}
		}
	}
	return out
}

// TestLedgerMetricsAndSpans runs a ledger through a lost acknowledgement, a
// retry recognised as a duplicate and a refused bad input, and reads what
// an operator would see from the SDK's in-memory reader.
func TestLedgerMetricsAndSpans(t *testing.T) {
	obs, reader, rec := setup(t)
	ctx := context.Background()
	st := &ackLoser{Siblings: memory.NewSiblings(), n: 1}
	l, err := ledger.New(st, "wallet", ledger.Options{Actor: "api-1", Observer: obs, Backoff: ledger.Backoff{Initial: -1}})
	require.NoError(t, err)

	_, err = l.Credit(ctx, "t1", 10) // ack lost, retried, recognised as landed
	require.NoError(t, err)
	_, err = l.Credit(ctx, "t1", 10) // the client's retry: a duplicate
	require.NoError(t, err)
	_, err = l.Value(ctx)
	require.NoError(t, err)

	got := sums(t, reader)
	require.Equal(t, int64(1), got["counterkit.operations applied"], got)
	require.Equal(t, int64(1), got["counterkit.operations duplicate"], got)
	require.Equal(t, int64(1), got["counterkit.operations ok"], got)
	require.Equal(t, int64(1), got["counterkit.writes.ambiguous applied"], got)
	require.Equal(t, int64(1), got["counterkit.retries applied"], got)
	require.Equal(t, int64(1), got["counterkit.duplicates duplicate"], got)

	spans := rec.Ended()
	require.Len(t, spans, 3)
	require.Equal(t, "counterkit ledger update", spans[0].Name())
	require.False(t, spans[0].StartTime().After(spans[0].EndTime()))
}

func TestErrorsBecomeSpanErrors(t *testing.T) {
	obs, reader, rec := setup(t)
	obs.Observe(context.Background(), observe.Event{Component: "deltalog", Op: "add", Outcome: observe.OutsideWindow,
		Err: fmt.Errorf("late: %w", crdt.ErrOutsideWindow)})
	require.Equal(t, int64(1), sums(t, reader)["counterkit.window.refusals outside_window"])
	require.Len(t, rec.Ended(), 1)
	require.Len(t, rec.Ended()[0].Events(), 1, "the error is recorded on the span")
}

func TestNewNeedsAMeter(t *testing.T) {
	_, err := cotel.New(cotel.Options{})
	require.True(t, errors.Is(err, crdt.ErrInvalidConfig))
}

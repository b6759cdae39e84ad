package ckotel_test

import (
	"context"
	"fmt"
	"sort"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/observe/ckotel"
	"github.com/counterkit/counterkit/timeid"
)

// The bridge takes the application's providers. A deltalog and its store
// report to it: the store's call is a Client span inside the deltalog's
// Internal span, and its duration goes to db.client.operation.duration
// with buckets for storage calls.
func Example() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))

	obs, err := ckotel.New(ckotel.Options{MeterProvider: mp, TracerProvider: tp, DBCollection: "counters"})
	if err != nil {
		panic(err)
	}
	logs, err := deltalog.New(observe.Partitions(memory.NewPartitions(), obs), deltalog.Options{Observer: obs})
	if err != nil {
		panic(err)
	}
	if err := logs.Add(ctx, "page-views", timeid.New(time.Now()), 1); err != nil {
		panic(err)
	}

	names := map[string]string{}
	for _, s := range spans.Ended() {
		names[s.SpanContext().SpanID().String()] = s.Name()
	}
	for _, s := range spans.Ended() {
		parent := names[s.Parent().SpanID().String()]
		fmt.Printf("span %q %v parent=%q\n", s.Name(), s.SpanKind(), parent)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		panic(err)
	}
	var lines []string
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if h, ok := m.Data.(metricdata.Histogram[float64]); ok {
			b := h.DataPoints[0].Bounds
			lines = append(lines, fmt.Sprintf("metric %s %s buckets %v … %v", m.Name, m.Unit, b[0], b[len(b)-1]))
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// span "apply counters" client parent="counterkit deltalog add"
	// span "counterkit deltalog add" internal parent=""
	// metric counterkit.operation.duration s buckets 0.0005 … 10
	// metric db.client.operation.duration s buckets 0.001 … 10
}

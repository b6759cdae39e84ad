package main

import (
	"context"
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/observe/ckotel"
)

// metrics is the service's OpenTelemetry pipeline: a MeterProvider whose
// only reader is the Prometheus exporter, registered in a registry of its
// own that handler serves. observer is observe/ckotel's bridge on the
// provider: the Book's ledgers and the store wrapper report to it.
type metrics struct {
	provider *sdkmetric.MeterProvider
	meter    metric.Meter
	observer observe.Observer
	handler  http.Handler
}

func newMetrics() (*metrics, error) {
	reg := prometheus.NewRegistry()
	// Prometheus-style names: counterkit.duplicates becomes
	// counterkit_duplicates_total, counterkit.operation.duration
	// counterkit_operation_duration_seconds, db.client.operation.duration
	// db_client_operation_duration_seconds.
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo(),
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes))
	if err != nil {
		return nil, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp),
		sdkmetric.WithResource(resource.NewSchemaless(attribute.String("service.name", "counterkit-service"))))
	meter := mp.Meter("github.com/counterkit/counterkit/examples/service")
	obs, err := ckotel.New(ckotel.Options{MeterProvider: mp})
	if err != nil {
		return nil, errors.Join(err, mp.Shutdown(context.Background()))
	}
	return &metrics{
		provider: mp,
		meter:    meter,
		observer: obs,
		handler:  promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
	}, nil
}

// watchBook reports the Book's ledgers (ledger.BookStats) at every scrape:
// a Pending that stays above zero is a write that may not have landed and
// waits for the key's next request or for LandPending.
func (m *metrics) watchBook(b *ledger.Book) error {
	open, err1 := m.meter.Int64ObservableGauge("service.book.ledgers", metric.WithUnit("{ledger}"),
		metric.WithDescription("Ledgers the Book holds, by state: in_use, pending (holding a write that may not have landed), idle."))
	opened, err2 := m.meter.Int64ObservableCounter("service.book.opened", metric.WithUnit("{ledger}"),
		metric.WithDescription("Ledgers opened since the start; each writes its key as a new actor entry."))
	evicted, err3 := m.meter.Int64ObservableCounter("service.book.evicted", metric.WithUnit("{ledger}"),
		metric.WithDescription("Idle ledgers dropped to stay within -max-open."))
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	state := func(s string) metric.ObserveOption {
		return metric.WithAttributeSet(attribute.NewSet(attribute.String("state", s)))
	}
	_, err := m.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := b.Stats()
		o.ObserveInt64(open, int64(st.InUse), state("in_use"))
		o.ObserveInt64(open, int64(st.Pending), state("pending"))
		o.ObserveInt64(open, int64(st.Open-st.InUse-st.Pending), state("idle"))
		o.ObserveInt64(opened, int64(st.Opened))
		o.ObserveInt64(evicted, int64(st.Evicted))
		return nil
	}, open, opened, evicted)
	return err
}

func (m *metrics) close() error { return m.provider.Shutdown(context.Background()) }

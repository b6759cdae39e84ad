// Package ckotel bridges counterkit's observe.Observer to OpenTelemetry:
// every operation of a driver (ledger, tally, deltalog, balance) and every
// call of a store wrapped with observe.Siblings or observe.Partitions
// becomes a span and metric points. It is its own Go module so that the
// core never pulls OpenTelemetry.
//
//	obs, err := ckotel.New(ckotel.Options{MeterProvider: mp, TracerProvider: tp})
//	st := observe.Siblings(store, obs)
//	l, err := ledger.New(st, "wallet", ledger.Options{Actor: "api-1", Observer: obs})
//
// The instrumentation scope is ScopeName at Version, with the schema of
// the semantic conventions it follows.
//
// The bridge records on the operation's goroutine and exports nothing
// itself: with a batch span processor (sdktrace.WithBatcher) and a
// periodic reader, as production setups have, an exporter that is slow or
// stuck delays no counter operation (spans past the processor's queue are
// dropped); a synchronous one (sdktrace.WithSyncer) exports inside each
// operation's end. A provider that panics makes the operation panic once
// it is done (observe.Observer).
//
// # Spans
//
// A driver operation is an Internal span named "counterkit <component>
// <op>", begun when the operation begins (observe.Start), so the store
// calls it makes are its children: Client spans named by the call and its
// target ("fetch", "fetch <collection>", or "fetch <namespace>" when no
// collection is set), with the database semantic
// conventions (db.system.name, db.operation.name, db.namespace,
// db.collection.name, db.response.returned_rows, db.operation.batch.size).
// An operation with an error has error.type naming the crdt sentinel its
// error wraps (observe.ErrorType); a failed one (observe.Event.Failed: not
// a refusal of its input or its age, nor canceled by its caller) also has
// status Error and an exception event of that type, whose message is the
// sentinel's text (observe.ErrorSummary). Non-zero counts
// (observe.Event.Counts, and lag in seconds, negative when the writers'
// clocks disagree) are attributes under counterkit.*.
//
// # Metrics
//
// Store calls:
//
//	db.client.operation.duration  histogram  s
//
// with db.system.name, db.operation.name, db.namespace and
// db.collection.name (when known), counterkit.outcome and, on failure
// (observe.Event.Failed: not for a refusal or a cancellation, which spans
// still name), error.type. Driver operations, with counterkit.component,
// counterkit.operation, counterkit.outcome and, on failure, error.type:
//
//	counterkit.operation.duration  histogram  s
//	counterkit.attempts            counter    cycles run: one per operation, one more per write sent again
//	counterkit.retries             counter    attempts beyond the first
//	counterkit.writes.ambiguous    counter    attempts whose write may or may not have landed
//	counterkit.writes.refused      counter    attempts the store refused (crdt.ErrUnavailable)
//	counterkit.duplicates          counter    retries recognised (outcome: duplicate, duplicate_folded)
//	counterkit.window.refusals     counter    updates refused for their time: outside the window, or expired
//	counterkit.siblings.merged     counter    stored values merged beyond the first
//	counterkit.conflicts           gauge      ids held with two amounts in the state last read or written: a ledger's; for balance, what the last read or merge found
//	counterkit.gc.folded           counter    shards, cells or rows a GC or merge folded
//	counterkit.actors.retired      counter    actor entries a ledger write retired
//	counterkit.gc.lag              histogram  s: how far behind a GC or merge ran (positive lags; a negative one is on the span only)
//	counterkit.state.actors        gauge      actors in the ledger state last written or read
//
// The two gauges carry counterkit.component alone: each holds the last
// state read or written, whatever the operation and its outcome. And for
// both (with the attributes of each):
//
//	counterkit.state.bytes         histogram  By: bytes written or read
//
// Histograms carry bucket advice (DBDurationBuckets, the conventions';
// DurationBuckets, LagBuckets, ByteBuckets): the SDK's defaults, made for
// milliseconds, would put every operation in their first bucket. No attribute carries a key, a
// transaction id or an amount.
package ckotel

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/dbconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/observe"
)

// ScopeName is the instrumentation scope of the bridge's meter and tracer:
// this module's path.
const ScopeName = "github.com/counterkit/counterkit/observe/ckotel"

// Version is the instrumentation scope's version: this module's release.
const Version = "0.1.0"

// Bucket boundaries the histograms advise.
var (
	// DurationBuckets, in seconds, span a store call from half a
	// millisecond (an embedded read) to 10 s (a timed-out quorum write).
	DurationBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	// DBDurationBuckets, in seconds, are db.client.operation.duration's:
	// those the database semantic conventions advise for it.
	DBDurationBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}
	// LagBuckets, in seconds, span a GC or merge run from 1 s to a day
	// behind.
	LagBuckets = []float64{1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600}
	// ByteBuckets span a state from 256 bytes to 16 MiB.
	ByteBuckets = []float64{256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20}
)

// Attribute keys of this package, on spans and metrics alike.
const (
	ComponentKey = attribute.Key("counterkit.component")
	OperationKey = attribute.Key("counterkit.operation")
	OutcomeKey   = attribute.Key("counterkit.outcome")
)

// Options configure the bridge.
type Options struct {
	// MeterProvider and TracerProvider receive the metrics and spans; nil
	// (a nil interface, or a nil pointer in one) means OpenTelemetry's
	// global providers (otel.GetMeterProvider, otel.GetTracerProvider),
	// which do nothing until one is set.
	MeterProvider  metric.MeterProvider
	TracerProvider trace.TracerProvider
	// DBSystem is db.system.name for store calls whose backend the
	// wrapper could not tell (observe.Event.System empty): the name of the
	// database in the semantic conventions' form: lower case letters,
	// digits, '_', '.' and '-', starting with a letter ("cassandra",
	// "other_sql"). Calls of an unknown backend without it have no
	// db.system.name.
	DBSystem string
	// DBNamespace and DBCollection are db.namespace and db.collection.name
	// of store calls: Cassandra's keyspace and table, Riak's bucket type
	// and bucket, valid UTF-8 without control characters. Empty values
	// are left out.
	DBNamespace, DBCollection string
}

// dbSystemName is the form of a db.system.name value.
var dbSystemName = regexp.MustCompile(`^[a-z][a-z0-9_.-]*$`)

type bridge struct {
	tracer trace.Tracer
	opts   Options

	attempts, retries, ambiguous, refused, duplicates, refusals, siblings, folded, retired metric.Int64Counter
	conflicts, actors                                                                      metric.Int64Gauge
	duration, dbDuration, lag                                                              metric.Float64Histogram
	bytes                                                                                  metric.Int64Histogram
}

// New returns an Observer (an observe.Starter) recording into the
// providers of o. The error wraps crdt.ErrInvalidConfig for a DBSystem,
// DBNamespace or DBCollection not of the form Options gives, or is the
// meter's error creating an instrument.
func New(o Options) (observe.Observer, error) {
	if o.DBSystem != "" && !dbSystemName.MatchString(o.DBSystem) {
		return nil, fmt.Errorf("%w: ckotel: DBSystem %q is not a db.system.name (lower case letters, digits, '_', '.' and '-', starting with a letter)", crdt.ErrInvalidConfig, o.DBSystem)
	}
	for _, f := range []struct{ name, v string }{{"DBNamespace", o.DBNamespace}, {"DBCollection", o.DBCollection}} {
		if !utf8.ValidString(f.v) || strings.ContainsFunc(f.v, unicode.IsControl) {
			return nil, fmt.Errorf("%w: ckotel: %s %q is not valid UTF-8 without control characters", crdt.ErrInvalidConfig, f.name, f.v)
		}
	}
	mp := orGlobal(o.MeterProvider, otel.GetMeterProvider)
	tp := orGlobal(o.TracerProvider, otel.GetTracerProvider)
	m := mp.Meter(ScopeName, metric.WithInstrumentationVersion(Version), metric.WithSchemaURL(semconv.SchemaURL))
	b := &bridge{opts: o,
		tracer: tp.Tracer(ScopeName, trace.WithInstrumentationVersion(Version), trace.WithSchemaURL(semconv.SchemaURL))}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	b.attempts = counter("counterkit.attempts", "{attempt}", "Cycles run: one per operation, one more per write sent again.")
	b.retries = counter("counterkit.retries", "{write}", "Store writes tried beyond the first of an operation.")
	b.ambiguous = counter("counterkit.writes.ambiguous", "{attempt}", "Attempts whose write may or may not have landed.")
	b.refused = counter("counterkit.writes.refused", "{attempt}", "Attempts the store refused: nothing landed.")
	b.duplicates = counter("counterkit.duplicates", "{update}", "Retries recognised as already counted.")
	b.refusals = counter("counterkit.window.refusals", "{update}", "Updates refused for their time: outside the window, or expired.")
	b.siblings = counter("counterkit.siblings.merged", "{value}", "Stored values merged beyond the first.")
	b.folded = counter("counterkit.gc.folded", "{item}", "Shards, cells or rows a GC or merge folded.")
	b.retired = counter("counterkit.actors.retired", "{actor}", "Actor entries a ledger write retired.")
	gauge := func(name, unit, desc string) metric.Int64Gauge {
		g, err := m.Int64Gauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return g
	}
	b.conflicts = gauge("counterkit.conflicts", "{id}", "Ids held with two amounts in the state last read or written.")
	b.actors = gauge("counterkit.state.actors", "{actor}", "Actors in the state written or read.")
	seconds := func(name, desc string, bounds []float64) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(bounds...))
		errs = append(errs, err)
		return h
	}
	b.duration = seconds("counterkit.operation.duration", "Duration of counterkit operations.", DurationBuckets)
	b.dbDuration = seconds(dbconv.ClientOperationDuration{}.Name(), dbconv.ClientOperationDuration{}.Description(), DBDurationBuckets)
	b.lag = seconds("counterkit.gc.lag", "How far behind a GC or merge ran.", LagBuckets)
	var err error
	b.bytes, err = m.Int64Histogram("counterkit.state.bytes", metric.WithUnit("By"),
		metric.WithDescription("Bytes of the state or rows written or read."), metric.WithExplicitBucketBoundaries(ByteBuckets...))
	errs = append(errs, err)
	if err = cmp.Or(errs...); err != nil {
		return nil, err
	}
	return b, nil
}

// startAttrs are the attributes known when e begins: for a store call the
// database's (those a sampler may use), for a driver its component and
// operation.
func (b *bridge) startAttrs(e observe.Event) []attribute.KeyValue {
	if !e.StoreCall() {
		return []attribute.KeyValue{ComponentKey.String(e.Component), OperationKey.String(e.Op)}
	}
	a := make([]attribute.KeyValue, 0, 4)
	if sys := cmp.Or(e.System, b.opts.DBSystem); sys != "" {
		a = append(a, semconv.DBSystemNameKey.String(sys))
	}
	a = append(a, semconv.DBOperationNameKey.String(e.Op))
	if b.opts.DBNamespace != "" {
		a = append(a, semconv.DBNamespaceKey.String(b.opts.DBNamespace))
	}
	if b.opts.DBCollection != "" {
		a = append(a, semconv.DBCollectionNameKey.String(b.opts.DBCollection))
	}
	return a
}

// orGlobal returns p, or global() when p is nil or holds a nil pointer (a
// provider declared and left unset), whose methods would panic.
func orGlobal[P any](p P, global func() P) P {
	if v := reflect.ValueOf(p); !v.IsValid() || v.Kind() == reflect.Pointer && v.IsNil() {
		return global()
	}
	return p
}

// spanStart is the name and options of e's span.
func (b *bridge) spanStart(e observe.Event) (string, []trace.SpanStartOption) {
	opts := []trace.SpanStartOption{trace.WithTimestamp(e.Start), trace.WithAttributes(b.startAttrs(e)...)}
	if !e.StoreCall() {
		return "counterkit " + e.Component + " " + e.Op, append(opts, trace.WithSpanKind(trace.SpanKindInternal))
	}
	name := e.Op
	switch {
	case b.opts.DBCollection != "":
		name += " " + b.opts.DBCollection
	case b.opts.DBNamespace != "":
		name += " " + b.opts.DBNamespace
	}
	return name, append(opts, trace.WithSpanKind(trace.SpanKindClient))
}

// Start begins e's span; the operation runs in the returned context.
func (b *bridge) Start(ctx context.Context, e observe.Event) (context.Context, func(observe.Event)) {
	name, opts := b.spanStart(e)
	ctx, span := b.tracer.Start(ctx, name, opts...)
	return ctx, func(e observe.Event) {
		b.record(ctx, e)
		b.finish(span, e)
	}
}

// Observe records e, an operation that was not begun with Start: its span
// is made now, with e's start and end times.
func (b *bridge) Observe(ctx context.Context, e observe.Event) {
	b.record(ctx, e)
	name, opts := b.spanStart(e)
	_, span := b.tracer.Start(ctx, name, opts...)
	b.finish(span, e)
}

// finish sets the attributes known at the end of e and ends span.
func (b *bridge) finish(span trace.Span, e observe.Event) {
	if !span.IsRecording() {
		span.End()
		return
	}
	a := outcomeAttrs(make([]attribute.KeyValue, 0, 12), e, false)
	if e.StoreCall() {
		switch e.Op {
		case "fetch", "scan", "snapshot", "keys":
			if e.Rows > 0 {
				a = append(a, semconv.DBResponseReturnedRowsKey.Int(e.Rows))
			}
		case "apply", "delete_batch":
			if e.Rows > 1 { // a single mutation is no batch
				a = append(a, semconv.DBOperationBatchSizeKey.Int(e.Rows))
			}
		}
		if e.Bytes != 0 {
			a = append(a, attribute.Int("counterkit.bytes", e.Bytes))
		}
	} else {
		e.Counts(func(k string, v int) { a = append(a, attribute.Int("counterkit."+k, v)) })
		if e.Lag != 0 {
			a = append(a, attribute.Float64("counterkit.lag", e.Lag.Seconds()))
		}
	}
	span.SetAttributes(a...)
	if e.Failed() {
		typ := observe.ErrorType(e.Err)
		span.AddEvent(semconv.ExceptionEventName, trace.WithTimestamp(e.Start.Add(e.Duration)), trace.WithAttributes(
			semconv.ExceptionTypeKey.String(typ), semconv.ExceptionMessageKey.String(observe.ErrorSummary(e.Err))))
		span.SetStatus(codes.Error, typ)
	}
	span.End(trace.WithTimestamp(e.Start.Add(e.Duration)))
}

// outcomeAttrs appends e's outcome and its error.type to a: the
// attributes known only at the end. A span has error.type for any error,
// a refusal's included; a metric point (metric) only on failure
// (observe.Event.Failed), so that no refusal or cancellation is counted
// among the errors.
func outcomeAttrs(a []attribute.KeyValue, e observe.Event, metric bool) []attribute.KeyValue {
	a = append(a, OutcomeKey.String(e.Outcome))
	if metric && !e.Failed() {
		return a
	}
	if typ := observe.ErrorType(e.Err); typ != "" {
		a = append(a, semconv.ErrorTypeKey.String(typ))
	}
	return a
}

// record records e's metric points, with e's start and outcome attributes.
func (b *bridge) record(ctx context.Context, e observe.Event) {
	set := metric.WithAttributeSet(attribute.NewSet(outcomeAttrs(b.startAttrs(e), e, true)...))
	if e.Bytes > 0 {
		b.bytes.Record(ctx, int64(e.Bytes), set)
	}
	if e.StoreCall() {
		b.dbDuration.Record(ctx, e.Duration.Seconds(), set)
		return
	}
	b.duration.Record(ctx, e.Duration.Seconds(), set)
	add := func(c metric.Int64Counter, n int) {
		if n > 0 {
			c.Add(ctx, int64(n), set)
		}
	}
	add(b.attempts, e.Attempts)
	add(b.retries, e.Attempts-1)
	add(b.ambiguous, e.Ambiguous)
	add(b.refused, e.Refused)
	add(b.siblings, e.Siblings-1)
	add(b.folded, e.Folded)
	add(b.retired, e.Retired)
	if observe.IsDuplicate(e.Outcome) {
		b.duplicates.Add(ctx, 1, set)
	}
	if observe.IsWindowRefusal(e.Outcome) {
		b.refusals.Add(ctx, 1, set)
	}
	if e.Lag > 0 {
		b.lag.Record(ctx, e.Lag.Seconds(), set)
	}
	// A state gauge holds the last state read or written, whatever the
	// call: one series per component. Split by operation or outcome, a
	// series would keep an older state's value for good.
	state := metric.WithAttributeSet(attribute.NewSet(ComponentKey.String(e.Component)))
	actors, conflicts := stateGauges(e)
	if actors {
		b.actors.Record(ctx, int64(e.Actors), state)
	}
	if conflicts {
		b.conflicts.Record(ctx, int64(e.Conflicts), state)
	}
}

// stateGauges reports whether e sets the actors and the conflicts gauges,
// 0 included: a ledger's event carries the state it last read or wrote
// (none before its first read: then it failed with both 0), a balance
// read or merge the conflicts it read.
func stateGauges(e observe.Event) (actors, conflicts bool) {
	switch {
	case e.Component == "ledger":
		ok := e.Err == nil || e.Actors > 0
		return ok, ok
	case e.Component == "balance" && (e.Op == "read" || e.Op == "merge"):
		return false, e.Err == nil || e.Conflicts > 0
	}
	return false, false
}

// Package otel bridges counterkit's observe.Observer to OpenTelemetry: every
// event becomes metric points and, with a tracer, a span. It is its own Go
// module so that the core never pulls OpenTelemetry.
//
//	obs, err := otel.New(otel.Options{Meter: mp.Meter("counterkit"), Tracer: tp.Tracer("counterkit")})
//	l, err := ledger.New(siblings, "wallet", ledger.Options{Actor: "api-1", Observer: obs})
//
// # Metrics
//
// All carry the attributes component, op and outcome (see observe.Event);
// none carries a key or a transaction id.
//
//	counterkit.operations          counter    operations completed
//	counterkit.operation.duration  histogram  seconds
//	counterkit.attempts            counter    store writes tried (retries included)
//	counterkit.retries             counter    attempts beyond the first
//	counterkit.writes.ambiguous    counter    writes that may or may not have landed
//	counterkit.writes.refused      counter    writes known not to have landed
//	counterkit.duplicates          counter    retries recognised (outcome: duplicate, duplicate_folded)
//	counterkit.window.refusals     counter    updates refused as older than the window
//	counterkit.siblings.merged     counter    stored values merged beyond the first
//	counterkit.conflicts           gauge      ids held with two amounts in the state last written
//	counterkit.gc.folded           counter    shards, cells or rows a GC or merge folded
//	counterkit.gc.lag              histogram  seconds: how far behind a GC or merge ran
//	counterkit.state.bytes         histogram  bytes of the state written or read
//	counterkit.state.actors        gauge      actors in the state written or read
//
// # Spans
//
// With a Tracer, each event becomes a span named "counterkit <component>
// <op>", started and ended at the event's times, a child of the span in the
// operation's context, with the event's counts as attributes and its error
// recorded.
package otel

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/observe"
)

// Options configure the bridge. Meter is required; Tracer is optional.
type Options struct {
	Meter  metric.Meter
	Tracer trace.Tracer
}

type observer struct {
	tracer trace.Tracer

	ops, attempts, retries, ambiguous, refused, duplicates, refusals, siblings, folded metric.Int64Counter
	conflicts, actors                                                                  metric.Int64Gauge
	duration, lag                                                                      metric.Float64Histogram
	bytes                                                                              metric.Int64Histogram
}

// New returns an Observer recording into o.Meter (and o.Tracer). The error
// wraps crdt.ErrInvalidConfig when Meter is nil, or is the Meter's error
// creating an instrument.
func New(o Options) (observe.Observer, error) {
	if o.Meter == nil {
		return nil, errors.Join(crdt.ErrInvalidConfig, errors.New("otel: nil Meter"))
	}
	m := o.Meter
	ob := &observer{tracer: o.Tracer}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	ob.ops = counter("counterkit.operations", "{operation}", "Operations completed.")
	ob.attempts = counter("counterkit.attempts", "{write}", "Store writes tried, retries included.")
	ob.retries = counter("counterkit.retries", "{write}", "Store writes tried beyond the first of an operation.")
	ob.ambiguous = counter("counterkit.writes.ambiguous", "{write}", "Writes that may or may not have landed.")
	ob.refused = counter("counterkit.writes.refused", "{write}", "Writes known not to have landed.")
	ob.duplicates = counter("counterkit.duplicates", "{update}", "Retries recognised as already counted.")
	ob.refusals = counter("counterkit.window.refusals", "{update}", "Updates refused as older than the window.")
	ob.siblings = counter("counterkit.siblings.merged", "{value}", "Stored values merged beyond the first.")
	ob.folded = counter("counterkit.gc.folded", "{item}", "Shards, cells or rows a GC or merge folded.")
	var err error
	ob.conflicts, err = m.Int64Gauge("counterkit.conflicts", metric.WithUnit("{id}"), metric.WithDescription("Ids held with two amounts in the state last written."))
	errs = append(errs, err)
	ob.actors, err = m.Int64Gauge("counterkit.state.actors", metric.WithUnit("{actor}"), metric.WithDescription("Actors in the state written or read."))
	errs = append(errs, err)
	ob.duration, err = m.Float64Histogram("counterkit.operation.duration", metric.WithUnit("s"), metric.WithDescription("Duration of operations."))
	errs = append(errs, err)
	ob.lag, err = m.Float64Histogram("counterkit.gc.lag", metric.WithUnit("s"), metric.WithDescription("How far behind a GC or merge ran."))
	errs = append(errs, err)
	ob.bytes, err = m.Int64Histogram("counterkit.state.bytes", metric.WithUnit("By"), metric.WithDescription("Bytes of the state written or read."))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return ob, nil
}

// Observe records e.
func (ob *observer) Observe(ctx context.Context, e observe.Event) {
	set := metric.WithAttributeSet(attribute.NewSet(
		attribute.String("component", e.Component),
		attribute.String("op", e.Op),
		attribute.String("outcome", e.Outcome),
	))
	ob.ops.Add(ctx, 1, set)
	ob.duration.Record(ctx, e.Duration.Seconds(), set)
	add := func(c metric.Int64Counter, n int) {
		if n > 0 {
			c.Add(ctx, int64(n), set)
		}
	}
	add(ob.attempts, e.Attempts)
	add(ob.retries, e.Attempts-1)
	add(ob.ambiguous, e.Ambiguous)
	add(ob.refused, e.Refused)
	add(ob.siblings, e.Siblings-1)
	add(ob.folded, e.Folded)
	switch e.Outcome {
	case observe.Duplicate, observe.DuplicateFolded:
		ob.duplicates.Add(ctx, 1, set)
	case observe.OutsideWindow, observe.Expired:
		ob.refusals.Add(ctx, 1, set)
	}
	if e.Lag > 0 {
		ob.lag.Record(ctx, e.Lag.Seconds(), set)
	}
	if e.Bytes > 0 {
		ob.bytes.Record(ctx, int64(e.Bytes), set)
	}
	if e.Actors > 0 {
		ob.actors.Record(ctx, int64(e.Actors), set)
		ob.conflicts.Record(ctx, int64(e.Conflicts), set)
	}
	if ob.tracer == nil {
		return
	}
	_, span := ob.tracer.Start(ctx, "counterkit "+e.Component+" "+e.Op, trace.WithTimestamp(e.Start),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String("counterkit.component", e.Component),
			attribute.String("counterkit.op", e.Op),
			attribute.String("counterkit.outcome", e.Outcome),
			attribute.Int("counterkit.attempts", e.Attempts),
			attribute.Int("counterkit.ambiguous", e.Ambiguous),
			attribute.Int("counterkit.siblings", e.Siblings),
			attribute.Int("counterkit.conflicts", e.Conflicts),
			attribute.Int("counterkit.folded", e.Folded),
			attribute.Int("counterkit.bytes", e.Bytes),
			attribute.Int("counterkit.actors", e.Actors),
		))
	if e.Err != nil {
		span.RecordError(e.Err)
		span.SetStatus(codes.Error, e.Outcome)
	}
	span.End(trace.WithTimestamp(e.Start.Add(e.Duration)))
}

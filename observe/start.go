package observe

import (
	"context"
	"time"
)

// Starter is implemented by an Observer that opens something when an
// operation begins, such as a trace span, so that what the operation does
// (the calls of a wrapped store) is nested in it.
type Starter interface {
	Observer
	// Start is called as an operation begins, with an Event holding its
	// Component, Op, Start and, for a store call, System. It returns the
	// context the operation runs in and end, which is called once with
	// the complete Event in place of Observe. A nil end means Observe.
	Start(ctx context.Context, e Event) (_ context.Context, end func(Event))
}

// Operation is an operation in progress, begun by Start. The zero
// Operation, which Start returns for a nil Observer, does nothing.
type Operation struct {
	o                     Observer
	ctx                   context.Context
	end                   func(Event)
	component, op, system string
	start                 time.Time
	ended                 bool
}

// Start begins an operation of component (such as "ledger") named op (such
// as "update"), reported to o. The operation runs in the returned context,
// so the store calls it makes are reported as its children; End reports
// how it ended. With a nil o, Start returns ctx and a zero Operation, and
// reads no clock.
func Start(ctx context.Context, o Observer, component, op string) (context.Context, Operation) {
	return calls{o, component, ""}.start(ctx, op)
}

// calls begins the operations of one component (a driver, or a wrapped
// store and its system).
type calls struct {
	o                 Observer
	component, system string
}

func (c calls) start(ctx context.Context, name string) (context.Context, Operation) {
	if c.o == nil {
		return ctx, Operation{}
	}
	e := Event{Component: c.component, Op: name, System: c.system, Start: time.Now()}
	op := Operation{o: c.o, component: e.Component, op: e.Op, system: e.System, start: e.Start}
	if s, ok := c.o.(Starter); ok {
		ctx, op.end = s.Start(ctx, e)
	}
	op.ctx = ctx
	return ctx, op
}

// Observed reports whether the operation has an Observer, so that a driver
// can skip gathering what only its Event needs.
func (op *Operation) Observed() bool { return op.o != nil }

// End reports the operation's Event: e, with Component, Op, System and
// Start taken from Start, Duration measured since, and Outcome, when e has
// none, OutcomeOf(e.Err). Only the first End of an operation reports.
func (op *Operation) End(e Event) {
	if op.o == nil || op.ended {
		return
	}
	op.ended = true
	e.Component, e.Op, e.System, e.Start = op.component, op.op, op.system, op.start
	e.Duration = time.Since(e.Start)
	if e.Outcome == "" {
		e.Outcome = OutcomeOf(e.Err)
	}
	if op.end != nil {
		op.end(e)
		return
	}
	op.o.Observe(op.ctx, e)
}

// Multi returns an Observer that passes every event to each of obs in
// order; nil entries are skipped. It is a Starter: each of obs that is one
// opens its span (or whatever it opens) inside the previous one's.
func Multi(obs ...Observer) Observer {
	var m multi
	for _, o := range obs {
		if o != nil {
			m = append(m, o)
		}
	}
	return m
}

type multi []Observer

func (m multi) Observe(ctx context.Context, e Event) {
	for _, o := range m {
		o.Observe(ctx, e)
	}
}

func (m multi) Start(ctx context.Context, e Event) (context.Context, func(Event)) {
	ends := make([]func(Event), len(m))
	for i, o := range m {
		if s, ok := o.(Starter); ok {
			ctx, ends[i] = s.Start(ctx, e)
		}
		if ends[i] == nil {
			o, c := o, ctx
			ends[i] = func(e Event) { o.Observe(c, e) }
		}
	}
	return ctx, func(e Event) {
		for _, end := range ends {
			end(e)
		}
	}
}

package observe

import (
	"context"
	"slices"
	"time"
)

// Starter is an Observer that opens something, such as a trace span, when
// an operation begins, so the store calls it makes nest in it.
type Starter interface {
	Observer
	// Start is called as an operation begins, with its Component, Op,
	// Start and System. It returns the operation's context and end, called
	// once with the complete Event in place of Observe (nil: Observe).
	Start(ctx context.Context, e Event) (_ context.Context, end func(Event))
}

// Operation is an operation in progress, begun by Start. The zero
// Operation does nothing.
type Operation struct {
	o                     Observer
	ctx                   context.Context
	end                   func(Event)
	component, op, system string
	start                 time.Time
	ended                 bool
	// panicked is what the Starter's Start panicked with, raised again
	// by End once the operation is done (nil: none).
	panicked any
}

// Start begins an operation of component (such as "ledger") named op (such
// as "update"), reported to o, which runs in the returned context. With a
// nil o it returns ctx and a zero Operation, and reads no clock.
func Start(ctx context.Context, o Observer, component, op string) (context.Context, Operation) {
	return calls{o, component, ""}.start(ctx, op)
}

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
		ctx, op.end = startOf(s, ctx, e, &op.panicked)
	}
	op.ctx = ctx
	return ctx, op
}

// startOf returns s.Start(ctx, e), or ctx and no end when it panics, what
// it panicked with then in *panicked: the operation runs, and its End
// panics with it (see Observer).
func startOf(s Starter, ctx context.Context, e Event, panicked *any) (octx context.Context, end func(Event)) {
	defer func() {
		if p := recover(); p != nil {
			*panicked, octx, end = p, ctx, nil
		}
	}()
	return s.Start(ctx, e)
}

// Observed reports whether the operation has an Observer.
func (op *Operation) Observed() bool { return op.o != nil }

// End reports e once, with Component, Op, System and Start from Start,
// Duration since, and an empty Outcome set to OutcomeOf(e.Err). Later
// calls do nothing, so an End deferred with an error ends an operation
// whose code panics, and only that one.
func (op *Operation) End(e Event) {
	if op.o == nil || op.ended {
		return
	}
	op.ended = true
	if op.panicked != nil {
		panic(op.panicked)
	}
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

// Multi returns an Observer (a Starter) that passes every event to each
// non-nil of obs in order, each Starter opening inside the previous one.
func Multi(obs ...Observer) Observer {
	return multi(slices.DeleteFunc(slices.Clone(obs), func(o Observer) bool { return o == nil }))
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

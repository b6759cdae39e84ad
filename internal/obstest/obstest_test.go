package obstest

import (
	"context"
	"testing"

	"github.com/counterkit/counterkit/observe"
)

// The Tracker finds each problem it is for: an operation never ended, one
// ended twice, a store call outside a driver operation, and an event that
// bypassed Start; and none in a well-formed run.
func TestTrackerFindsProblems(t *testing.T) {
	ctx := context.Background()
	var good Tracker
	octx, op := observe.Start(ctx, &good, "ledger", "update")
	_, call := observe.Start(octx, &good, "store.siblings", "fetch")
	call.End(observe.Event{})
	op.End(observe.Event{Outcome: observe.Applied})
	if p := good.Problems(); len(p) != 0 {
		t.Fatalf("a well-formed run: %v", p)
	}
	if e := good.Events("ledger"); len(e) != 1 || e[0].Outcome != observe.Applied || good.Started("store.siblings") != 1 {
		t.Fatalf("events %v", e)
	}

	var bad Tracker
	_, leaked := observe.Start(ctx, &bad, "ledger", "update")
	_ = leaked
	_, twice := bad.Start(ctx, observe.Event{Component: "tally", Op: "flush"})
	twice(observe.Event{})
	twice(observe.Event{})
	_, alone := observe.Start(ctx, &bad, "store.partitions", "apply")
	alone.End(observe.Event{})
	bad.Observe(ctx, observe.Event{Component: "deltalog", Op: "add"})
	if p := bad.Problems(); len(p) != 4 {
		t.Fatalf("want 4 problems (never ended, ended twice, not nested, bypassed Start), got %d: %v", len(p), p)
	}
	if Catch(func() { panic("x") }) != "x" || Catch(func() {}) != nil {
		t.Fatal("Catch")
	}
}

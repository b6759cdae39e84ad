// Package obstest records the operations drivers begin through an
// observe.Starter, as the OpenTelemetry bridge does, so that a test can
// check that every operation ends exactly once, with the event it should,
// and that every store call nests in a driver operation. Tests only.
package obstest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store/faulty"
)

// A Tracker is an observe.Starter that records every operation begun
// (Start), how often it was ended, and the operation it was begun inside
// (read from the context). It is safe for concurrent use; its zero value
// is ready.
type Tracker struct {
	mu       sync.Mutex
	ops      []*op
	observed []observe.Event // events that reached Observe (never begun)
}

type op struct {
	id, parent int
	component  string
	op         string
	ends       int
	event      observe.Event // the event of the (first) end
}

type key struct{}

// Observe records an event that did not come through Start.
func (t *Tracker) Observe(_ context.Context, e observe.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.observed = append(t.observed, e)
}

// Start begins an operation inside the one ctx carries, if any.
func (t *Tracker) Start(ctx context.Context, e observe.Event) (context.Context, func(observe.Event)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	parent, _ := ctx.Value(key{}).(int)
	o := &op{id: len(t.ops) + 1, parent: parent, component: e.Component, op: e.Op}
	t.ops = append(t.ops, o)
	return context.WithValue(ctx, key{}, o.id), func(e observe.Event) {
		t.mu.Lock()
		defer t.mu.Unlock()
		if o.ends == 0 {
			o.event = e
		}
		o.ends++
	}
}

// Problems lists the operations never ended or ended twice, events that
// bypassed Start, and store calls begun outside any driver operation.
func (t *Tracker) Problems() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, o := range t.ops {
		if o.ends != 1 {
			out = append(out, fmt.Sprintf("%s %s (#%d) ended %d times", o.component, o.op, o.id, o.ends))
		}
		if o.component == "store.siblings" || o.component == "store.partitions" {
			if o.parent == 0 {
				out = append(out, fmt.Sprintf("%s %s (#%d) is not nested in a driver operation", o.component, o.op, o.id))
			}
		}
	}
	for _, e := range t.observed {
		out = append(out, fmt.Sprintf("%s %s reached Observe, not Start", e.Component, e.Op))
	}
	return out
}

// Events returns the ended events of component's operations, in the order
// they began.
func (t *Tracker) Events(component string) []observe.Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []observe.Event
	for _, o := range t.ops {
		if o.component == component && o.ends > 0 {
			out = append(out, o.event)
		}
	}
	return out
}

// Started counts the operations of component begun.
func (t *Tracker) Started(component string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, o := range t.ops {
		if o.component == component {
			n++
		}
	}
	return n
}

// Reset forgets every operation.
func (t *Tracker) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ops, t.observed = nil, nil
}

// Catch runs f and returns what it panicked with (nil if it returned).
func Catch(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

var _ observe.Starter = (*Tracker)(nil)

// CheckDelete checks that del reports one component "delete" event per
// call, its store call nested in it: OK for key, Invalid for the empty
// key, and Unavailable with one refused call when fs, the store under the
// driver, refuses its Apply. It leaves fs without a policy.
func CheckDelete(t testing.TB, tr *Tracker, fs *faulty.Partitions, component, key string, del func(context.Context, string) error) {
	t.Helper()
	for _, tc := range []struct {
		name, key, outcome string
		refused            int
	}{
		{"delete", key, observe.OK, 0},
		{"bad key", "", observe.Invalid, 0},
		{"refused", key, observe.Unavailable, 1},
	} {
		tr.Reset()
		fs.SetPolicy(nil)
		if tc.refused > 0 {
			fs.SetPolicy(faulty.Only(faulty.Script(faulty.Refuse), faulty.MethodApply))
		}
		err := del(context.Background(), tc.key)
		fs.SetPolicy(nil)
		evs := tr.Events(component)
		if len(evs) != 1 {
			t.Fatalf("%s: %d %s events, want 1", tc.name, len(evs), component)
		}
		e := evs[0]
		if e.Op != "delete" || e.Outcome != tc.outcome || e.Err != err || e.Attempts != 1 || e.Refused != tc.refused {
			t.Fatalf("%s: event %s %s (err %v, %d attempts, %d refused); want delete %s (err %v, 1 attempt, %d refused)",
				tc.name, e.Op, e.Outcome, e.Err, e.Attempts, e.Refused, tc.outcome, err, tc.refused)
		}
		if p := tr.Problems(); len(p) > 0 {
			t.Fatalf("%s: %v", tc.name, p)
		}
	}
}

package observe_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store/faulty"
)

// A Func turns a plain function into an Observer, for example to feed a
// metrics library. Here it totals the retries and ambiguous writes a
// ledger absorbed when a store lost an acknowledgement.
func ExampleFunc() {
	ctx := context.Background()
	var retries, ambiguous, duplicates int
	obs := observe.Func(func(_ context.Context, e observe.Event) {
		retries += e.Attempts - 1
		ambiguous += e.Ambiguous
		if observe.IsDuplicate(e.Outcome) {
			duplicates++
		}
	})
	st := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
	st.SetPolicy(faulty.Only(faulty.Script(faulty.LoseAck), faulty.MethodPut))
	l, _ := ledger.New(st, "wallet", ledger.Options{Actor: "api-1", Observer: obs})
	_, _ = l.Credit(ctx, "deposit-1", 100)
	_, _ = l.Credit(ctx, "deposit-1", 100) // the client's retry
	fmt.Println("retries:", retries, "ambiguous:", ambiguous, "duplicates:", duplicates)
	// Output:
	// retries: 1 ambiguous: 1 duplicates: 1
}

// compact is an operation of a driver outside this module, reported like
// the built-in ones: Start, then End with what it did.
func compact(ctx context.Context, o observe.Observer, rows int, err error) {
	ctx, op := observe.Start(ctx, o, "archive", "compact")
	_ = ctx // the store calls of the operation run in ctx
	e := observe.Event{Err: err}
	if op.Observed() { // gather what only the event needs
		e.Folded = rows
	}
	op.End(e)
	op.End(observe.Event{}) // only the first End reports
}

// An Operation is one operation in progress: End fills in its component,
// name, duration and, from the error, its outcome.
func ExampleOperation() {
	ctx := context.Background()
	obs := observe.Func(func(_ context.Context, e observe.Event) {
		fmt.Println(e.Component, e.Op, e.Outcome, "folded:", e.Folded, "failed:", e.Failed())
	})
	compact(ctx, obs, 12, nil)
	compact(ctx, obs, 0, fmt.Errorf("archive: %w", crdt.ErrUnavailable))
	compact(ctx, obs, 0, fmt.Errorf("archive: %w", crdt.ErrInvalidKey))
	compact(ctx, nil, 5, nil) // no Observer: nothing is reported
	// Output:
	// archive compact ok folded: 12 failed: false
	// archive compact unavailable folded: 0 failed: true
	// archive compact invalid folded: 0 failed: false
}

type depthKey struct{}

// tracer is a Starter that prints operations as a tree, as a tracing
// bridge nests spans: each begins inside the operation of its context.
type tracer struct{}

func (tracer) Observe(context.Context, observe.Event) {}

func (tracer) Start(ctx context.Context, e observe.Event) (context.Context, func(observe.Event)) {
	depth, _ := ctx.Value(depthKey{}).(int)
	indent := strings.Repeat("  ", depth)
	fmt.Printf("%s%s %s\n", indent, e.Component, e.Op)
	return context.WithValue(ctx, depthKey{}, depth+1), func(e observe.Event) {
		fmt.Printf("%s-> %s\n", indent, e.Outcome)
	}
}

// A Starter is told when an operation begins, so that the store calls a
// ledger credit makes (reported by the observe.Siblings wrapper) appear
// inside it: the fetch of the account, the fetch of the transaction's
// record, the put of the state, and the record's fetch again and put.
func ExampleStarter() {
	ctx := context.Background()
	var t observe.Starter = tracer{}
	st := observe.Siblings(memory.NewSiblings(), t)
	l, _ := ledger.New(st, "wallet", ledger.Options{Actor: "api-1", Observer: t})
	if _, err := l.Credit(ctx, "deposit-1", 100); err != nil {
		fmt.Println(err)
	}
	// Output:
	// ledger update
	//   store.siblings fetch
	//   -> ok
	//   store.siblings fetch
	//   -> ok
	//   store.siblings put
	//   -> ok
	//   store.siblings fetch
	//   -> ok
	//   store.siblings put
	//   -> ok
	// -> applied
}

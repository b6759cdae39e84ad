package observe_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
)

// A ledger with an Observer reports one event per operation; here a
// function prints the outcome of a credit and of its retry.
func ExampleObserver() {
	ctx := context.Background()
	obs := observe.Func(func(_ context.Context, e observe.Event) {
		fmt.Println(e.Component, e.Op, e.Outcome, "attempts:", e.Attempts)
	})
	l, _ := ledger.New(memory.NewSiblings(), "wallet", ledger.Options{Actor: "api-1", Observer: obs})
	_, _ = l.Credit(ctx, "deposit-1", 100)
	_, _ = l.Credit(ctx, "deposit-1", 100) // the client's retry
	// Output:
	// ledger update applied attempts: 1
	// ledger update duplicate attempts: 1
}

// Logger writes events to a log/slog logger: failures at Warn, the rest at
// Debug. Store wrappers report every call of any backend.
func ExampleLogger() {
	ctx := context.Background()
	h := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "duration" {
				return slog.Attr{} // keep the output stable
			}
			return a
		}})
	siblings := observe.Siblings(memory.NewSiblings(), observe.Logger(slog.New(h)))
	_ = siblings.Put(ctx, "k", "a", []byte("v"), nil)
	_, _, _ = siblings.Fetch(ctx, "") // bad input: Debug
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, _, _ = siblings.Fetch(canceled, "k") // the caller gave up: Debug
	late, cancel := context.WithDeadline(ctx, time.Unix(0, 0))
	defer cancel()
	_, _, _ = siblings.Fetch(late, "k") // a failure: Warn
	// Output:
	// level=DEBUG msg="counterkit store.siblings put" component=store.siblings op=put outcome=ok bytes=1 rows=1
	// level=DEBUG msg="counterkit store.siblings fetch" component=store.siblings op=fetch outcome=invalid error="counterkit: invalid identifier: invalid key: key \"\" is empty"
	// level=DEBUG msg="counterkit store.siblings fetch" component=store.siblings op=fetch outcome=canceled error="context canceled"
	// level=WARN msg="counterkit store.siblings fetch" component=store.siblings op=fetch outcome=timeout error="context deadline exceeded"
}

// Counts lists an event's counts that are not zero, as Logger and the
// OpenTelemetry bridge name them.
func ExampleEvent_Counts() {
	e := observe.Event{Component: "ledger", Op: "update", Attempts: 2, Ambiguous: 1, Actors: 3}
	e.Counts(func(name string, n int) { fmt.Println(name, n) })
	// Output:
	// attempts 2
	// ambiguous 1
	// actors 3
}

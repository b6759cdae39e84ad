package ckotel_test

import (
	"context"
	"fmt"
	"slices"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/observe/ckotel"
	"github.com/counterkit/counterkit/store"
)

// inHouse is a backend the observe wrappers do not know, so its calls
// carry no db.system.name of their own.
type inHouse struct{ store.Siblings }

// Options name where store calls go: DBSystem for a backend the wrapper
// cannot tell, DBNamespace and DBCollection for its keyspace and table.
// A nil MeterProvider uses the global one, which does nothing until set.
func ExampleOptions() {
	ctx := context.Background()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))

	obs, err := ckotel.New(ckotel.Options{
		TracerProvider: tp,
		DBSystem:       "inhouse-kv",
		DBNamespace:    "billing",
		DBCollection:   "balances",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	own := observe.Siblings(inHouse{memory.NewSiblings()}, obs)
	_ = own.Put(ctx, "acct/1", "api-1", []byte("v"), nil)
	known := observe.Siblings(memory.NewSiblings(), obs) // names itself
	_, _, _ = known.Fetch(ctx, "acct/1")

	for _, s := range spans.Ended() {
		var attrs []string
		for _, a := range s.Attributes() {
			if strings.HasPrefix(string(a.Key), "db.") {
				attrs = append(attrs, fmt.Sprintf("%s=%s", a.Key, a.Value.Emit()))
			}
		}
		slices.Sort(attrs)
		fmt.Printf("span %q %v %v\n", s.Name(), s.SpanKind(), attrs)
	}
	// Output:
	// span "put balances" client [db.collection.name=balances db.namespace=billing db.operation.name=put db.system.name=inhouse-kv]
	// span "fetch balances" client [db.collection.name=balances db.namespace=billing db.operation.name=fetch db.system.name=memory]
}

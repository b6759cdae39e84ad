package statestore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/statestore"
)

// A Store holds encoded states; the helpers decode and merge whatever it
// returns. Replicas that save their own states under one key converge on
// Load, and a Store refuses bytes that are not a counter encoding.
func ExampleStore() {
	ctx := context.Background()
	var store statestore.Store = memory.NewStates()
	for _, r := range []struct {
		actor crdt.ActorID
		n     int64
	}{{"eu-1", 3}, {"us-1", 5}} {
		var c gcounter.Counter
		_ = c.Increment(r.actor, r.n)
		if err := statestore.Save(ctx, store, "signups", r.actor, &c); err != nil {
			panic(err)
		}
	}
	encodings, _ := store.Load(ctx, "signups")
	total, _ := statestore.Load[gcounter.Counter](ctx, store, "signups")
	fmt.Println(len(encodings), total.Value())

	err := store.Save(ctx, "signups", "eu-1", []byte("not a counter"))
	fmt.Println(errors.Is(err, crdt.ErrCorruptEncoding))
	// Output:
	// 1 8
	// true
}

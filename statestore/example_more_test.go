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

// Replicas that save their own states under one key leave siblings, which
// Load merges; the next Update collapses them into one. A sibling that is
// not a counter encoding is reported, never merged.
func ExampleLoad() {
	ctx := context.Background()
	siblings := memory.NewSiblings()
	for _, r := range []struct {
		actor crdt.ActorID
		n     int64
	}{{"eu-1", 3}, {"us-1", 5}} {
		var c gcounter.Counter
		_ = c.Increment(r.actor, r.n)
		if err := statestore.Save(ctx, siblings, "signups", r.actor, &c); err != nil {
			panic(err)
		}
	}
	total, _ := statestore.Load[gcounter.Counter](ctx, siblings, "signups")
	fmt.Println(siblings.Count("signups"), total.Value())

	_, _ = statestore.Update(ctx, siblings, "signups", "eu-1", func(c *gcounter.Counter) error {
		return c.Increment("eu-1", 1)
	})
	total, _ = statestore.Load[gcounter.Counter](ctx, siblings, "signups")
	fmt.Println(siblings.Count("signups"), total.Value())

	_ = siblings.Put(ctx, "signups", "intruder", []byte("not a counter"), nil)
	_, err := statestore.Load[gcounter.Counter](ctx, siblings, "signups")
	fmt.Println(errors.Is(err, crdt.ErrCorruptEncoding))
	// Output:
	// 2 8
	// 1 9
	// true
}

package statestore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/statestore"
	"github.com/counterkit/counterkit/store"
)

// copyCounter copies the counter stored under from to the key to, for any
// counter type: V is the counter type, T its pointer type.
func copyCounter[V any, T interface {
	*V
	statestore.Counter[T]
}](ctx context.Context, s store.Siblings, from, to string, actor crdt.ActorID) (T, error) {
	c, err := statestore.Load[V, T](ctx, s, from)
	if err != nil {
		return nil, err
	}
	return c, statestore.Save(ctx, s, to, actor, c)
}

// Code written once for every state-based counter takes the Counter
// constraint: Load, Save and Update need a mergeable state with an encoding.
func ExampleCounter() {
	ctx := context.Background()
	s := memory.NewSiblings()
	_, _ = statestore.Update(ctx, s, "views", "web-1", func(c *gcounter.Counter) error {
		return c.Increment("web-1", 7)
	})
	_, _ = statestore.Update(ctx, s, "stock", "till-1", func(c *pncounter.Counter) error {
		return c.Apply("till-1", -3)
	})

	views, err := copyCounter[gcounter.Counter](ctx, s, "views", "views-backup", "backup")
	fmt.Println(views.Value(), err)
	stock, err := copyCounter[pncounter.Counter](ctx, s, "stock", "stock-backup", "backup")
	fmt.Println(stock.Value(), err)
	again, _ := statestore.Load[pncounter.Counter](ctx, s, "stock-backup")
	fmt.Println(again.Equal(stock))

	// The type parameter names the encoding expected: a G-Counter is not
	// read as a PN-Counter, and nothing is copied.
	_, err = copyCounter[pncounter.Counter](ctx, s, "views", "wrong", "backup")
	fmt.Println(errors.Is(err, crdt.ErrTypeMismatch), s.Count("wrong"))
	// Output:
	// 7 <nil>
	// -3 <nil>
	// true
	// true 0
}

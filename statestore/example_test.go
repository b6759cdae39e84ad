package statestore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/statestore"
)

// Update is one load and one save. On an ambiguous write, re-send the
// returned state with Save: merging it again is harmless, whereas calling
// Update again would apply the debit twice.
func ExampleUpdate() {
	ctx := context.Background()
	store := memory.NewSiblings()

	debit := func(actor crdt.ActorID, amount int64) error {
		c, err := statestore.Update(ctx, store, "account:42", actor, func(c *pncounter.Counter) error {
			return c.Decrement(actor, amount)
		})
		for tries := 0; errors.Is(err, crdt.ErrAmbiguousWrite) && tries < 3; tries++ {
			err = statestore.Save(ctx, store, "account:42", actor, c)
		}
		return err
	}
	_, _ = statestore.Update(ctx, store, "account:42", "teller-1", func(c *pncounter.Counter) error {
		return c.Increment("teller-1", 100)
	})
	if err := debit("teller-2", 30); err != nil {
		fmt.Println(err)
	}
	balance, _ := statestore.Load[pncounter.Counter](ctx, store, "account:42")
	fmt.Println(balance.Value())
	// Output: 70
}

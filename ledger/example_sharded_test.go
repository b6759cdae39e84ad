package ledger_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// A hot account spread over 8 sub-keys. A transaction always goes to the
// same sub-key, so a retry by another actor is recognised there; Value sums
// the sub-keys; and the number of shards cannot change under the account.
func ExampleSharded() {
	ctx := context.Background()
	st := memory.NewSiblings()
	a, _ := ledger.NewSharded(st, "merchant-7", 8, ledger.Options{Actor: "app-1"})
	b, _ := ledger.NewSharded(st, "merchant-7", 8, ledger.Options{Actor: "app-2"})

	for i := 1; i <= 5; i++ {
		a.Credit(ctx, crdt.TxnID(fmt.Sprintf("order-%d", i)), 100)
	}
	r, _ := b.Credit(ctx, "order-3", 100) // a retry, on another actor
	fmt.Println(r.Outcome, "on", b.Key(b.Shard("order-3")))
	v, _ := b.Value(ctx)
	fmt.Println("value:", v)

	c, _ := ledger.NewSharded(st, "merchant-7", 16, ledger.Options{Actor: "app-3"})
	_, err := c.Credit(ctx, "order-6", 100)
	fmt.Println(errors.Is(err, crdt.ErrInvalidConfig))
	// Output:
	// duplicate on merchant-7/7
	// value: 500
	// true
}

// ShardedAccount tells a Sharded account's sub-key from other keys, and
// names the account, under which the account's records are kept.
func ExampleShardedAccount() {
	for _, key := range []string{"shop-1/7", "shop-1/1023", "shop-1/1024", "shop-1/07", "eu/shop-1/0", "shop-1"} {
		account, ok := ledger.ShardedAccount(key)
		fmt.Printf("%-12s %-5t %q\n", key, ok, account)
	}
	// Output:
	// shop-1/7     true  "shop-1"
	// shop-1/1023  true  "shop-1"
	// shop-1/1024  false ""
	// shop-1/07    false ""
	// eu/shop-1/0  true  "eu/shop-1"
	// shop-1       false ""
}

package balance_test

import (
	"context"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
)

// Transactions credits an account by idempotency key: a retry before the
// account's merge rewrites the same row, one after it is answered
// duplicate, hours later too, and the balance counts the payment once.
func ExampleTransactions() {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	tx, err := balance.NewTransactions(memory.NewPartitions(), balance.TxnOptions{
		Options: balance.Options{Clock: func() time.Time { return now }},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, at := range []time.Duration{0, time.Second, 2 * time.Second, 6 * time.Hour} {
		now = now.Add(at)
		outcome, err := tx.Apply(ctx, "seller-42", "pay-0", 2500)
		if err != nil {
			fmt.Println(err)
			return
		}
		if _, err := tx.Merge(ctx, "seller-42"); err != nil {
			fmt.Println(err)
			return
		}
		b, _ := tx.Balance(ctx, "seller-42")
		fmt.Println(outcome, b)
	}
	// Output:
	// applied 2500
	// duplicate 2500
	// duplicate 2500
	// duplicate 2500
}

package balance_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
)

// An Outcome tells a caller whether Apply wrote the transaction's row: a
// retry before a merge recorded the transaction is Applied again (the row
// still counts once), one after it is Duplicate and writes nothing.
func ExampleOutcome() {
	ctx := context.Background()
	tx, err := balance.NewTransactions(memory.NewPartitions(), balance.TxnOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	first, _ := tx.Apply(ctx, "seller-42", "pay-0", 2500)
	retry, _ := tx.Apply(ctx, "seller-42", "pay-0", 2500)
	if _, err := tx.Merge(ctx, "seller-42"); err != nil {
		fmt.Println(err)
		return
	}
	late, _ := tx.Apply(ctx, "seller-42", "pay-0", 2500)
	b, _ := tx.Balance(ctx, "seller-42")
	fmt.Println(first, retry, late, late == balance.Duplicate, b)
	// Output: applied applied duplicate true 2500
}

// The zero TxnOptions select the defaults; NewTransactions refuses a
// layout out of range, and with TxnTime, Apply refuses a transaction
// older than RetryWindow, whose record may have expired.
func ExampleTxnOptions() {
	ctx := context.Background()
	tx, _ := balance.NewTransactions(memory.NewPartitions(), balance.TxnOptions{})
	o := tx.Options()
	fmt.Println(o.RetryWindow, o.Deadline, o.Partitions, o.RecordShards, o.BacklogRows == balance.MaxBacklogRows)

	_, err := balance.NewTransactions(memory.NewPartitions(), balance.TxnOptions{Partitions: 65})
	fmt.Println(errors.Is(err, crdt.ErrInvalidConfig))

	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	sent := map[crdt.TxnID]time.Time{"pay-new": now.Add(-time.Hour), "pay-old": now.Add(-48 * time.Hour)}
	timed, _ := balance.NewTransactions(memory.NewPartitions(), balance.TxnOptions{
		Options: balance.Options{Clock: func() time.Time { return now }},
		TxnTime: func(txn crdt.TxnID) (time.Time, bool) { at, ok := sent[txn]; return at, ok },
	})
	outcome, err := timed.Apply(ctx, "seller-42", "pay-new", 100)
	fmt.Println(outcome, err)
	_, err = timed.Apply(ctx, "seller-42", "pay-old", 100)
	fmt.Println(errors.Is(err, crdt.ErrOutsideWindow))
	// Output:
	// 24h0m0s 5s 16 16 true
	// true
	// applied <nil>
	// true
}

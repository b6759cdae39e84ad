package balance_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
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

// The safe path when a quarter of the writers' write acknowledgements are
// lost and a tenth of their writes refused: eight writers take payments, a
// caller retries every failed one on the next writer until it is
// acknowledged, and a merge (here on a sound connection) runs between
// rounds. Each payment counts once, whatever landed twice.
func ExampleTransactions_retries() {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	mem := memory.NewPartitions()
	st := faulty.NewPartitions(mem, faulty.Options{
		Policy: faulty.Only(faulty.Seeded(1, faulty.Rates{LoseAck: 0.25, Refuse: 0.1}), faulty.MethodApply),
	})
	opts := balance.TxnOptions{Options: balance.Options{Clock: func() time.Time { return now }}}
	var writers []*balance.Transactions
	for range 8 {
		tx, err := balance.NewTransactions(st, opts)
		if err != nil {
			fmt.Println(err)
			return
		}
		writers = append(writers, tx)
	}
	merger, err := balance.NewTransactions(mem, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	sent, want := 0, int64(0)
	for round := range 10 {
		for p := range 40 {
			txn := crdt.TxnID(fmt.Sprintf("pay-%d-%d", round, p))
			amount := int64(1 + p%7)
			want += amount
			for w := p; ; w++ { // retry on the next writer until acknowledged
				sent++
				_, err := writers[w%len(writers)].Apply(ctx, "seller-42", txn, amount)
				if err == nil {
					break
				}
				if w-p == 100 { // the store stays down: give up, with the last error
					fmt.Println(txn, err)
					return
				}
			}
		}
		now = now.Add(time.Minute)
		if _, err := merger.Merge(ctx, "seller-42"); err != nil {
			fmt.Println(err)
			return
		}
	}
	b, err := merger.Balance(ctx, "seller-42")
	fmt.Println(b == want, err, sent > 400)
	// Output:
	// true <nil> true
}

// Every Transactions of an account must use its layout (Partitions,
// RecordShards, RetryWindow): the account's first Apply records it, and a
// process configured otherwise is refused rather than read and write other
// partitions of the account.
func ExampleTransactions_layout() {
	ctx := context.Background()
	st := memory.NewPartitions()
	sixteen, _ := balance.NewTransactions(st, balance.TxnOptions{})
	thirtyTwo, _ := balance.NewTransactions(st, balance.TxnOptions{Partitions: 32})
	outcome, err := sixteen.Apply(ctx, "seller-42", "pay-0", 2500)
	fmt.Println(outcome, err)
	_, err = thirtyTwo.Apply(ctx, "seller-42", "pay-1", 100)
	fmt.Println(errors.Is(err, crdt.ErrInvalidConfig))
	_, err = thirtyTwo.Apply(ctx, "seller-7", "pay-1", 100)
	fmt.Println(err)
	// Output:
	// applied <nil>
	// true
	// <nil>
}

// AccountLayout reads the layout an account's first Apply recorded, so
// that a tool opens a Transactions that reads the account, whatever the
// options of the service that wrote it.
func ExampleAccountLayout() {
	ctx := context.Background()
	st := memory.NewPartitions()
	svc, _ := balance.NewTransactions(st, balance.TxnOptions{Partitions: 4, RetryWindow: time.Hour})
	if _, err := svc.Apply(ctx, "seller-42", "pay-0", 2500); err != nil {
		fmt.Println(err)
		return
	}
	layout, ok, err := balance.AccountLayout(ctx, st, "seller-42")
	fmt.Println(layout.Partitions, layout.RecordShards, layout.RetryWindow, ok, err)
	tool, _ := balance.NewTransactions(st, layout)
	b, err := tool.Balance(ctx, "seller-42")
	fmt.Println(b, err)
	_, ok, err = balance.AccountLayout(ctx, st, "seller-7")
	fmt.Println(ok, err)
	// Output:
	// 4 16 1h0m0s true <nil>
	// 2500 <nil>
	// false <nil>
}

// EvaluateTxnRows reads one stored row partition of Transactions as
// Transactions does: an inspection tool's view of a snapshot.
func ExampleEvaluateTxnRows() {
	ctx := context.Background()
	st := memory.NewPartitions()
	tx, _ := balance.NewTransactions(st, balance.TxnOptions{Partitions: 1})
	_, _ = tx.Apply(ctx, "seller-42", "pay-0", 2500)
	_, _ = tx.Apply(ctx, "seller-42", "pay-1", -300)
	rows, _ := st.Snapshot(ctx, tx.RowPartitions("seller-42")[0], balance.MaxRows, store.ReadComplete)
	v, err := balance.EvaluateTxnRows(tx.RowPartitions("seller-42")[0], rows)
	fmt.Println(len(rows), v.Value, err)
	// Output: 2 2200 <nil>
}

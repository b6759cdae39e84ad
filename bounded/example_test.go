package bounded_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
)

// Two replicas of a balance that must not go below zero. Each debits within
// its own rights with no coordination; a debit beyond them is refused with
// what the replica may debit now, until the other transfers rights.
func ExampleCounter() {
	a, _ := bounded.New(bounded.Options{})
	a.Apply("shop-a", "sale-1", 100) // a credit: rights for shop-a
	b := a.Clone()

	a.Apply("shop-a", "refund-1", -70) // within shop-a's 100
	_, err := b.Apply("shop-b", "refund-2", -50)
	var short *bounded.InsufficientRightsError
	fmt.Println(errors.Is(err, crdt.ErrInsufficientRights), errors.As(err, &short), short.Available)

	a.Transfer("shop-a", "shop-b", 30) // shop-a gives 30 of its 30 left
	b.Merge(a)
	out, err := b.Apply("shop-b", "refund-2", -30)
	fmt.Println(out, err, b.Value(), b.Rights("shop-a"), b.Rights("shop-b"))
	// Output:
	// true true 0
	// applied <nil> 0 0 0
}

// Two replicas that could not see each other credit more than int64
// holds together. The merge keeps the exact value; Value clamps; a credit
// further out is refused, a debit that moves the value back applies.
func ExampleCounter_BigValue() {
	a, _ := bounded.New(bounded.Options{})
	b := a.Clone()
	a.Apply("shop-a", "sale-1", 1<<62+10)
	b.Apply("shop-b", "sale-2", 1<<62+10)
	fmt.Println(a.Merge(b), a.BigValue(), a.Value())

	_, err := a.Apply("shop-a", "sale-3", 1)
	fmt.Println(errors.Is(err, crdt.ErrOverflow))
	out, err := a.Apply("shop-b", "refund-1", -21)
	fmt.Println(out, err, a.BigValue())
	// Output:
	// <nil> 9223372036854775828 9223372036854775807
	// true
	// applied <nil> 9223372036854775807
}

// Accounts over one store: a refused debit becomes a request, and the
// holder grants it on its next write.
func ExampleAccount() {
	ctx := context.Background()
	st := memory.NewSiblings()
	seller, _ := bounded.Open(st, "balance/seller-7", bounded.AccountOptions{Actor: "payments"})
	payouts, _ := bounded.Open(st, "balance/seller-7", bounded.AccountOptions{Actor: "payouts"})

	seller.Credit(ctx, "order-1", 80)
	_, err := payouts.Debit(ctx, "payout-1", 50)
	fmt.Println(err != nil, errors.Is(err, crdt.ErrInsufficientRights))

	res, _ := seller.Sync(ctx) // grants the outstanding request
	fmt.Println(res.Value(), res.Rights(payouts.Writer()))

	r, err := payouts.Debit(ctx, "payout-1", 50) // the same id, retried
	fmt.Println(r.Outcome, err, r.Value)
	// Output:
	// true true
	// 80 50
	// applied <nil> 30
}

// A retry is recognised by the transaction's record however many
// transactions came since: here the window of recent transactions is 2,
// and the payout is retried on another Account after 100 more credits.
func ExampleAccount_retryWindow() {
	ctx := context.Background()
	st := memory.NewSiblings()
	opts := bounded.AccountOptions{Actor: "api-1", Counter: bounded.Options{Window: 2}}
	a, _ := bounded.Open(st, "quota/team-9", opts)
	opts.Actor = "api-2"
	b, _ := bounded.Open(st, "quota/team-9", opts)

	a.Credit(ctx, "topup-1", 500)
	for i := range 100 {
		a.Credit(ctx, crdt.TxnID(fmt.Sprint("usage-", i)), 1)
	}
	r, err := b.Credit(ctx, "topup-1", 500) // the caller's retry, elsewhere
	fmt.Println(r.Outcome, err, r.Value)
	// Output:
	// duplicate <nil> 600
}

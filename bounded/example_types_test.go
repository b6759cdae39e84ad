package bounded_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
)

// Keep makes an account hold back part of its own rights when it grants
// other accounts' requests: here the seller keeps 30 of its 80, so a
// request for 70 is met only in part.
func ExampleAccountOptions() {
	ctx := context.Background()
	st := memory.NewSiblings()
	_, err := bounded.Open(st, "balance/seller-7", bounded.AccountOptions{
		Actor:   "payments",
		Counter: bounded.Options{Bound: -100, Origin: "bank"},
	})
	fmt.Println(errors.Is(err, crdt.ErrInvalidConfig)) // an Account's counter has Bound 0

	seller, _ := bounded.Open(st, "balance/seller-7", bounded.AccountOptions{
		Actor:      "payments",
		Keep:       30,
		RetryCount: 5,
	})
	payouts, _ := bounded.Open(st, "balance/seller-7", bounded.AccountOptions{Actor: "payouts"})

	seller.Credit(ctx, "order-1", 80)
	r, _ := payouts.Debit(ctx, "payout-1", 70)
	fmt.Println("requested:", r.Requested)

	c, _ := seller.Sync(ctx)
	fmt.Println("seller keeps:", c.Rights(seller.Writer()), "payouts may debit:", c.Rights(payouts.Writer()))
	// Output:
	// true
	// requested: 70
	// seller keeps: 30 payouts may debit: 50
}

// Requests lists who is asking for rights and how much is still
// outstanding; a Transfer from a holder of spare rights meets it.
func ExampleAsk() {
	c, _ := bounded.New(bounded.Options{})
	c.Apply("shop-a", "sale-1", 100)
	c.Request("shop-b", 40)
	c.Request("shop-c", 10)
	for _, ask := range c.Requests() {
		fmt.Println(ask.Actor, ask.Amount)
	}

	c.Transfer("shop-a", "shop-b", 25)
	c.Withdraw("shop-c")
	fmt.Printf("%+v\n", c.Requests())
	// Output:
	// shop-b 40
	// shop-c 10
	// [{Actor:shop-b Amount:15}]
}

// Backoff spaces an Account's retries. A negative Initial retries at once,
// as a test wants; here the first Put loses its acknowledgement and the
// second attempt finds the credit stored.
func ExampleBackoff() {
	ctx := context.Background()
	st := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
	st.SetPolicy(faulty.Only(faulty.Script(faulty.LoseAck), faulty.MethodPut))
	a, _ := bounded.Open(st, "balance/seller-7", bounded.AccountOptions{
		Actor:   "payments",
		Backoff: bounded.Backoff{Initial: -1},
	})
	r, err := a.Credit(ctx, "order-1", 80)
	fmt.Println(r.Outcome, r.Attempts, r.Landed, r.Value, err)
	// Output:
	// applied 2 true 80 <nil>
}

// Entry shows one actor's part of the state: its totals, the rights it
// gave, its recent transactions and what it may debit now.
func ExampleEntry() {
	c, _ := bounded.New(bounded.Options{})
	c.Apply("shop-a", "sale-1", 100)
	c.Apply("shop-a", "refund-1", -20)
	c.Transfer("shop-a", "shop-b", 30)

	e, ok := c.Entry("shop-a")
	fmt.Println(ok, e.Seq, e.Credits, e.Debits, e.Sent["shop-b"], e.Rights, e.Received)
	fmt.Println(e.Recent)
	// shop-b has written nothing, so it has no entry, but it holds rights.
	_, ok = c.Entry("shop-b")
	fmt.Println(ok, c.Rights("shop-b"), c.Received("shop-b"))
	// Output:
	// true 3 100 20 30 50 0
	// [{sale-1 100} {refund-1 -20}]
	// false 30 30
}

// A transaction applied by two actors that did not see each other is held
// twice, and each copy counts. Holders names them; Doubled lists such
// transactions for an operator to settle.
func ExampleHolder() {
	a, _ := bounded.New(bounded.Options{})
	b := a.Clone()
	a.Apply("shop-a", "order-9", 25)
	b.Apply("shop-b", "order-9", 25) // a retry on another replica
	a.Merge(b)

	for _, h := range a.Holders("order-9") {
		fmt.Println(h.Actor, h.Amount)
	}
	fmt.Println(a.Value(), a.Doubled())
	// Output:
	// shop-a 25
	// shop-b 25
	// 50 [order-9]
}

// A debit beyond an account's rights is refused with an
// *InsufficientRightsError; Available is what the account may debit now.
// Nothing is debited, and the shortfall is asked for (Result.Requested).
func ExampleInsufficientRightsError() {
	ctx := context.Background()
	a, _ := bounded.Open(memory.NewSiblings(), "balance/seller-7", bounded.AccountOptions{Actor: "payments"})
	a.Credit(ctx, "order-1", 80)

	r, err := a.Debit(ctx, "payout-1", 100)
	var short *bounded.InsufficientRightsError
	if !errors.As(err, &short) {
		fmt.Println("not refused:", err)
		return
	}
	fmt.Println("asked:", short.Amount, "available:", short.Available, "own writer:", short.Actor == a.Writer())
	fmt.Println(errors.Is(err, crdt.ErrInsufficientRights), r.Value)

	r, err = a.Debit(ctx, "payout-1", short.Available)
	fmt.Println(r.Outcome, r.Value, err)
	// Output:
	// asked: 100 available: 80 own writer: true
	// true 80
	// applied 0 <nil>
}

// A negative Bound allows an overdraft: the counter starts with −Bound
// rights, all held by Origin, which transfers them to the actors that
// may overdraw.
func ExampleOptions() {
	err := bounded.Options{Bound: -50}.Validate()
	fmt.Println(errors.Is(err, crdt.ErrInvalidConfig)) // Origin is required

	c, _ := bounded.New(bounded.Options{Bound: -50, Origin: "bank", Window: 8})
	fmt.Println(c.Bound(), c.Rights("bank"), c.Options().Window)
	c.Transfer("bank", "card-1", 50)
	c.Apply("card-1", "coffee", -4)
	c.Apply("card-1", "rent", -46)
	_, err = c.Apply("card-1", "lunch", -12)
	fmt.Println(c.Value(), errors.Is(err, crdt.ErrInsufficientRights))
	// Output:
	// true
	// -50 50 8
	// -50 true
}

// Apply reports whether it added a transaction or already held it; the
// same id with another amount is refused.
func ExampleOutcome() {
	c, _ := bounded.New(bounded.Options{})
	out, err := c.Apply("shop-a", "sale-1", 100)
	fmt.Println(out, err)
	out, err = c.Apply("shop-a", "sale-1", 100) // a retry
	fmt.Println(out, err, c.Value())
	_, err = c.Apply("shop-a", "sale-1", 90)
	fmt.Println(errors.Is(err, crdt.ErrConflictingTransaction), out == bounded.Duplicate)
	// Output:
	// applied <nil>
	// duplicate <nil> 100
	// true true
}

// Every Account operation returns a Result: the outcome of its
// transaction, the cycles it took, and the value and rights it saw.
func ExampleResult() {
	ctx := context.Background()
	st := memory.NewSiblings()
	seller, _ := bounded.Open(st, "balance/seller-7", bounded.AccountOptions{Actor: "payments"})
	payouts, _ := bounded.Open(st, "balance/seller-7", bounded.AccountOptions{Actor: "payouts"})

	r, _ := seller.Credit(ctx, "order-1", 80)
	fmt.Printf("%v attempts=%d landed=%v value=%d rights=%d\n", r.Outcome, r.Attempts, r.Landed, r.Value, r.Rights)
	r, _ = payouts.Credit(ctx, "order-1", 80) // a retry on another account
	fmt.Printf("%v value=%d\n", r.Outcome, r.Value)

	r, _ = payouts.Debit(ctx, "payout-1", 20)
	fmt.Printf("requested=%d\n", r.Requested)
	r, _ = seller.Credit(ctx, "order-2", 5) // grants the request on its write
	fmt.Printf("%v value=%d rights=%d granted=%d\n", r.Outcome, r.Value, r.Rights, r.Granted)
	// Output:
	// applied attempts=1 landed=true value=80 rights=80
	// duplicate value=80
	// requested=20
	// applied value=85 rights=65 granted=20
}

// Entry.Recent holds an actor's own most recent transactions, as many as
// the Window: a retry of one of them is recognised; older ones are still
// counted but no longer listed.
func ExampleTxn() {
	c, _ := bounded.New(bounded.Options{Window: 2})
	c.Apply("shop-a", "sale-1", 100)
	c.Apply("shop-a", "sale-2", 50)
	c.Apply("shop-a", "refund-1", -30)

	e, _ := c.Entry("shop-a")
	for _, t := range e.Recent {
		fmt.Println(t.ID, t.Amount)
	}
	fmt.Println(c.Value())
	// Output:
	// sale-2 50
	// refund-1 -30
	// 120
}

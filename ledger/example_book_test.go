package ledger_test

import (
	"context"
	"fmt"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/ledger"
)

// A service keeps every customer's balance in one Book, as one actor. The
// Book keeps two ledgers open here: the third account drops the least
// recently used one, bob's. A resend to bob is still recognised, and a new
// credit to bob continues the dropped ledger's incarnation of "billing"
// (its first read shows that incarnation's last write), so bob's state
// still holds one actor entry.
func ExampleBook() {
	ctx := context.Background()
	book, err := ledger.NewBook(memory.NewSiblings(), ledger.BookOptions{
		Options: ledger.Options{Actor: "billing"},
		MaxOpen: 2,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	book.Credit(ctx, "acct/alice", "order-1", 100)
	book.Credit(ctx, "acct/bob", "order-2", 40)
	book.Debit(ctx, "acct/alice", "refund-1", 30)
	book.Credit(ctx, "acct/carol", "order-3", 25) // drops bob's ledger

	r, _ := book.Credit(ctx, "acct/bob", "order-2", 40) // a resend
	fmt.Println("resend:", r.Outcome)
	r, _ = book.Credit(ctx, "acct/bob", "order-4", 10)
	fmt.Println("new credit:", r.Outcome, "owned by this write:", r.Owner.Actor == r.Writer)

	for _, acct := range []string{"acct/alice", "acct/bob", "acct/carol"} {
		v, _ := book.Value(ctx, acct)
		fmt.Println(acct, v)
	}
	c, _ := book.Find(ctx, "acct/bob")
	fmt.Println("actor entries in bob's state:", c.Stats().Actors)
	st := book.Stats()
	fmt.Printf("open %d, ledgers opened %d, dropped %d\n", st.Open, st.Opened, st.Evicted)
	// Output:
	// resend: duplicate
	// new credit: applied owned by this write: true
	// acct/alice 70
	// acct/bob 50
	// acct/carol 25
	// actor entries in bob's state: 1
	// open 2, ledgers opened 6, dropped 4
}

package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// BookOptions carry the Options of every key's Ledger and the Book's own
// bound, MaxOpen. Here one ledger stays open: each new key drops the idle one.
func ExampleBookOptions() {
	ctx := context.Background()
	_, err := ledger.NewBook(memory.NewSiblings(), ledger.BookOptions{
		Options: ledger.Options{Actor: "billing"},
		MaxOpen: -1,
	})
	fmt.Println(errors.Is(err, crdt.ErrInvalidConfig))
	_, err = ledger.NewBook(memory.NewSiblings(), ledger.BookOptions{})
	fmt.Println(errors.Is(err, crdt.ErrInvalidActor)) // Options.Actor is required

	book, err := ledger.NewBook(memory.NewSiblings(), ledger.BookOptions{
		Options: ledger.Options{Actor: "billing", RetryCount: 2},
		MaxOpen: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, key := range []string{"acct/a", "acct/b", "acct/c"} {
		if _, err := book.Credit(ctx, key, "welcome-bonus", 5); err != nil {
			fmt.Println(err)
		}
	}
	st := book.Stats()
	fmt.Println(book.Actor(), book.MaxOpen(), st.Open, st.Evicted)
	// Output:
	// true
	// true
	// billing 1 1 2
}

// A Book write returns the Ledger's Result and the incarnation of the
// Book's actor that wrote it. Writer is "billing~" followed by a random
// incarnation id, so only its prefix is printed here.
func ExampleBookResult() {
	ctx := context.Background()
	book, _ := ledger.NewBook(memory.NewSiblings(), ledger.BookOptions{
		Options: ledger.Options{Actor: "billing"},
	})
	r1, err := book.Credit(ctx, "acct/alice", "order-1", 100)
	fmt.Println(r1.Outcome, r1.Landed, r1.Value, err)
	fmt.Println(strings.HasPrefix(string(r1.Writer), "billing~"), r1.Owner.Actor == r1.Writer)

	r2, _ := book.Debit(ctx, "acct/alice", "refund-1", 30)
	r3, _ := book.Debit(ctx, "acct/alice", "refund-1", 30) // a resend
	fmt.Println(r2.Outcome, r3.Outcome, r3.Value, r2.Writer == r1.Writer)
	// Output:
	// applied true 100 <nil>
	// true true
	// applied duplicate 70 true
}

// Stats shows how many ledgers a Book holds and how many it created and
// dropped; a service exports these to size MaxOpen.
func ExampleBookStats() {
	ctx := context.Background()
	book, _ := ledger.NewBook(memory.NewSiblings(), ledger.BookOptions{
		Options: ledger.Options{Actor: "billing"},
		MaxOpen: 2,
	})
	for i, key := range []string{"acct/a", "acct/b", "acct/c", "acct/a"} {
		book.Credit(ctx, key, crdt.TxnID(fmt.Sprintf("order-%d", i)), 10)
	}
	st := book.Stats()
	fmt.Printf("open=%d in-use=%d pending=%d opened=%d evicted=%d\n",
		st.Open, st.InUse, st.Pending, st.Opened, st.Evicted)
	// Output:
	// open=2 in-use=0 pending=0 opened=4 evicted=2
}

// Every landed transaction has a Record stored under RecordKey; it is what
// recognises a late retry once the counter's history has moved on. Reading
// one back is a Fetch and an UnmarshalBinary.
func ExampleRecord() {
	ctx := context.Background()
	st := memory.NewSiblings()
	l, _ := ledger.New(st, "acct/alice", ledger.Options{Actor: "app-1"})
	if _, err := l.Debit(ctx, "refund-7", 25); err != nil {
		fmt.Println(err)
		return
	}

	values, _, err := st.Fetch(ctx, ledger.RecordKey("acct/alice", "refund-7"))
	if err != nil || len(values) != 1 {
		fmt.Println(len(values), err)
		return
	}
	var rec ledger.Record
	if err := rec.UnmarshalBinary(values[0]); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rec.Txn, rec.Amount, rec.Writer == l.Writer(), rec.At.IsZero(), rec.Version)

	err = rec.UnmarshalBinary(values[0][:len(values[0])-1])
	fmt.Println(errors.Is(err, crdt.ErrCorruptEncoding), rec.Txn) // unchanged on error
	// Output:
	// refund-7 -25 true false 1
	// true refund-7
}

package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
	"github.com/counterkit/counterkit/tpncounter"
)

// Six credits with a history of 3: the oldest fold into the actor's total
// (still counted, no longer listed), and Find writes the folded state back.
func ExampleLedger() {
	ctx := context.Background()
	store := memory.NewSiblings()
	opts := ledger.Options{Actor: "app-1", Counter: tpncounter.Options{HistoryLength: 3}}
	l, _ := ledger.New(store, "player_2", opts)
	for _, txn := range []string{"txn1", "txn2", "txn3", "txn4", "txn5", "txn6"} {
		l.Credit(ctx, crdt.TxnID(txn), 10)
	}
	v, _ := l.Value(ctx)
	has1, _ := l.HasTransaction(ctx, "txn1")
	has3, _ := l.HasTransaction(ctx, "txn3")
	fmt.Println(v, has1, has3)

	c, _ := l.Find(ctx)
	fmt.Println(c.Value(), c.HasTransaction("txn3"), c.HasTransaction("txn4"))
	// Output:
	// 60 false true
	// 60 false true
}

// A write whose acknowledgement is lost is retried; the retry finds the
// transaction already stored, so it counts once and the result says so.
func ExampleLedger_Credit_ambiguousWrite() {
	ctx := context.Background()
	store := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
	l, _ := ledger.New(store, "wallet-42", ledger.Options{Actor: "app-1"})
	store.SetPolicy(faulty.Only(faulty.Script(faulty.LoseAck), faulty.MethodPut))
	r, err := l.Credit(ctx, "deposit-1", 100)
	fmt.Println(r.Outcome, r.Attempts, r.Landed, r.Value, err)
	// The client, unsure, resends through another instance: a duplicate.
	other, _ := ledger.New(store, "wallet-42", ledger.Options{Actor: "app-2"})
	r, err = other.Credit(ctx, "deposit-1", 100)
	fmt.Println(r.Outcome, r.Value, err)
	// Output:
	// applied 2 true 100 <nil>
	// duplicate 100 <nil>
}

// Two ledgers writing at once create siblings; any read merges them, and
// Find writes the merge back.
func ExampleLedger_Find() {
	ctx := context.Background()
	inner := memory.NewSiblings()
	store := faulty.NewSiblings(inner, faulty.Options{RecordWrites: true})
	a, _ := ledger.New(store, "k", ledger.Options{Actor: "a"})
	b, _ := ledger.New(store, "k", ledger.Options{Actor: "b"})
	a.Credit(ctx, "t1", 5)
	// b reads k as it was before a's write: a concurrent writer.
	store.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.Stale), faulty.MethodFetch), func(key string) bool { return key == "k" }))
	b.Credit(ctx, "t2", 7)
	fmt.Println("siblings:", inner.Count("k"))
	c, _ := b.Find(ctx)
	fmt.Println("value:", c.Value(), "siblings:", inner.Count("k"))
	// Output:
	// siblings: 2
	// value: 12 siblings: 1
}

// Debit and Update take the other sign; a transaction id is a credit or a
// debit, never both.
func ExampleLedger_Update() {
	ctx := context.Background()
	l, _ := ledger.New(memory.NewSiblings(), "k", ledger.Options{Actor: "a"})
	l.Update(ctx, "sale", 250)
	r, _ := l.Debit(ctx, "refund", 40)
	_, err := l.Credit(ctx, "refund", 40)
	fmt.Println(r.Value, err != nil)
	// Output: 210 true
}

// New validates its options.
func ExampleNew() {
	_, err := ledger.New(memory.NewSiblings(), "k", ledger.Options{})
	fmt.Println(err)
	// Output: counterkit: invalid actor id: "" is empty
}

// Result reports the outcome of a write.
func ExampleResult() {
	l, _ := ledger.New(memory.NewSiblings(), "k", ledger.Options{Actor: "a"})
	r, _ := l.Credit(context.Background(), "t", 1)
	fmt.Println(r.Outcome, r.Attempts, r.Landed, r.Value)
	fmt.Println("counted copy written by this ledger:", r.Owner.Actor == l.Writer(), r.Owner.Amount)
	// Output:
	// applied 1 true 1
	// counted copy written by this ledger: true 1
}

// blindStore is a Store whose reads miss every stored sibling, as a stale
// replica's do; writes go through.
type blindStore struct{ store.Siblings }

func (blindStore) Fetch(context.Context, string) ([][]byte, store.Token, error) {
	return nil, nil, nil
}

// One transaction delivered to two ledgers that cannot see each other: both
// write it and both answer Applied, each Owner naming its own writer, but
// it counts once, and once the copies are merged Owner names the one that
// counts. Owner therefore does not pick one writer to send a receipt: run
// side effects from an outbox (ExampleResult_outbox). A client bug that reuses an id with another amount
// through a stale read is resolved the same way: one amount counts, the
// conflict is listed, and the losing write's retry is told it was
// Superseded.
func ExampleResult_owner() {
	ctx := context.Background()
	store := memory.NewSiblings()
	a, _ := ledger.New(store, "wallet-7", ledger.Options{Actor: "app-a"})
	b, _ := ledger.New(blindStore{store}, "wallet-7", ledger.Options{Actor: "app-b"})
	ra, _ := a.Credit(ctx, "order-1", 100)
	rb, _ := b.Credit(ctx, "order-1", 100)
	fmt.Println(ra.Outcome, rb.Outcome)

	a.Credit(ctx, "order-2", 50)
	b.Credit(ctx, "order-2", 60) // the same id, another amount, unseen
	c, _ := a.Find(ctx)
	o, _ := c.Owner("order-1")
	fmt.Println("order-1 counted once, written by a:", o.Actor == a.Writer())
	for _, k := range c.Conflicts() {
		fmt.Println("conflict", k.ID, "counts", k.Counted.Amount, "written by a:", k.Counted.Actor == a.Writer(), "copies:", len(k.Copies))
	}
	fmt.Println("value", c.Value())
	b2, _ := ledger.New(store, "wallet-7", ledger.Options{Actor: "app-b"})
	r, err := b2.Credit(ctx, "order-2", 60) // the losing write, retried
	fmt.Println(r.Outcome, "counted:", r.Owner.Amount, err)
	// Output:
	// applied applied
	// order-1 counted once, written by a: true
	// conflict order-2 counts 50 written by a: true copies: 2
	// value 150
	// superseded counted: 50 <nil>
}

// A retry is recognised for Options.RetryWindow (24 hours by default) after
// the transaction was first applied, however many transactions came in
// between. With Options.Counter.TxnTime every transaction carries the time
// it was created (here a version 1 UUID id), and a retry after the window
// is refused with crdt.ErrOutsideWindow instead of being counted again.
func ExampleLedger_Credit_timed() {
	ctx := context.Background()
	start := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	now := start
	opts := ledger.Options{Actor: "app-1", Counter: tpncounter.Options{TxnTime: tpncounter.TimeUUID},
		Clock: func() time.Time { return now }}
	l, _ := ledger.New(memory.NewSiblings(), "wallet", opts)
	txn := func(i int) crdt.TxnID {
		return crdt.TxnID(timeid.New(start.Add(time.Duration(i) * time.Millisecond)).String())
	}

	first := txn(0)
	l.Credit(ctx, first, 100)
	for i := 1; i <= 1000; i++ {
		l.Credit(ctx, txn(i), 1)
	}
	now = start.Add(23 * time.Hour)
	r, _ := l.Credit(ctx, first, 100) // a retry 23 hours and 1,000 credits later
	fmt.Println(r.Outcome, r.Value)

	now = start.Add(25 * time.Hour)
	_, err := l.Credit(ctx, first, 100) // a retry after the window
	fmt.Println(errors.Is(err, crdt.ErrOutsideWindow))

	_, err = l.Credit(ctx, crdt.TxnID("not-a-time-uuid"), 1)
	fmt.Println(errors.Is(err, crdt.ErrInvalidTxnID))
	// Output:
	// duplicate 1100
	// true
	// true
}

// A side effect runs once from an outbox keyed by the transaction id, not
// from Result: here one transaction is delivered to two ledgers that do not
// see each other, both answer Applied, and the value counts it once. Each
// delivery upserts the receipt under the transaction id, leaving the
// entry's done flag alone (a table keyed by id whose upsert sets only the
// receipt column); the one consumer sends each entry not done and marks it
// done. It runs between the two deliveries here, and the second upsert does
// not make it send again: an outbox that deleted sent entries would.
//
// A delivery upserts the receipt only when its amount is the one that
// counts as it saw the transaction: Applied, Duplicate or DuplicateFolded.
// Superseded means another copy of the id, with another amount or sign,
// counts (Result.Owner): that copy's delivery writes the receipt. An id
// delivered with two amounts at once (a caller's bug) can be answered
// Applied with each; the first upsert's receipt is the one sent, and may
// name the amount that does not count.
//
// Keep done entries for as long as a retry can arrive, not only as long
// as the transaction's records: a retry the counter still holds is a
// Duplicate after its records have expired, and its upsert would bring an
// expired entry back, to be sent again.
func ExampleResult_outbox() {
	ctx := context.Background()
	st := memory.NewSiblings()
	a, _ := ledger.New(st, "wallet-7", ledger.Options{Actor: "app-a"})
	b, _ := ledger.New(blindStore{st}, "wallet-7", ledger.Options{Actor: "app-b"})
	type entry struct {
		receipt string
		done    bool
	}
	outbox := map[crdt.TxnID]*entry{}
	consume := func() {
		for _, e := range outbox {
			if !e.done {
				fmt.Println("sent:", e.receipt)
				e.done = true
			}
		}
	}
	for _, l := range []*ledger.Ledger{a, b} {
		r, err := l.Credit(ctx, "order-1", 100)
		fmt.Println(r.Outcome, err)
		if err == nil && r.Outcome != tpncounter.Superseded {
			if outbox["order-1"] == nil {
				outbox["order-1"] = &entry{}
			}
			outbox["order-1"].receipt = fmt.Sprintf("receipt: order-1, %d", r.Owner.Amount)
		}
		consume()
	}
	v, _ := a.Value(ctx)
	fmt.Println("value", v)
	// Output:
	// applied <nil>
	// sent: receipt: order-1, 100
	// applied <nil>
	// value 100
}

package tpncounter_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tpncounter"
)

// A Txn is one transaction an actor remembers: its id and magnitude. A
// debit is kept as a positive amount in the counter's negative half, and
// folding (Apply or Compact beyond HistoryLength) moves a Txn from an
// actor's History to its Folded record.
func ExampleTxn() {
	c, _ := tpncounter.New(tpncounter.Options{HistoryLength: 1})
	_, _ = c.Apply("till-1", "sale-1", 250)
	_, _ = c.Apply("till-1", "refund-1", -40)
	_, _ = c.Apply("till-1", "sale-2", 100)
	_, _ = c.Compact("till-1") // back to HistoryLength: folds sale-1
	p, _ := c.Positive().Entry("till-1")
	n, _ := c.Negative().Entry("till-1")
	fmt.Printf("P history %+v folded %+v total %d\n", p.History, p.Folded, p.Total)
	fmt.Printf("N history %+v\n", n.History)
	fmt.Println(c.Value())
	// Output:
	// P history [{ID:sale-2 Amount:100}] folded [{ID:sale-1 Amount:250}] total 250
	// N history [{ID:refund-1 Amount:40}]
	// 310
}

// TimeUUID reads the creation time of a version 1 UUID transaction id.
func ExampleTimeUUID() {
	at, ok := tpncounter.TimeUUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	fmt.Println(at, ok)
	_, ok = tpncounter.TimeUUID("order-42")
	fmt.Println(ok)
	// Output:
	// 1998-02-04 22:13:53.1511824 +0000 UTC true
	// false
}

// With Options.TxnTime, a transaction retried after every actor has
// forgotten it is refused instead of counted again. Here ids carry their
// time after an "@" (seconds since the epoch).
func ExampleCounter_Horizon() {
	atSeconds := func(x crdt.TxnID) (time.Time, bool) {
		_, s, ok := strings.Cut(string(x), "@")
		n, err := strconv.Atoi(s)
		return time.Unix(int64(n), 0).UTC(), ok && err == nil && n > 0
	}
	c, _ := tpncounter.New(tpncounter.Options{HistoryLength: 1, FoldedLength: 1, TxnTime: atSeconds})
	c.Apply("till-1", "sale@100", 50)
	c.Apply("till-1", "sale@101", 20)
	c.Apply("till-1", "sale@102", 30)
	c.Compact("till-1") // sale@100 leaves the folded record: forgotten
	fmt.Println(c.Horizon().Unix(), c.Value())

	_, err := c.Apply("till-2", "sale@100", 50) // a very late retry
	fmt.Println(errors.Is(err, crdt.ErrOutsideWindow), c.Value())
	out, _ := c.Apply("till-2", "sale@103", 5)
	fmt.Println(out, c.Value())
	// Output:
	// 100 100
	// true 100
	// applied 105
}

// Two actors that could not see each other used one id with different
// amounts. Merge keeps both copies and counts one, the owner's (the
// smaller actor id while neither has folded it); Conflicts lists them, and
// a retry of the losing amount is Superseded.
func ExampleConflict() {
	a, _ := tpncounter.New(tpncounter.Options{})
	b, _ := tpncounter.New(tpncounter.Options{})
	a.Apply("app-a", "order-1", 50)
	b.Apply("app-b", "order-1", 60)
	a.Merge(b)
	for _, k := range a.Conflicts() {
		fmt.Println(k.ID, "counts", k.Counted.Amount, "from", k.Counted.Actor)
		for _, cp := range k.Copies {
			fmt.Printf("  copy %+v\n", cp)
		}
	}
	out, _ := a.Apply("app-c", "order-1", 60)
	fmt.Println(a.Value(), out)
	// Output:
	// order-1 counts 50 from app-a
	//   copy {Actor:app-a Amount:50 Folded:false}
	//   copy {Actor:app-b Amount:60 Folded:false}
	// 50 superseded
}

// Owner names the copy that counts; Copy says whose it is, its signed
// amount and whether it is folded.
func ExampleCopy() {
	c, _ := tpncounter.New(tpncounter.Options{})
	c.Apply("app-b", "refund-9", -30)
	o, _ := c.Owner("refund-9")
	fmt.Printf("%+v\n", o)
	// Output: {Actor:app-b Amount:-30 Folded:false}
}

// Stats shows what the window costs: items in histories and folded
// records, and folded ids kept beyond FoldedLength for another holder.
func ExampleStats() {
	a, _ := tpncounter.New(tpncounter.Options{HistoryLength: 1, FoldedLength: 1})
	b, _ := tpncounter.New(tpncounter.Options{HistoryLength: 1, FoldedLength: 1})
	for _, x := range []crdt.TxnID{"p1", "p2"} {
		a.Apply("a", x, 1)
		b.Apply("b", x, 1) // b holds them too, then stays idle
	}
	a.Merge(b)
	for _, x := range []crdt.TxnID{"x1", "x2", "x3"} {
		a.Apply("a", x, 1)
	}
	fmt.Printf("%+v\n", a.Stats())
	// Output: {Actors:2 Retired:0 Transactions:5 History:4 Folded:3 Deferred:2 Conflicts:0}
}

// Retract takes an actor's own copy back out: the ledger does it for a
// transaction it wrote but never saw land that has since become older than
// the horizon.
func ExampleCounter_Retract() {
	c, _ := tpncounter.New(tpncounter.Options{})
	c.Apply("a", "t1", 10)
	c.Apply("a", "t2", 5)
	ok, _ := c.Retract("a", "t2")
	fmt.Println(ok, c.Value(), c.Status("t2"))
	// Output: true 10 unknown
}

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

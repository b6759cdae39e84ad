package tpncounter_test

import (
	"fmt"

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

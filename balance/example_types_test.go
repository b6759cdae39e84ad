package balance_test

import (
	"context"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/timeid"
)

// A client that reuses an update id with another amount writes a second
// row; exactly one amount counts and the id is reported as a Conflict, so
// that the mistake can be found and corrected.
func ExampleConflict() {
	ctx := context.Background()
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	ac, err := balance.New(memory.NewPartitions(), balance.Options{Clock: func() time.Time { return now }})
	if err != nil {
		fmt.Println(err)
		return
	}
	payment := timeid.FromParts(now, 1, 1)
	_ = ac.Add(ctx, "acct-7", payment, 500)
	_ = ac.Add(ctx, "acct-7", payment, 500) // a retry: the same row
	_ = ac.Add(ctx, "acct-7", payment, 50)  // the id reused with another amount
	_ = ac.Add(ctx, "acct-7", timeid.FromParts(now, 2, 1), -20)

	conflicts, err := ac.Conflicts(ctx, "acct-7")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range conflicts {
		fmt.Println(c.UpdateID == payment, "counted:", c.Counted, "refused:", c.Refused)
	}
	v, _ := ac.Balance(ctx, "acct-7")
	fmt.Println("balance:", v)
	// Output:
	// true counted: 50 refused: [500]
	// balance: 30
}

package deltalog_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/timeid"
)

// The client issuing an update chooses its ID once, when the update is
// made, and reuses it on every retry: the retry rewrites the same cell.
// An ID older than the write window is refused rather than counted twice.
func ExampleID() {
	ctx := context.Background()
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	c, _ := deltalog.New(memory.NewPartitions(), deltalog.Options{Clock: func() time.Time { return now }})

	var id deltalog.ID = timeid.FromParts(now, 1, 42) // fixed here; timeid.New(now) in a client
	fmt.Println(id.Time().Format(time.RFC3339), id.Validate())
	_ = c.Add(ctx, "page:home", id, 3)
	_ = c.Add(ctx, "page:home", id, 3) // a retry after a lost acknowledgement
	r, _ := c.Read(ctx, "page:home")
	fmt.Println(r.Value)

	stale := timeid.FromParts(now.Add(-time.Hour), 1, 42)
	err := c.Add(ctx, "page:home", stale, 3)
	fmt.Println(errors.Is(err, crdt.ErrOutsideWindow))
	err = c.Add(ctx, "page:home", deltalog.ID{}, 3) // the zero ID is invalid
	r, _ = c.Read(ctx, "page:home")
	fmt.Println(errors.Is(err, crdt.ErrInvalidTxnID), r.Value)
	// Output:
	// 2024-01-01T12:00:00Z <nil>
	// 3
	// true
	// true 3
}

package memory_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

// exampleTime is the fixed instant the examples in this file run at.
var exampleTime = time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)

// Partitions is the store of deltalog.Counters: each counter is one
// partition, each cell one row, and a scan meets the cells newest first.
// Wrapped in a faulty.Partitions, a write can land and still report a
// timeout; the retry with the same id rewrites the same row and counts once.
func ExamplePartitions_deltalog() {
	ctx := context.Background()
	mem := memory.NewPartitions()
	lossy := faulty.NewPartitions(mem, faulty.Options{Policy: faulty.Script(faulty.LoseAck)})
	counters, _ := deltalog.New(lossy, deltalog.Options{Clock: func() time.Time { return exampleTime }})
	id := timeid.FromParts(exampleTime, 1, 1)
	err := counters.Add(ctx, "likes", id, 1)
	fmt.Println("timed out:", errors.Is(err, crdt.ErrAmbiguousWrite))
	_ = counters.Add(ctx, "likes", id, 1) // the retry
	_ = counters.Add(ctx, "likes", timeid.FromParts(exampleTime.Add(time.Second), 1, 1), 2)
	r, _ := counters.Read(ctx, "likes")
	fmt.Println("value:", r.Value)
	_ = mem.Scan(ctx, "likes", nil, store.ReadComplete, func(row store.Row) bool {
		id, kind, _ := deltalog.DecodeKey(row.Key)
		fmt.Println(id.Time().Format(time.TimeOnly), kind)
		return true
	})
	// Output:
	// timed out: true
	// value: 3
	// 12:00:01 r
	// 12:00:00 r
}

// Partitions is also the store of balance.Accounts: each account is one
// partition of N, S and T rows, read as one snapshot. A write refused
// before it lands changes nothing.
func ExamplePartitions_balance() {
	ctx := context.Background()
	mem := memory.NewPartitions()
	flaky := faulty.NewPartitions(mem, faulty.Options{Policy: faulty.Script(faulty.Refuse)})
	accounts, _ := balance.New(flaky, balance.Options{Clock: func() time.Time { return exampleTime }})
	err := accounts.Add(ctx, "alice", timeid.FromParts(exampleTime, 1, 1), 100)
	fmt.Println("refused:", errors.Is(err, crdt.ErrUnavailable))
	_ = accounts.Add(ctx, "alice", timeid.FromParts(exampleTime, 1, 1), 100)
	_ = accounts.Add(ctx, "alice", timeid.FromParts(exampleTime, 2, 1), -30)
	b, _ := accounts.Balance(ctx, "alice")
	rows, _ := mem.Snapshot(ctx, "alice", balance.MaxRows, store.ReadComplete)
	fmt.Println("balance:", b, "rows:", len(rows))
	// Output:
	// refused: true
	// balance: 70 rows: 2
}

// Two writers that read the same siblings both survive: a Put supersedes
// exactly what its token names. A reader that merges both and writes with
// the latest token collapses them.
func ExampleSiblings() {
	ctx := context.Background()
	s := memory.NewSiblings()
	_, tok, _ := s.Fetch(ctx, "k")
	_ = s.Put(ctx, "k", "a", []byte("from a"), tok)
	_ = s.Put(ctx, "k", "b", []byte("from b"), tok) // b read before a wrote
	vals, tok, _ := s.Fetch(ctx, "k")
	fmt.Println(len(vals), "siblings")
	_ = s.Put(ctx, "k", "c", []byte("a and b merged"), tok)
	fmt.Println(s.Count("k"), "sibling")
	// Output:
	// 2 siblings
	// 1 sibling
}

// Delete removes the siblings a token names; with the token of the latest
// Fetch that is the whole key.
func ExampleSiblings_Delete() {
	ctx := context.Background()
	s := memory.NewSiblings()
	_ = s.Put(ctx, "k", "a", []byte("v"), nil)
	_, tok, _ := s.Fetch(ctx, "k")
	_ = s.Delete(ctx, "k", tok)
	vals, _, _ := s.Fetch(ctx, "k")
	fmt.Println(len(vals))
	// Output: 0
}

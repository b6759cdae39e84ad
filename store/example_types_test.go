package store_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

func printRows(rows []store.Row) {
	for _, r := range rows {
		fmt.Printf("  %s=%s\n", r.Key, r.Value)
	}
}

// Every Mutation carries its write timestamp, so the rows do not depend on
// the order batches arrive in: the greater timestamp wins, and a delete
// shadows the values written at or before its timestamp.
func ExampleMutation() {
	ctx := context.Background()
	p := memory.NewPartitions()
	_ = p.Apply(ctx, []store.Mutation{
		{Partition: "acct-1", Op: store.OpPut, Key: []byte("a"), Value: []byte("new"), Timestamp: 20},
		{Partition: "acct-1", Op: store.OpPut, Key: []byte("b"), Value: []byte("kept"), Timestamp: 10},
	})
	_ = p.Apply(ctx, []store.Mutation{ // arrives late: an older write and a delete
		{Partition: "acct-1", Op: store.OpPut, Key: []byte("a"), Value: []byte("old"), Timestamp: 10},
		{Partition: "acct-1", Op: store.OpDelete, Key: []byte("c"), Timestamp: 30},
	})
	_ = p.Apply(ctx, []store.Mutation{ // c was deleted at 30: a write at 25 stays invisible
		{Partition: "acct-1", Op: store.OpPut, Key: []byte("c"), Value: []byte("late"), Timestamp: 25},
	})
	rows, _ := p.Snapshot(ctx, "acct-1", 10, store.ReadComplete)
	printRows(rows)

	// A timestamp must be positive: the batch is refused, nothing written.
	bad := []store.Mutation{{Partition: "acct-1", Op: store.OpPut, Key: []byte("d"), Value: []byte("x")}}
	fmt.Println(errors.Is(store.CheckMutations(bad), crdt.ErrInvalidAmount))
	fmt.Println(errors.Is(p.Apply(ctx, bad), crdt.ErrInvalidAmount))
	// Output:
	//   a=new
	//   b=kept
	// true
	// true
}

// The ops: a range delete removes [Key, End), a partition delete every
// row; both shadow only what was written at or before their timestamp.
func ExampleOp() {
	ctx := context.Background()
	p := memory.NewPartitions()
	var muts []store.Mutation
	for i, k := range []string{"k1", "k2", "k3", "k4"} {
		muts = append(muts, store.Mutation{Partition: "log", Op: store.OpPut, Key: []byte(k), Value: []byte("v"), Timestamp: int64(10 + i)})
	}
	_ = p.Apply(ctx, muts)
	_ = p.Apply(ctx, []store.Mutation{{Partition: "log", Op: store.OpDeleteRange, Key: []byte("k2"), End: []byte("k4"), Timestamp: 20}})
	rows, _ := p.Snapshot(ctx, "log", 10, store.ReadComplete)
	fmt.Println(store.OpDeleteRange, len(rows), string(rows[0].Key), string(rows[1].Key))

	_ = p.Apply(ctx, []store.Mutation{
		{Partition: "log", Op: store.OpDeletePartition, Timestamp: 30},
		{Partition: "log", Op: store.OpPut, Key: []byte("k9"), Value: []byte("v"), Timestamp: 31},
	})
	rows, _ = p.Snapshot(ctx, "log", 10, store.ReadComplete)
	fmt.Println(store.OpDeletePartition, len(rows), string(rows[0].Key))
	fmt.Println(store.OpPut, store.OpDelete)
	// Output:
	// delete-range 2 k1 k4
	// delete-partition 1 k9
	// put delete
}

// newest returns up to n rows of a partition from the first key, reading
// no further than it needs.
func newest(ctx context.Context, p store.Partitions, partition string, n int) ([]string, error) {
	var keys []string
	err := p.Scan(ctx, partition, nil, store.ReadAny, func(r store.Row) bool {
		keys = append(keys, string(r.Key))
		return len(keys) < n
	})
	return keys, err
}

// Code that reads and writes ordered rows takes a Partitions, so that it
// runs on the in-memory store in tests and on Cassandra in production.
func ExamplePartitions() {
	ctx := context.Background()
	var p store.Partitions = memory.NewPartitions()
	var muts []store.Mutation
	for i := range 5 {
		muts = append(muts, store.Mutation{
			Partition: "events", Op: store.OpPut,
			Key: []byte{byte('a' + i)}, Value: []byte("x"), Timestamp: 1,
		})
	}
	if err := p.Apply(ctx, muts); err != nil { // one atomic batch
		fmt.Println(err)
		return
	}
	fmt.Println(newest(ctx, p, "events", 2))

	_, err := p.Snapshot(ctx, "events", 3, store.ReadComplete) // more than 3 rows
	fmt.Println(errors.Is(err, crdt.ErrTooLarge))
	err = p.Apply(ctx, []store.Mutation{{Partition: "", Op: store.OpPut, Key: []byte("a"), Value: []byte("x"), Timestamp: 1}})
	fmt.Println(errors.Is(err, crdt.ErrInvalidKey))
	// Output:
	// [a b] <nil>
	// true
	// true
}

// A reader states how complete its read must be. A lagging replica
// (simulated with store/faulty) may answer a ReadAny read from an older
// state; a ReadComplete read reflects every write that took effect.
func ExampleRead() {
	ctx := context.Background()
	p := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
	put := func(v string, ts int64) {
		_ = p.Apply(ctx, []store.Mutation{{Partition: "acct", Op: store.OpPut, Key: []byte("total"), Value: []byte(v), Timestamp: ts}})
		_, _ = p.Snapshot(ctx, "acct", 10, store.ReadAny)
	}
	put("10", 1)
	put("25", 2)

	p.SetPolicy(faulty.Script(faulty.Stale, faulty.Stale))
	for _, r := range []struct {
		name  string
		level store.Read
	}{{"ReadAny", store.ReadAny}, {"ReadComplete", store.ReadComplete}} {
		rows, _ := p.Snapshot(ctx, "acct", 10, r.level)
		fmt.Printf("%s: total=%s\n", r.name, rows[0].Value)
	}
	// Output:
	// ReadAny: total=10
	// ReadComplete: total=25
}

// Rows come back in key order, as copies: changing one changes nothing
// stored.
func ExampleRow() {
	ctx := context.Background()
	p := memory.NewPartitions()
	_ = p.Apply(ctx, []store.Mutation{
		{Partition: "p", Op: store.OpPut, Key: []byte("b"), Value: []byte("2"), Timestamp: 1},
		{Partition: "p", Op: store.OpPut, Key: []byte("a"), Value: []byte("1"), Timestamp: 1},
	})
	rows, _ := p.Snapshot(ctx, "p", 10, store.ReadComplete)
	printRows(rows)
	rows[0].Value[0] = '9'
	again, _ := p.Snapshot(ctx, "p", 10, store.ReadComplete)
	fmt.Printf("%s %s\n", rows[0].Value, again[0].Value)
	// Output:
	//   a=1
	//   b=2
	// 9 1
}

// Delete is optional: check for it with a type assertion. It removes the
// siblings its token covers; a sibling written since the Fetch survives.
func ExampleSiblingDeleter() {
	ctx := context.Background()
	var s store.Siblings = memory.NewSiblings()
	_ = s.Put(ctx, "cart/42", "web-1", []byte("a"), nil)
	_, tok, _ := s.Fetch(ctx, "cart/42")
	_ = s.Put(ctx, "cart/42", "web-2", []byte("b"), nil) // written after the Fetch

	d, ok := s.(store.SiblingDeleter)
	fmt.Println(ok)
	if err := d.Delete(ctx, "cart/42", tok); err != nil {
		fmt.Println(err)
		return
	}
	vals, _, _ := s.Fetch(ctx, "cart/42")
	fmt.Printf("%s\n", vals)
	// Output:
	// true
	// [b]
}

// Writers that did not see each other leave siblings side by side; a Put
// with the token of a Fetch that read them all replaces them with one value
// (here, their merge).
func ExampleSiblings() {
	ctx := context.Background()
	var s store.Siblings = memory.NewSiblings()
	_ = s.Put(ctx, "cart/7", "web-1", []byte("apple"), nil)
	_ = s.Put(ctx, "cart/7", "web-2", []byte("pear"), nil)

	vals, tok, _ := s.Fetch(ctx, "cart/7")
	fmt.Println(len(vals))
	merged := "apple+pear"
	_ = s.Put(ctx, "cart/7", "web-1", []byte(merged), tok)
	vals, _, _ = s.Fetch(ctx, "cart/7")
	fmt.Printf("%s\n", vals)

	err := s.Put(ctx, "", "web-1", []byte("x"), nil)
	fmt.Println(errors.Is(err, crdt.ErrInvalidKey))
	// Output:
	// 2
	// [apple+pear]
	// true
}

// A Token names exactly the siblings one Fetch returned: a Put with an old
// token supersedes only those, so a concurrent write survives as a
// sibling. A token from another backend is refused as corrupt.
func ExampleToken() {
	ctx := context.Background()
	s := memory.NewSiblings()
	_ = s.Put(ctx, "k", "a", []byte("v1"), nil)
	_, tokA, _ := s.Fetch(ctx, "k") // writer a reads v1
	_, tokB, _ := s.Fetch(ctx, "k") // writer b reads v1
	_ = s.Put(ctx, "k", "a", []byte("v2"), tokA)
	_ = s.Put(ctx, "k", "b", []byte("v3"), tokB) // did not see v2
	fmt.Println(s.Count("k"))

	var foreign store.Token = store.DotTokens('e').Encode([]uint64{1})
	err := s.Put(ctx, "k", "a", []byte("v4"), foreign)
	fmt.Println(errors.Is(err, crdt.ErrCorruptEncoding), s.Count("k"))
	// Output:
	// 2
	// true 2
}

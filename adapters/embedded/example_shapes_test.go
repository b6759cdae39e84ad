package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// Siblings keeps every value written from the same read: a writer that
// read both merges them with its token, and Delete removes only what its
// token names, so a value written since survives.
func ExampleSiblings() {
	dir, err := os.MkdirTemp("", "counterkit-siblings-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	sib := db.Siblings()

	_, tok, _ := sib.Fetch(ctx, "account-1")
	sib.Put(ctx, "account-1", "actor-a", []byte("+10"), tok)
	sib.Put(ctx, "account-1", "actor-b", []byte("-3"), tok)
	vals, tok, _ := sib.Fetch(ctx, "account-1")
	fmt.Printf("%q\n", vals)
	sib.Put(ctx, "account-1", "actor-c", []byte("+7"), tok)
	vals, tok, _ = sib.Fetch(ctx, "account-1")
	fmt.Printf("%q\n", vals)

	sib.Put(ctx, "account-1", "actor-d", []byte("+1"), nil) // a writer that never read the key
	sib.Delete(ctx, "account-1", tok)                       // removes "+7", which tok names, only
	vals, _, _ = sib.Fetch(ctx, "account-1")
	fmt.Printf("%q\n", vals)
	// Output:
	// ["+10" "-3"]
	// ["+7"]
	// ["+1"]
}

// Partitions holds timestamped rows: the greater timestamp wins, a range
// delete shadows the older rows in its range, and Scan reads on from a
// row key.
func ExamplePartitions() {
	dir, err := os.MkdirTemp("", "counterkit-partitions-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	parts := db.Partitions()

	put := func(key, value string, ts int64) store.Mutation {
		return store.Mutation{Partition: "views", Op: store.OpPut, Key: []byte(key), Value: []byte(value), Timestamp: ts}
	}
	parts.Apply(ctx, []store.Mutation{put("a", "1", 10), put("b", "2", 10), put("c", "3", 10), put("d", "4", 10)})
	parts.Apply(ctx, []store.Mutation{put("a", "old", 5), put("b", "new", 20)})
	parts.Apply(ctx, []store.Mutation{{Partition: "views", Op: store.OpDeleteRange, Key: []byte("c"), End: []byte("d"), Timestamp: 15}})

	rows, _ := parts.Snapshot(ctx, "views", 100, store.ReadComplete)
	for _, r := range rows {
		fmt.Printf("%s=%s\n", r.Key, r.Value)
	}
	var from []string
	parts.Scan(ctx, "views", []byte("b"), store.ReadComplete, func(r store.Row) bool {
		from = append(from, string(r.Key))
		return true
	})
	fmt.Println("from b:", from)
	// Output:
	// a=1
	// b=new
	// d=4
	// from b: [b d]
}

// Options.TombstoneGrace bounds how long a delete shadows a late write
// older than it; Options.Now is the clock that measures it.
func ExampleOptions() {
	dir, err := os.MkdirTemp("", "counterkit-options-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db, err := embedded.Open(dir, embedded.Options{TombstoneGrace: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	parts := db.Partitions()
	del := []store.Mutation{{Partition: "p", Op: store.OpDelete, Key: []byte("k"), Timestamp: 10}}
	late := []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("k"), Value: []byte("late"), Timestamp: 5}}
	count := func() int { rows, _ := parts.Snapshot(ctx, "p", 10, store.ReadComplete); return len(rows) }

	if err := parts.Apply(ctx, del); err != nil {
		panic(err)
	}
	parts.Apply(ctx, late) // older than the delete: shadowed
	fmt.Println("within grace:", count())
	now = now.Add(2 * time.Hour)
	parts.Apply(ctx, late) // still shadowed; this Apply then collects the tombstone
	fmt.Println("after grace:", count())
	parts.Apply(ctx, late)
	fmt.Println("once collected:", count())
	// Output:
	// within grace: 0
	// after grace: 0
	// once collected: 1
}

// Options.ReadOnly opens a store to read it: writes fail with
// ErrReadOnly, and a directory without a store is not created.
func ExampleOptions_readOnly() {
	dir, err := os.MkdirTemp("", "counterkit-readonly-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		panic(err)
	}
	db.Siblings().Put(ctx, "account-1", "actor-a", []byte("+10"), nil)
	db.Close()

	ro, err := embedded.Open(dir, embedded.Options{ReadOnly: true})
	if err != nil {
		panic(err)
	}
	defer ro.Close()
	vals, _, _ := ro.Siblings().Fetch(ctx, "account-1")
	fmt.Printf("read: %s\n", vals[0])
	err = ro.Siblings().Put(ctx, "account-1", "actor-a", []byte("+1"), nil)
	fmt.Println("write refused:", errors.Is(err, embedded.ErrReadOnly))
	_, err = embedded.Open(filepath.Join(dir, "none"), embedded.Options{ReadOnly: true})
	fmt.Println("no store:", errors.Is(err, crdt.ErrNotFound))
	// Output:
	// read: +10
	// write refused: true
	// no store: true
}

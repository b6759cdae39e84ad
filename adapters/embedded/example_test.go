package embedded_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/store"
)

// Open a data directory, write through both shapes, close it and open it
// again: what was acknowledged is still there.
func Example() {
	dir, err := os.MkdirTemp("", "counterkit-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		panic(err)
	}
	// Siblings: two writers that read the same (empty) key both survive;
	// a third that read both supersedes them.
	sib := db.Siblings()
	_, tok, _ := sib.Fetch(ctx, "account-1")
	sib.Put(ctx, "account-1", "actor-a", []byte("state from a"), tok)
	sib.Put(ctx, "account-1", "actor-b", []byte("state from b"), tok)
	vals, tok, _ := sib.Fetch(ctx, "account-1")
	fmt.Println("siblings:", len(vals))
	sib.Put(ctx, "account-1", "actor-c", []byte("merged by c"), tok)

	// Partitions: rows with explicit timestamps (µs); a delete shadows a
	// late write with an older timestamp.
	parts := db.Partitions()
	now := time.Now().UnixMicro()
	parts.Apply(ctx, []store.Mutation{
		{Partition: "log-1", Op: store.OpPut, Key: []byte("cell-1"), Value: []byte("+5"), Timestamp: now + 1},
		{Partition: "log-1", Op: store.OpPut, Key: []byte("cell-2"), Value: []byte("+7"), Timestamp: now + 2},
		{Partition: "log-1", Op: store.OpDelete, Key: []byte("cell-3"), Timestamp: now + 5},
	})
	parts.Apply(ctx, []store.Mutation{
		{Partition: "log-1", Op: store.OpPut, Key: []byte("cell-3"), Value: []byte("+9"), Timestamp: now + 4},
	})
	if err := db.Close(); err != nil {
		panic(err)
	}

	db, err = embedded.Open(dir, embedded.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	vals, _, _ = db.Siblings().Fetch(ctx, "account-1")
	fmt.Printf("after reopen: %q\n", vals)
	rows, _ := db.Partitions().Snapshot(ctx, "log-1", 100, store.ReadComplete)
	for _, r := range rows {
		fmt.Printf("%s = %s\n", r.Key, r.Value)
	}

	// A second Open of the same directory is refused while this one is open.
	_, err = embedded.Open(dir, embedded.Options{})
	fmt.Println("second open locked:", err != nil)
	// Output:
	// siblings: 2
	// after reopen: ["merged by c"]
	// cell-1 = +5
	// cell-2 = +7
	// second open locked: true
}

// Back up a store that is in use, and open the copy.
func ExampleDB_Backup() {
	base, err := os.MkdirTemp("", "counterkit-backup-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	ctx := context.Background()
	db, err := embedded.Open(base+"/live", embedded.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	db.Siblings().Put(ctx, "account-1", "actor-a", []byte("balance 10"), nil)

	if err := db.Backup(ctx, base+"/backup"); err != nil {
		panic(err)
	}
	copy, err := embedded.Open(base+"/backup", embedded.Options{})
	if err != nil {
		panic(err)
	}
	defer copy.Close()
	vals, _, _ := copy.Siblings().Fetch(ctx, "account-1")
	fmt.Printf("%s\n", vals[0])
	// Output: balance 10
}

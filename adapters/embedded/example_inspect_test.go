package embedded_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/store"
)

// List the keys of a store no process holds, read its size and write a
// compacted copy, without opening it.
func ExampleKeys() {
	base, err := os.MkdirTemp("", "counterkit-keys-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	dir := filepath.Join(base, "data")
	ctx := context.Background()
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		panic(err)
	}
	db.Siblings().Put(ctx, "account-1", "actor-a", []byte("+10"), nil)
	db.Siblings().Put(ctx, "account-1", "actor-b", []byte("-3"), nil)
	db.Partitions().Apply(ctx, []store.Mutation{{Partition: "pageviews", Op: store.OpPut,
		Key: []byte("web-1"), Value: []byte("5"), Timestamp: 1}})
	db.Close()

	keys, err := embedded.Keys(ctx, dir)
	if err != nil {
		panic(err)
	}
	for _, k := range keys {
		fmt.Printf("%s %s: %d entries\n", k.Shape, k.Key, k.Entries)
	}
	st, err := embedded.ReadStats(ctx, dir)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d sibling values, %d rows, format %d\n", st.SiblingValues, st.Rows, st.FormatVersion)
	res, err := embedded.Compact(ctx, dir, filepath.Join(base, "compacted"))
	if err != nil {
		panic(err)
	}
	fmt.Println("compacted:", res.Keys, "keys")
	// Output:
	// siblings account-1: 2 entries
	// partition pageviews: 1 entries
	// 2 sibling values, 1 rows, format 3
	// compacted: 2 keys
}

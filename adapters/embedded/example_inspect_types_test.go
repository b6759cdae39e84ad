package embedded_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/store"
)

// exampleStore writes two sibling values and three rows into a new store
// in dir and closes it, for the examples of Keys, ReadStats and Compact.
func exampleStore(dir string) {
	ctx := context.Background()
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	db.Siblings().Put(ctx, "account-1", "actor-a", []byte("+10"), nil)
	db.Siblings().Put(ctx, "account-1", "actor-b", []byte("-3"), nil)
	var muts []store.Mutation
	for i, key := range []string{"web-1", "web-2", "web-3"} {
		muts = append(muts, store.Mutation{Partition: "pageviews", Op: store.OpPut, Key: []byte(key), Value: []byte("5"), Timestamp: int64(i + 1)})
	}
	if err := db.Partitions().Apply(ctx, muts); err != nil {
		panic(err)
	}
}

// Shape tells a tool which store a key of Keys belongs to: here it
// counts the partitions' rows and skips the sibling keys.
func ExampleShape() {
	base, err := os.MkdirTemp("", "counterkit-shape-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	exampleStore(base)
	keys, err := embedded.Keys(context.Background(), base)
	if err != nil {
		panic(err)
	}
	rows := 0
	for _, k := range keys {
		if k.Shape == embedded.ShapePartition {
			rows += k.Entries
		}
	}
	fmt.Println(embedded.ShapeSiblings, embedded.ShapePartition, rows)
	// Output: siblings partition 3
}

// A KeyInfo is one key of a data file: its shape, how many values it
// holds and the bytes they take as stored.
func ExampleKeyInfo() {
	base, err := os.MkdirTemp("", "counterkit-keyinfo-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	exampleStore(base)
	keys, err := embedded.Keys(context.Background(), base)
	if err != nil {
		panic(err)
	}
	for _, k := range keys {
		fmt.Printf("%s %s: %d entries, %d bytes\n", k.Shape, k.Key, k.Entries, k.Bytes)
	}
	// Output:
	// siblings account-1: 2 entries, 49 bytes
	// partition pageviews: 3 entries, 84 bytes
}

// Stats counts what a data file holds without opening it: its format,
// the sibling keys and values, the partitions and rows.
func ExampleStats() {
	base, err := os.MkdirTemp("", "counterkit-stats-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	exampleStore(base)
	st, err := embedded.ReadStats(context.Background(), base)
	if err != nil {
		panic(err)
	}
	fmt.Println("file:", st.File == filepath.Join(base, embedded.FileName), st.FormatVersion == embedded.FormatVersion)
	fmt.Println("siblings:", st.SiblingKeys, "keys,", st.SiblingValues, "values")
	fmt.Println("partitions:", st.Partitions, "with", st.Rows, "rows")
	fmt.Println("in use:", st.DataBytes <= st.FileBytes, st.DataBytes%int64(st.PageSize) == 0)
	// Output:
	// file: true true
	// siblings: 1 keys, 2 values
	// partitions: 1 with 3 rows
	// in use: true true
}

// BucketStats are the engine's figures for each bucket of the file: a
// small bucket is stored inline, in its parent's page, and a large one
// in pages of its own.
func ExampleBucketStats() {
	base, err := os.MkdirTemp("", "counterkit-buckets-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	exampleStore(base)
	db, err := embedded.Open(base, embedded.Options{})
	if err != nil {
		panic(err)
	}
	db.Partitions().Apply(context.Background(), manyRows("pageviews", 1000))
	db.Close()

	st, err := embedded.ReadStats(context.Background(), base)
	if err != nil {
		panic(err)
	}
	for _, b := range st.Buckets {
		fmt.Printf("%s: %d keys, inline %t, own pages %t\n", b.Name, b.Keys, b.Inline, b.LeafPages > 0)
	}
	// Output:
	// drops: 0 keys, inline true, own pages false
	// gc: 0 keys, inline true, own pages false
	// meta: 2 keys, inline true, own pages false
	// points: 0 keys, inline true, own pages false
	// ranges: 0 keys, inline true, own pages false
	// rows: 1003 keys, inline false, own pages true
	// siblings: 2 keys, inline true, own pages false
}

// manyRows returns n puts of 100-byte values to partition.
func manyRows(partition string, n int) []store.Mutation {
	muts := make([]store.Mutation, n)
	for i := range muts {
		muts[i] = store.Mutation{Partition: partition, Op: store.OpPut, Key: fmt.Appendf(nil, "row-%04d", i), Value: make([]byte, 100), Timestamp: 1}
	}
	return muts
}

// Compact writes a copy without the free pages that deletes leave: after
// a large partition is dropped, the copy holds the same keys in a
// fraction of the bytes.
func ExampleCompactResult() {
	base, err := os.MkdirTemp("", "counterkit-compact-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	ctx := context.Background()
	dir := filepath.Join(base, "data")
	exampleStore(dir)
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		panic(err)
	}
	db.Partitions().Apply(ctx, manyRows("scratch", 5000))
	db.Partitions().Apply(ctx, []store.Mutation{{Partition: "scratch", Op: store.OpDeletePartition, Timestamp: 2}})
	db.Close()

	res, err := embedded.Compact(ctx, dir, filepath.Join(base, "compacted"))
	if err != nil {
		panic(err)
	}
	fmt.Println("keys copied:", res.Keys)
	fmt.Println("under a tenth of the original:", res.BytesAfter*10 < res.BytesBefore)
	// Output:
	// keys copied: 2
	// under a tenth of the original: true
}

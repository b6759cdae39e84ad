package embedded_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/store"
)

// TestScanRowsBelongToTheCaller: fn may change the rows it is given; the
// scan still pages on from the right key, one read transaction per page.
func TestScanRowsBelongToTheCaller(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t, embedded.Options{PageSize: 2})
	ctx := context.Background()
	var muts []store.Mutation
	for i := range 7 {
		muts = append(muts, store.Mutation{Partition: "p", Op: store.OpPut, Key: fmt.Appendf(nil, "k%d", i), Value: []byte("v"), Timestamp: tsBase})
	}
	if err := db.Partitions().Apply(ctx, muts); err != nil {
		t.Fatal(err)
	}
	var seen []string
	err := db.Partitions().Scan(ctx, "p", nil, store.ReadComplete, func(r store.Row) bool {
		seen = append(seen, string(r.Key))
		for i := range r.Key {
			r.Key[i] = 0
		}
		return len(seen) < 20 // a scan that restarts stops here

	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[k0 k1 k2 k3 k4 k5 k6]" {
		t.Fatalf("scan saw %v", seen)
	}
	// An empty partition, and a stop after the first row.
	n := 0
	db.Partitions().Scan(ctx, "none", nil, store.ReadComplete, func(store.Row) bool { n++; return true })
	db.Partitions().Scan(ctx, "p", []byte("k3"), store.ReadComplete, func(r store.Row) bool { n++; return false })
	if n != 1 {
		t.Fatalf("%d rows", n)
	}
}

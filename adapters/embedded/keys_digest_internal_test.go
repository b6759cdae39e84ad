package embedded

import (
	"context"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/counterkit/counterkit/store"
)

// Compact compares a copy's keys with the original's by their digest: a
// store that differs from another in one key's name, shape, entries or
// bytes must digest differently, and stores with the same keys alike.
func TestKeysDigestTellsStoresApart(t *testing.T) {
	ctx := context.Background()
	// build writes the base keys, then edit's, and returns the digest.
	build := func(edit func(d *DB) error) keysDigest {
		t.Helper()
		d, err := Open(t.TempDir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		sib, parts := d.Siblings(), d.Partitions()
		for _, k := range []string{"account-1", "account-2"} {
			if err := sib.Put(ctx, k, "a", []byte("state"), nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := parts.Apply(ctx, []store.Mutation{{Partition: "log-1", Op: store.OpPut, Key: []byte("r1"), Value: []byte("v"), Timestamp: 1}}); err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			if err := edit(d); err != nil {
				t.Fatal(err)
			}
		}
		var dg keysDigest
		if err := d.view(func(tx *bolt.Tx) (err error) { dg, err = digestKeys(ctx, tx); return err }); err != nil {
			t.Fatal(err)
		}
		return dg
	}
	base := build(nil)
	if base.n != 3 {
		t.Fatalf("the base store digests %d keys, want 3", base.n)
	}
	if again := build(nil); again != base {
		t.Fatal("two stores with the same keys digest differently")
	}
	put := func(key string, value []byte) func(d *DB) error {
		return func(d *DB) error { return d.Siblings().Put(ctx, key, "a", value, nil) }
	}
	row := func(partition, key string) func(d *DB) error {
		return func(d *DB) error {
			return d.Partitions().Apply(ctx, []store.Mutation{{Partition: partition, Op: store.OpPut, Key: []byte(key), Value: []byte("v"), Timestamp: time.Now().UnixMicro()}})
		}
	}
	for name, edit := range map[string]func(d *DB) error{
		"a longer value of a key": func(d *DB) error {
			_, tok, err := d.Siblings().Fetch(ctx, "account-1")
			if err != nil {
				return err
			}
			return d.Siblings().Put(ctx, "account-1", "a", []byte("states"), tok)
		},
		"one more sibling key":               put("account-3", []byte("state")),
		"one more sibling of a key":          put("account-2", []byte("state")),
		"a partition named as a sibling key": row("account-1", "r1"),
		"one more row of a partition":        row("log-1", "r2"),
		"one more partition":                 row("log-2", "r1"),
	} {
		if dg := build(edit); dg == base {
			t.Errorf("%s: the digest does not change", name)
		}
	}
}

package embedded

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	bolt "go.etcd.io/bbolt"
)

// TestOtherEnginePageSizes opens data files whose engine pages are not
// this machine's (a file made where pages are 16 or 64 KiB, or copied by
// a tool with another page size): each opens, verifies, lists the same
// keys, takes a write and opens again. A page size the engine would not
// write (512 bytes) is damage.
func TestOtherEnginePageSizes(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	db, err := Open(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var muts []store.Mutation
	for i := range 200 {
		muts = append(muts, store.Mutation{Partition: "p", Op: store.OpPut, Key: []byte(fmt.Sprintf("r%03d", i)), Value: make([]byte, 100), Timestamp: 1})
	}
	muts = append(muts, store.Mutation{Partition: "p", Op: store.OpDeleteRange, Key: []byte("r050"), End: []byte("r060"), Timestamp: 2})
	if err := db.Partitions().Apply(ctx, muts); err != nil {
		t.Fatal(err)
	}
	if err := db.Siblings().Put(ctx, "k", "a", make([]byte, 5000), nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	want, err := Keys(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range []int{512, 1024, 8192, 16384, 65536} {
		to := t.TempDir()
		s, err := bolt.Open(filepath.Join(src, FileName), 0o600, &bolt.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		d, err := bolt.Open(filepath.Join(to, FileName), 0o600, &bolt.Options{PageSize: ps})
		if err != nil {
			t.Fatal(err)
		}
		err = bolt.Compact(d, s, 1<<20)
		if err == nil {
			err = d.Update(restampDigests)
		}
		s.Close()
		if cerr := d.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		if ps == 512 {
			if _, err := Open(to, Options{}); !errors.Is(err, crdt.ErrCorruptEncoding) {
				t.Errorf("page size %d: Open got %v, want crdt.ErrCorruptEncoding", ps, err)
			}
			continue
		}
		for round := range 2 {
			got, err := Keys(ctx, to)
			written := slices.DeleteFunc(slices.Clone(got), func(k KeyInfo) bool { return k.Key == "later" })
			if err != nil || !slices.Equal(written, want) || len(got) != len(want)+round {
				t.Fatalf("page size %d, round %d: Keys %v (%v), want %v", ps, round, got, err, want)
			}
			db, err := Open(to, Options{})
			if err != nil {
				t.Fatalf("page size %d, round %d: %v", ps, round, err)
			}
			err = db.Verify()
			if err == nil && round == 0 {
				err = db.Siblings().Put(ctx, "later", "a", []byte("v"), nil)
			}
			db.Close()
			if err != nil {
				t.Fatalf("page size %d, round %d: %v", ps, round, err)
			}
		}
	}
}

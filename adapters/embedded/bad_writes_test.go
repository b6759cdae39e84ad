package embedded_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// TestBadWritesLeaveTheFileAsItWas: every write the adapter must refuse
// (README "Bad input changes nothing": oversized data, invalid keys and
// ids) returns an error wrapping a crdt sentinel, and the data file is
// byte for byte what it was: no transaction was committed.
func TestBadWritesLeaveTheFileAsItWas(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t, embedded.Options{})
	ctx := context.Background()
	sib, parts := db.Siblings(), db.Partitions()
	if err := sib.Put(ctx, "k", "a", []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	_, tok, err := sib.Fetch(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := parts.Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("r"), Value: []byte("v"), Timestamp: 5}}); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), store.MaxValue+1)
	ok := store.Mutation{Partition: "p", Op: store.OpPut, Key: []byte("r2"), Value: []byte("v"), Timestamp: 9}
	many := make([]store.Mutation, store.MaxBatch+1)
	for i := range many {
		many[i] = ok
	}
	cases := []struct {
		name string
		err  error
		want []error
	}{
		{"put value over MaxValue", sib.Put(ctx, "k", "a", big, tok), []error{crdt.ErrTooLarge}},
		{"put empty value", sib.Put(ctx, "k", "a", nil, tok), []error{crdt.ErrInvalidAmount}},
		{"put empty key", sib.Put(ctx, "", "a", []byte("v"), nil), []error{crdt.ErrInvalidKey}},
		{"put key over MaxKeyLen", sib.Put(ctx, strings.Repeat("k", crdt.MaxKeyLen+1), "a", []byte("v"), nil), []error{crdt.ErrInvalidKey}},
		{"put key with NUL", sib.Put(ctx, "k\x00", "a", []byte("v"), nil), []error{crdt.ErrInvalidKey}},
		{"put key not UTF-8", sib.Put(ctx, "k\xff", "a", []byte("v"), nil), []error{crdt.ErrInvalidKey}},
		{"put empty actor", sib.Put(ctx, "k", "", []byte("v"), tok), []error{crdt.ErrInvalidActor}},
		{"put malformed token", sib.Put(ctx, "k", "a", []byte("v"), store.Token("garbage")), []error{crdt.ErrCorruptEncoding, crdt.ErrInvalidConfig, crdt.ErrInvalidAmount}},
		{"delete malformed token", sib.Delete(ctx, "k", store.Token("e\x80")), []error{crdt.ErrCorruptEncoding, crdt.ErrInvalidConfig, crdt.ErrInvalidAmount}},
		{"delete invalid key", sib.Delete(ctx, "", tok), []error{crdt.ErrInvalidKey}},
		{"apply value over MaxValue", parts.Apply(ctx, []store.Mutation{ok, {Partition: "p", Op: store.OpPut, Key: []byte("r3"), Value: big, Timestamp: 9}}), []error{crdt.ErrTooLarge}},
		{"apply row key over MaxRowKey", parts.Apply(ctx, []store.Mutation{ok, {Partition: "p", Op: store.OpPut, Key: bytes.Repeat([]byte("r"), store.MaxRowKey+1), Value: []byte("v"), Timestamp: 9}}), []error{crdt.ErrTooLarge}},
		{"apply invalid partition key", parts.Apply(ctx, []store.Mutation{ok, {Partition: "p\n", Op: store.OpPut, Key: []byte("r"), Value: []byte("v"), Timestamp: 9}}), []error{crdt.ErrInvalidKey}},
		{"apply timestamp 0", parts.Apply(ctx, []store.Mutation{ok, {Partition: "p", Op: store.OpPut, Key: []byte("r"), Value: []byte("v")}}), []error{crdt.ErrInvalidAmount}},
		{"apply unknown op", parts.Apply(ctx, []store.Mutation{ok, {Partition: "p", Op: 99, Key: []byte("r"), Timestamp: 9}}), []error{crdt.ErrInvalidAmount}},
		{"apply empty range", parts.Apply(ctx, []store.Mutation{ok, {Partition: "p", Op: store.OpDeleteRange, Key: []byte("b"), End: []byte("a"), Timestamp: 9}}), []error{crdt.ErrInvalidAmount}},
		{"apply delete with a value", parts.Apply(ctx, []store.Mutation{ok, {Partition: "p", Op: store.OpDelete, Key: []byte("r"), Value: []byte("v"), Timestamp: 9}}), []error{crdt.ErrInvalidAmount}},
		{"apply over MaxBatch", parts.Apply(ctx, many), []error{crdt.ErrTooLarge}},
		{"apply over MaxBatchBytes", parts.Apply(ctx, []store.Mutation{
			{Partition: "p", Op: store.OpPut, Key: []byte("a"), Value: big[:store.MaxValue], Timestamp: 9},
			{Partition: "p", Op: store.OpPut, Key: []byte("b"), Value: big[:store.MaxValue], Timestamp: 9}}), []error{crdt.ErrTooLarge}},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !slicesContainsFunc(c.want, func(s error) bool { return errors.Is(c.err, s) }) {
			t.Errorf("%s: %v, want one of %v", c.name, c.err, c.want)
		}
	}
	after, err := os.ReadFile(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("refused writes changed the data file")
	}
	if err := db.Verify(); err != nil {
		t.Fatal(err)
	}
	vals, _, err := sib.Fetch(ctx, "k")
	if err != nil || len(vals) != 1 || string(vals[0]) != "v" {
		t.Fatalf("k: %q %v", vals, err)
	}
	// Invalid keys on reads too.
	if _, _, err := sib.Fetch(ctx, "k\x00"); !errors.Is(err, crdt.ErrInvalidKey) {
		t.Errorf("fetch of an invalid key: %v", err)
	}
	if _, err := parts.Snapshot(ctx, "", 10, store.ReadComplete); !errors.Is(err, crdt.ErrInvalidKey) {
		t.Errorf("snapshot of an invalid key: %v", err)
	}
	if err := parts.Scan(ctx, strings.Repeat("p", 256), nil, store.ReadComplete, func(store.Row) bool { return true }); !errors.Is(err, crdt.ErrInvalidKey) {
		t.Errorf("scan of an invalid key: %v", err)
	}
}

func slicesContainsFunc[T any](s []T, f func(T) bool) bool {
	for _, x := range s {
		if f(x) {
			return true
		}
	}
	return false
}

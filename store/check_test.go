package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// TestCheckPut checks each refusal of CheckPut, with its sentinel, and
// that a put mutation's value meets the same bounds in CheckMutations.
func TestCheckPut(t *testing.T) {
	big := make([]byte, store.MaxValue+1)
	for _, c := range []struct {
		name  string
		key   string
		actor crdt.ActorID
		value []byte
		want  error
	}{
		{"valid", "k", "a", []byte("v"), nil},
		{"largest value", "k", "a", big[:store.MaxValue], nil},
		{"empty key", "", "a", []byte("v"), crdt.ErrInvalidKey},
		{"long key", strings.Repeat("k", crdt.MaxKeyLen+1), "a", []byte("v"), crdt.ErrInvalidKey},
		{"empty actor", "k", "", []byte("v"), crdt.ErrInvalidActor},
		{"empty value", "k", "a", nil, crdt.ErrInvalidAmount},
		{"value too long", "k", "a", big, crdt.ErrTooLarge},
	} {
		err := store.CheckPut(c.key, c.actor, c.value)
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: CheckPut = %v, want nil", c.name, err)
			}
			continue
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s: CheckPut = %v, want an error wrapping %v", c.name, err, c.want)
		}
		if c.key == "k" && c.actor != "" { // a value's refusal
			m := []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("r"), Value: c.value, Timestamp: 1}}
			if !errors.Is(store.CheckMutations(m), c.want) {
				t.Errorf("%s: CheckMutations = %v, want an error wrapping %v", c.name, store.CheckMutations(m), c.want)
			}
		}
	}
}

// A mutation carries only its op's fields: CheckMutations refuses the
// others (a partition delete with a row key deleted the whole partition,
// an end on a put or a row delete was ignored) and accepts each op's own.
func TestCheckMutationsFields(t *testing.T) {
	k, e, v := []byte("k"), []byte("z"), []byte("v")
	for _, c := range []struct {
		m    store.Mutation
		want error
	}{
		{store.Mutation{Op: store.OpPut, Key: k, Value: v}, nil},
		{store.Mutation{Op: store.OpDelete, Key: k}, nil},
		{store.Mutation{Op: store.OpDeleteRange, Key: k, End: e}, nil},
		{store.Mutation{Op: store.OpDeleteRange}, nil},
		{store.Mutation{Op: store.OpDeletePartition}, nil},
		{store.Mutation{Op: store.OpDeletePartition, Key: k}, crdt.ErrInvalidKey},
		{store.Mutation{Op: store.OpDeletePartition, End: e}, crdt.ErrInvalidKey},
		{store.Mutation{Op: store.OpPut, Key: k, End: e, Value: v}, crdt.ErrInvalidKey},
		{store.Mutation{Op: store.OpDelete, Key: k, End: e}, crdt.ErrInvalidKey},
		{store.Mutation{Op: store.OpDelete, Key: k, Value: v}, crdt.ErrInvalidAmount},
	} {
		c.m.Partition, c.m.Timestamp = "p", 1
		err := store.CheckMutations([]store.Mutation{c.m})
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%+v: %v, want %v", c.m, err, c.want)
		}
	}
}

package store_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// recordsStore is a Siblings store whose values expire a day after their
// Put, as a Cassandra table with a TTL or a Riak bucket on an expiring
// backend does.
type recordsStore struct{ store.Siblings }

func (recordsStore) TTL() time.Duration { return 24 * time.Hour }

// A store whose values expire says so with TTL (Expiring). store.TTL reads
// it (zero for a store that keeps values for good), and CheckKeeps refuses
// such a store for what must not vanish from an idle key: a counter's
// state, as opposed to transaction records.
func ExampleExpiring() {
	var records store.Siblings = recordsStore{memory.NewSiblings()}
	fmt.Println(store.TTL(records), store.TTL(memory.NewSiblings()))
	fmt.Println(store.CheckKeeps(memory.NewSiblings(), "accounts"))
	err := store.CheckKeeps(records, "accounts")
	fmt.Println(errors.Is(err, crdt.ErrInvalidConfig))
	// Output:
	// 24h0m0s 0s
	// <nil>
	// true
}

// DeleteBatch is optional, as Delete is: it removes the siblings each
// token covers under its key, all in one write. A sibling written after
// the Fetch survives.
func ExampleSiblingBatchDeleter() {
	ctx := context.Background()
	var s store.Siblings = memory.NewSiblings()
	_ = s.Put(ctx, "rec/1", "web-1", []byte("a"), nil)
	_ = s.Put(ctx, "rec/2", "web-1", []byte("b"), nil)
	_, tok1, _ := s.Fetch(ctx, "rec/1")
	_, tok2, _ := s.Fetch(ctx, "rec/2")
	_ = s.Put(ctx, "rec/2", "web-2", []byte("c"), nil) // written after the Fetch

	d, ok := s.(store.SiblingBatchDeleter)
	fmt.Println(ok)
	if err := d.DeleteBatch(ctx, []string{"rec/1", "rec/2"}, []store.Token{tok1, tok2}); err != nil {
		fmt.Println(err)
		return
	}
	for _, k := range []string{"rec/1", "rec/2"} {
		vals, _, _ := s.Fetch(ctx, k)
		fmt.Printf("%s: %s\n", k, vals)
	}
	err := d.DeleteBatch(ctx, []string{"rec/1"}, nil)
	fmt.Println(err != nil)
	// Output:
	// true
	// rec/1: []
	// rec/2: [c]
	// true
}

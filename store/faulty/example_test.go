package faulty_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
)

// A write whose acknowledgement is lost has landed; a refused one has not;
// a held one lands when delivered.
func Example() {
	ctx := context.Background()
	inner := memory.NewSiblings()
	s := faulty.NewSiblings(inner, faulty.Options{
		Policy: faulty.Script(faulty.LoseAck, faulty.Refuse, faulty.Hold),
	})
	for _, v := range []string{"a", "b", "c"} {
		err := s.Put(ctx, "k", "actor", []byte(v), nil)
		fmt.Println(v, errors.Is(err, crdt.ErrAmbiguousWrite), errors.Is(err, crdt.ErrUnavailable), inner.Count("k"))
	}
	fmt.Println("held:", s.Held())
	if err := s.DeliverAll(); err != nil {
		fmt.Println(err)
	}
	fmt.Println("after delivery:", inner.Count("k"))
	c := s.Counts()
	fmt.Println(c[faulty.LoseAck], c[faulty.Refuse], c[faulty.Hold])
	// Output:
	// a true false 1
	// b false true 1
	// c true false 1
	// held: 1
	// after delivery: 2
	// 1 1 1
}

// A stale read answers from an older state with its old token, so a write
// based on it leaves a sibling, as with a lagging replica.
func ExampleStaleBy() {
	ctx := context.Background()
	s := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
	_, tok, _ := s.Fetch(ctx, "k")
	_ = s.Put(ctx, "k", "a", []byte("v1"), tok)
	_, tok, _ = s.Fetch(ctx, "k")
	_ = s.Put(ctx, "k", "a", []byte("v2"), tok)
	s.SetPolicy(faulty.Script(faulty.StaleBy(1)))
	vals, tok, _ := s.Fetch(ctx, "k")
	fmt.Printf("stale read: %s\n", vals)
	_ = s.Put(ctx, "k", "a", []byte("v3"), tok)
	vals, _, _ = s.Fetch(ctx, "k")
	fmt.Println("siblings now:", len(vals))
	// Output:
	// stale read: [v1]
	// siblings now: 2
}

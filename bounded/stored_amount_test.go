package bounded_test

import (
	"context"
	"errors"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
)

// TestStoredNeedsTheCallsAmount: a call whose read is refused answers
// duplicate from the Account's last state only when a copy there has the
// call's amount (SPEC.md 13.5, "stored"). A copy of another amount leaves
// the call failed: answered without error, the caller would take a credit
// or debit that no account applied as done.
func TestStoredNeedsTheCallsAmount(t *testing.T) {
	ctx := context.Background()
	st := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
	opts := func(actor crdt.ActorID) bounded.AccountOptions {
		return bounded.AccountOptions{Actor: actor, Backoff: bounded.Backoff{Initial: -1}}
	}
	a, err := bounded.Open(st, "k", opts("a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := bounded.Open(st, "k", opts("b"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Credit(ctx, "t", 7); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Credit(ctx, "own", 3); err != nil {
		t.Fatal(err)
	}
	// The account's key cannot be read; transaction records can.
	st.SetPolicy(faulty.Only(func(c faulty.Call) faulty.Fault {
		if c.Key == "k" {
			return faulty.Refuse
		}
		return faulty.Pass
	}, faulty.MethodFetch))
	for _, c := range []struct {
		name string
		call func() (bounded.Result, error)
	}{
		{"another's transaction, another amount", func() (bounded.Result, error) { return a.Credit(ctx, "t", 5) }},
		{"its own credit, debited", func() (bounded.Result, error) { return a.Debit(ctx, "own", 3) }},
		{"its own credit, another amount", func() (bounded.Result, error) { return a.Credit(ctx, "own", 4) }},
	} {
		r, err := c.call()
		if !errors.Is(err, crdt.ErrUnavailable) || r.Landed {
			t.Errorf("%s, read refused: %+v, %v; want an unavailable error, not landed", c.name, r, err)
		}
	}
	// A copy of the call's amount is still its answer.
	if r, err := a.Credit(ctx, "t", 7); err != nil || r.Outcome != bounded.Duplicate || !r.Landed {
		t.Errorf("another's transaction, its amount, read refused: %+v, %v; want duplicate, landed", r, err)
	}
	st.SetPolicy(nil)
	if v, err := a.Value(ctx); err != nil || v != 10 {
		t.Fatalf("value %d, %v; want 10", v, err)
	}
	if _, err := a.Credit(ctx, "t", 5); !errors.Is(err, crdt.ErrConflictingTransaction) {
		t.Fatalf("another amount, read delivered: %v; want conflicting_transaction", err)
	}
}

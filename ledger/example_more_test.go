package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// Options name the actor, bound the retries of a refused or ambiguous
// write, and set the stored counter's history length. Every retry
// re-fetches and re-applies, which is safe because the write is
// idempotent.
func ExampleOptions() {
	ctx := context.Background()
	store := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
	opts := ledger.Options{
		Actor:      "app-1",
		RetryCount: 1, // two attempts in all
		Counter:    tpncounter.Options{HistoryLength: 5},
	}
	l, _ := ledger.New(store, "wallet", opts)

	store.SetPolicy(faulty.Only(faulty.Script(faulty.Refuse, faulty.Refuse), faulty.MethodPut))
	r, err := l.Credit(ctx, "t1", 10)
	fmt.Println(r.Attempts, r.Landed, errors.Is(err, crdt.ErrUnavailable))

	store.SetPolicy(faulty.Only(faulty.Script(faulty.Refuse), faulty.MethodPut))
	r, err = l.Credit(ctx, "t1", 10)
	fmt.Println(r.Attempts, r.Landed, r.Value, err)
	// Output:
	// 2 false true
	// 2 true 10 <nil>
}

// A Token is the causal context of a Fetch. A Put with it supersedes
// exactly the siblings that Fetch saw; a Put with nil (no prior read)
// supersedes nothing and becomes a sibling. A token the store did not issue
// is refused.
func ExampleToken() {
	ctx := context.Background()
	s := memory.NewSiblings()
	_ = s.Put(ctx, "k", "a", []byte("v1"), nil)
	_, tok, _ := s.Fetch(ctx, "k")
	_ = s.Put(ctx, "k", "a", []byte("v2"), tok)
	fmt.Println("siblings:", s.Count("k"))
	_ = s.Put(ctx, "k", "b", []byte("blind"), nil)
	fmt.Println("siblings:", s.Count("k"))
	err := s.Put(ctx, "k", "a", []byte("v3"), store.Token("not a token"))
	fmt.Println(errors.Is(err, crdt.ErrCorruptEncoding), s.Count("k"))
	// Output:
	// siblings: 1
	// siblings: 2
	// true 2
}

// Backoff spaces the attempts of one write: with these settings a write
// that keeps failing waits up to 50 ms, 100 ms, then 200 ms between its
// four attempts, each wait drawn at random below its cap so that ledgers
// retrying together spread out, and cut short when the context ends.
func ExampleBackoff() {
	opts := ledger.Options{
		Actor:      "app-1",
		RetryCount: 3,
		Backoff:    ledger.Backoff{Initial: 50 * time.Millisecond, Max: 200 * time.Millisecond},
	}
	l, err := ledger.New(memory.NewSiblings(), "wallet-1", opts)
	fmt.Println(err)
	r, err := l.Credit(context.Background(), "deposit-1", 100)
	fmt.Println(r.Outcome, r.Attempts, err)
	// Output:
	// <nil>
	// applied 1 <nil>
}

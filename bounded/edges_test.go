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

// A write that may have landed stays ambiguous to its caller whatever ends
// the call afterwards: the context ending before the retry's fetch (edge
// hole 5), or a put error the store did not classify (hole 8), which is
// treated as ambiguous and retried.
func TestAccountAmbiguityIsKept(t *testing.T) {
	t.Run("context ends before the retry's fetch", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		fetches := 0
		fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{
			Policy: faulty.Only(faulty.Script(faulty.LoseAck), faulty.MethodPut),
			Hook: func(_ context.Context, c faulty.Call, after bool) error {
				if after || c.Method != faulty.MethodFetch || bounded.IsRecordKey(c.Key) {
					return nil
				}
				if fetches++; fetches == 2 {
					cancel() // as the retry's fetch starts
					return context.Canceled
				}
				return nil
			},
		})
		a, err := bounded.Open(fs, "k", bounded.AccountOptions{Actor: "a", Backoff: bounded.Backoff{Initial: -1}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.Credit(ctx, "x", 5)
		if !errors.Is(err, crdt.ErrAmbiguousWrite) || !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want an ambiguous write that also reports the cancellation", err)
		}
		v, err := a.Value(context.Background())
		if err != nil || v != 5 {
			t.Fatalf("value %d, %v; want 5 (x landed)", v, err)
		}
	})
	t.Run("unclassified put error", func(t *testing.T) {
		ctx := context.Background()
		fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{
			Policy: faulty.Only(faulty.Script(faulty.Unclassified), faulty.MethodPut),
		})
		a, err := bounded.Open(fs, "k", bounded.AccountOptions{Actor: "a", Backoff: bounded.Backoff{Initial: -1}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := a.Credit(ctx, "x", 5)
		if err != nil || !r.Landed || r.Attempts != 2 {
			t.Fatalf("%+v, %v: want landed by the second attempt", r, err)
		}
		b, err := bounded.Open(fs, "k", bounded.AccountOptions{Actor: "b"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Credit(ctx, "x", 5); err != nil {
			t.Fatal(err)
		}
		v, err := b.Value(ctx)
		if err != nil || v != 5 {
			t.Fatalf("value %d, %v; want 5, counted once", v, err)
		}
	})
}

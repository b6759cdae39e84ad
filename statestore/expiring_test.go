package statestore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/statestore"
)

// expiringStore says its values expire a day after their Put.
type expiringStore struct{ *memory.Siblings }

func (expiringStore) TTL() time.Duration { return 24 * time.Hour }

// TestRefusesAnExpiringStore: Save and Update refuse a store whose values
// expire (an idle counter would vanish) and write nothing.
func TestRefusesAnExpiringStore(t *testing.T) {
	ctx := context.Background()
	st := expiringStore{memory.NewSiblings()}
	c := gcounter.New()
	if err := c.Increment("a", 1); err != nil {
		t.Fatal(err)
	}
	if err := statestore.Save(ctx, st, "k", "a", c); !errors.Is(err, crdt.ErrInvalidConfig) {
		t.Fatalf("Save: %v", err)
	}
	_, err := statestore.Update(ctx, st, "k", "a", func(c *gcounter.Counter) error { return c.Increment("a", 1) })
	if !errors.Is(err, crdt.ErrInvalidConfig) {
		t.Fatalf("Update: %v", err)
	}
	if n := st.Count("k"); n != 0 {
		t.Fatalf("%d values stored", n)
	}
}

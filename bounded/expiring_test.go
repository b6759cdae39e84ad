package bounded_test

import (
	"errors"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
)

// expiringStore says its values expire a day after their Put.
type expiringStore struct{ *memory.Siblings }

func (expiringStore) TTL() time.Duration { return 24 * time.Hour }

// TestOpenRefusesAnExpiringStore: an Account's state and records share
// its store, and its state must not expire from an idle key.
func TestOpenRefusesAnExpiringStore(t *testing.T) {
	if _, err := bounded.Open(expiringStore{memory.NewSiblings()}, "k", bounded.AccountOptions{Actor: "a"}); !errors.Is(err, crdt.ErrInvalidConfig) {
		t.Fatalf("Open: %v", err)
	}
}

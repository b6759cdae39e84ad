package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// expiring is a memory store that says its values expire after ttl.
type expiring struct {
	*memory.Siblings
	ttl time.Duration
}

func (e expiring) TTL() time.Duration { return e.ttl }

// TestCheckKeeps: a store that says a positive TTL is refused for counter
// state; one without the capability, or saying 0 or less, keeps values
// for good.
func TestCheckKeeps(t *testing.T) {
	for _, tc := range []struct {
		st   store.Siblings
		ttl  time.Duration
		keep bool
	}{
		{memory.NewSiblings(), 0, true},
		{expiring{memory.NewSiblings(), 0}, 0, true},
		{expiring{memory.NewSiblings(), -time.Second}, 0, true},
		{expiring{memory.NewSiblings(), time.Nanosecond}, time.Nanosecond, false},
		{expiring{memory.NewSiblings(), 25 * time.Hour}, 25 * time.Hour, false},
	} {
		if got := store.TTL(tc.st); got != tc.ttl {
			t.Fatalf("TTL of %T: %v, want %v", tc.st, got, tc.ttl)
		}
		err := store.CheckKeeps(tc.st, "states")
		if tc.keep != (err == nil) || err != nil && !errors.Is(err, crdt.ErrInvalidConfig) {
			t.Fatalf("CheckKeeps with TTL %v: %v", tc.ttl, err)
		}
	}
}

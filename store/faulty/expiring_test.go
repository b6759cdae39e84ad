package faulty_test

import (
	"errors"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

// expiringStore is a memory store that says its values expire after ttl
// (store.Expiring).
type expiringStore struct {
	*memory.Siblings
	ttl time.Duration
}

func (e expiringStore) TTL() time.Duration { return e.ttl }

// TestSiblingsKeepsTTL: the wrapper, and its Store() with or without
// Delete, report the wrapped store's TTL, so a ledger refuses an expiring
// store for its accounts through it as it refuses the store itself; a
// store that keeps values for good stays accepted.
func TestSiblingsKeepsTTL(t *testing.T) {
	ttl := 48 * time.Hour
	for _, tc := range []struct {
		name  string
		inner store.Siblings
		ttl   time.Duration
	}{
		{"for good", memory.NewSiblings(), 0},
		{"for good, no delete", struct{ store.Siblings }{memory.NewSiblings()}, 0},
		{"expiring", expiringStore{memory.NewSiblings(), ttl}, ttl},
		{"expiring, no delete", struct {
			store.Siblings
			store.Expiring
		}{memory.NewSiblings(), expiringStore{nil, ttl}}, ttl},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := faulty.NewSiblings(tc.inner, faulty.Options{})
			for _, st := range []store.Siblings{f, f.Store()} {
				if got := store.TTL(st); got != tc.ttl {
					t.Fatalf("TTL of %T: %v, want %v", st, got, tc.ttl)
				}
				_, err := ledger.New(st, "acct", ledger.Options{Actor: "a"})
				if refused := errors.Is(err, crdt.ErrInvalidConfig); refused != (tc.ttl > 0) || !refused && err != nil {
					t.Fatalf("ledger.New on %T: %v", st, err)
				}
			}
		})
	}
}

package modelcheck

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/modelcheck/internal/mc"
	"github.com/counterkit/counterkit/store"
)

// The checker catches broken variants: stores that break a rule of
// store.Siblings the drivers rely on, and a client that misreports an
// outcome. Each must make the search find a violation.

// lwwStore supersedes every sibling on each Put, whatever the token says
// (last write wins): concurrent writes are lost.
type lwwStore struct{ store.Siblings }

func (s lwwStore) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	_, tok, err := s.Siblings.Fetch(ctx, key)
	if err != nil {
		return err
	}
	return s.Siblings.Put(ctx, key, actor, value, tok)
}

// dupStore puts every value twice, the second time with no token, so that
// every write leaves a second sibling of itself, and drops the second Put
// of the run while acknowledging it.
type dupStore struct {
	store.Siblings
	puts *int
}

func (s dupStore) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	*s.puts++
	if *s.puts == 2 {
		return nil // acknowledged, never written
	}
	if err := s.Siblings.Put(ctx, key, actor, value, token); err != nil {
		return err
	}
	return s.Siblings.Put(ctx, key, actor, value, nil)
}

// refusedStore answers a write that landed as refused.
type refusedStore struct{ store.Siblings }

func (s refusedStore) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	err := s.Siblings.Put(ctx, key, actor, value, token)
	if errors.Is(err, crdt.ErrAmbiguousWrite) {
		return fmt.Errorf("broken: %w", crdt.ErrUnavailable)
	}
	return err
}

func TestCatchesBrokenVariants(t *testing.T) {
	for _, tc := range []struct {
		name string
		wrap func(w *mc.World) store.Siblings
	}{
		{"last-write-wins store", func(w *mc.World) store.Siblings { return lwwStore{w.Store} }},
		{"store that duplicates a put and acknowledges a dropped one", func(w *mc.World) store.Siblings { return dupStore{w.Store, new(int)} }},
		{"store that reports an ambiguous write as refused", func(w *mc.World) store.Siblings { return refusedStore{w.Store} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if findViolation(t, retryScopeOn("broken-ledger", tc.wrap)) == nil {
				t.Error("the checker found no violation with ledgers")
			}
			if findViolation(t, boundedScopeOn("broken-bounded", tc.wrap)) == nil {
				t.Error("the checker found no violation with bounded accounts")
			}
		})
	}
}

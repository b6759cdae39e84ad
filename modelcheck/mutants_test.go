package modelcheck

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
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

// recordDropStore acknowledges every Put of a transaction record and
// writes none.
type recordDropStore struct{ store.Siblings }

func (s recordDropStore) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	if ledger.IsRecordKey(key) {
		return nil
	}
	return s.Siblings.Put(ctx, key, actor, value, token)
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

// TestCatchesBrokenWindows: ledgers whose retry window is not the stated
// one, and ledgers that never retire.
func TestCatchesBrokenWindows(t *testing.T) {
	day := mc.DefaultRetryWindow
	for _, s := range []mc.Scope{
		// An hour's window where a day is stated, a retry two hours on:
		// untimed, applied again; timed, refused.
		afterWindowScope("broken-short-window", false, time.Hour, 2*time.Hour),
		afterWindowScope("broken-short-window-timed", true, time.Hour, 2*time.Hour),
		// Two days' window where a day is stated: a timed retry a day and
		// an hour on is answered, not refused.
		afterWindowScope("broken-long-window-timed", true, 2*day, day+time.Hour),
		// RetireAfter negative: idle incarnations are never retired.
		retireScopeOf("broken-never-retires", patient, -1, nil),
		// A store that acknowledges transaction records and drops them:
		// a retry after a retirement is applied again.
		retireScopeOf("broken-records-dropped", late, time.Hour, func(w *mc.World) store.Siblings { return recordDropStore{w.Store} }),
	} {
		t.Run(s.Name, func(t *testing.T) {
			if findViolation(t, s) == nil {
				t.Error("the checker found no violation")
			}
		})
	}
}

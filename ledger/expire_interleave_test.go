package ledger_test

import (
	"context"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/ledger/ledgertest"
	"github.com/counterkit/counterkit/store"
)

// freshTokenDelete is a broken store: its Delete ignores the token it is
// given and deletes whatever a new Fetch finds, a record written since the
// sweep's read included.
type freshTokenDelete struct{ ledgertest.SweepStore }

func (s freshTokenDelete) Delete(ctx context.Context, key string, _ store.Token) error {
	_, tok, err := s.SweepStore.Fetch(ctx, key)
	if err != nil {
		return err
	}
	return s.SweepStore.Delete(ctx, key, tok)
}

// TestExpireInterleavingsCatchAnUntokenedDelete: every store runs
// ledgertest's ExpireRecordsEveryInterleaving (package conformance); on
// the memory store it passes, and a sweep whose Delete ignores the read's
// token fails some placement past the window.
func TestExpireInterleavingsCatchAnUntokenedDelete(t *testing.T) {
	if f := ledgertest.ExpireInterleavings(t, memory.NewSiblings(), "acct", nil); len(f) > 0 {
		t.Fatalf("%d placements failed, the first: %s", len(f), f[0])
	}
	f := ledgertest.ExpireInterleavings(t, memory.NewSiblings(), "acct", func(s ledgertest.SweepStore) ledgertest.SweepStore { return freshTokenDelete{s} })
	if len(f) == 0 {
		t.Fatal("every placement passed with a Delete that ignores its token")
	}
	t.Logf("%d placements caught, the first: %s", len(f), f[0])
}

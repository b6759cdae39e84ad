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

// freshTokenBatch is freshTokenDelete for a store that deletes in
// batches.
type freshTokenBatch struct{ *memory.Siblings }

func (s freshTokenBatch) DeleteBatch(ctx context.Context, keys []string, _ []store.Token) error {
	fresh := make([]store.Token, len(keys))
	for i, k := range keys {
		_, tok, err := s.Fetch(ctx, k)
		if err != nil {
			return err
		}
		fresh[i] = tok
	}
	return s.Siblings.DeleteBatch(ctx, keys, fresh)
}

// TestExpireInterleavingsCatchAnUntokenedDelete: every store runs
// ledgertest's ExpireRecordsEveryInterleaving (package conformance); on
// the memory store it passes (batch deletes), and a sweep whose Delete or
// DeleteBatch ignores the read's token fails some placement past the
// window.
func TestExpireInterleavingsCatchAnUntokenedDelete(t *testing.T) {
	if f := ledgertest.ExpireInterleavings(t, memory.NewSiblings(), "acct", nil); len(f) > 0 {
		t.Fatalf("%d placements failed, the first: %s", len(f), f[0])
	}
	for name, broken := range map[string]func(ledgertest.SweepStore) ledgertest.SweepStore{
		"Delete":      func(s ledgertest.SweepStore) ledgertest.SweepStore { return freshTokenDelete{s} },
		"DeleteBatch": func(s ledgertest.SweepStore) ledgertest.SweepStore { return freshTokenBatch{s.(*memory.Siblings)} },
	} {
		f := ledgertest.ExpireInterleavings(t, memory.NewSiblings(), "acct", broken)
		if len(f) == 0 {
			t.Fatalf("every placement passed with a %s that ignores its token", name)
		}
		t.Logf("%s: %d placements caught, the first: %s", name, len(f), f[0])
	}
}

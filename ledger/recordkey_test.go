package ledger_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestRecordKeysAreNotAccounts: a key in the records' space is refused as
// a ledger, Book or Sharded key, so that no write there can take the
// place of another account's record (which would fail that transaction's
// every call).
func TestRecordKeysAreNotAccounts(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	victim := ledger.RecordKey("alice", "order-1")
	opts := ledger.Options{Actor: "svc"}

	_, err := ledger.New(st, victim, opts)
	require.ErrorIs(t, err, crdt.ErrInvalidKey)
	_, err = ledger.NewSharded(st, victim, 2, opts)
	require.ErrorIs(t, err, crdt.ErrInvalidKey)
	b, err := ledger.NewBook(st, ledger.BookOptions{Options: opts})
	require.NoError(t, err)
	_, err = b.Credit(ctx, victim, "x", 5)
	require.ErrorIs(t, err, crdt.ErrInvalidKey)
	_, err = b.Value(ctx, victim)
	require.ErrorIs(t, err, crdt.ErrInvalidKey)
	vals, _, err := st.Fetch(ctx, victim)
	require.NoError(t, err)
	require.Empty(t, vals, "nothing written under the record's key")

	res, err := b.Credit(ctx, "alice", "order-1", 100)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, res.Outcome)
	res, err = b.Credit(ctx, "alice", "order-1", 100)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, res.Outcome)
}

package cassandra

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

func TestLedgerPutStatements(t *testing.T) {
	db := unitDB(t)
	l := db.Ledger()
	v := ledgerEnc(t, "b", "t1")

	s, err := l.putStmts("k", "b", v, nil)
	require.NoError(t, err)
	require.Len(t, s, 1, "a nil token supersedes nothing: one INSERT")
	require.Equal(t, l.rows.insertCQL(), s[0].cql)

	far := int64(math.MaxInt64 / 2) // a row written by a clock far ahead
	tok, err := encodeToken([]tokenEntry{{"c", far}, {"a", 5}, {"b", 7}})
	require.NoError(t, err)
	s, err = l.putStmts("k", "b", v, tok)
	require.NoError(t, err)
	require.Len(t, s, 3, "the insert and one delete per other actor in the token")
	require.Equal(t, []any{"k", "b", v}, s[0].args[:3])
	require.Greater(t, s[0].args[3].(int64), far, "written above every timestamp in the token")
	require.Equal(t, stmt{cql: l.rows.deleteCQL(), args: []any{int64(5), "k", "a"}, key: "k"}, s[1], "a's row as of the version read")
	require.Equal(t, stmt{cql: l.rows.deleteCQL(), args: []any{far, "k", "c"}, key: "k"}, s[2])

	for _, c := range []struct {
		name  string
		key   string
		actor crdt.ActorID
		value []byte
		token ledger.Token
		want  error
	}{
		{"bad key", "", "a", v, nil, crdt.ErrInvalidIdentifier},
		{"bad actor", "k", "a\x00", v, nil, crdt.ErrInvalidActor},
		{"empty value", "k", "a", nil, nil, crdt.ErrCorruptEncoding},
		{"garbage value", "k", "a", []byte("one"), nil, crdt.ErrCorruptEncoding},
		{"gcounter value", "k", "a", gEnc(t, map[crdt.ActorID]int64{"a": 1}), nil, crdt.ErrTypeMismatch},
		{"oversized value", "k", "a", make([]byte, maxStateBytes+1), nil, crdt.ErrTooLarge},
		{"truncated value", "k", "a", v[:len(v)-1], nil, crdt.ErrCorruptEncoding},
		{"bad token", "k", "a", v, ledger.Token{1, 2, 3}, crdt.ErrCorruptEncoding},
	} {
		_, err := l.putStmts(c.key, c.actor, c.value, c.token)
		require.ErrorIs(t, err, c.want, c.name)
	}

	tx := db.Tx()
	require.ErrorIs(t, tx.PutLedger("k", "b", []byte("one"), tok), crdt.ErrCorruptEncoding)
	require.Zero(t, tx.Len(), "a refused put leaves the Tx unchanged")
	require.NoError(t, tx.PutLedger("k", "b", v, tok))
	require.Equal(t, 3, tx.Len())
}

// TestLedgerCosts: Fetch is one read, Put one write (one statement or one
// single-partition batch), whatever the number of siblings.
func TestLedgerCosts(t *testing.T) {
	ctx := context.Background()
	m := newRowModel()
	l := modelLedger(unitDB(t), m)
	for _, a := range []crdt.ActorID{"a", "b", "c"} {
		require.NoError(t, l.Put(ctx, "k", a, ledgerEnc(t, a, crdt.TxnID(a)), nil))
	}
	r0, w0 := m.counts()
	sibs, tok, err := l.Fetch(ctx, "k")
	require.NoError(t, err)
	require.Len(t, sibs, 3)
	merged := ledgerEnc(t, "a", "a", "b", "c")
	require.NoError(t, l.Put(ctx, "k", "a", merged, tok))
	r1, w1 := m.counts()
	require.Equal(t, 1, r1-r0, "fetch: one read")
	require.Equal(t, 1, w1-w0, "put: one write")
	sibs, _, err = l.Fetch(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, [][]byte{merged}, sibs)

	// A canceled context: nothing sent, the error wraps the context's.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, l.Put(cctx, "k", "a", merged, nil), context.Canceled)
	_, _, err = l.Fetch(cctx, "k")
	require.ErrorIs(t, err, context.Canceled)
	r2, w2 := m.counts()
	require.Equal(t, r1+1, r2)
	require.Equal(t, w1, w2)
}

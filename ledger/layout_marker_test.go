package ledger_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// A Sharded account's key holds its layout marker, which LayoutMarker
// recognises and a plain Ledger refuses as corrupt, naming it, with
// nothing written.
func TestLayoutMarker(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	s, err := ledger.NewSharded(st, "hot", 2, ledger.Options{Actor: "a"})
	require.NoError(t, err)
	_, err = s.Credit(ctx, "t1", 5)
	require.NoError(t, err)
	vals, _, err := st.Fetch(ctx, "hot")
	require.NoError(t, err)
	require.Len(t, vals, 1)
	n, ok := ledger.LayoutMarker(vals[0])
	require.True(t, ok)
	require.Equal(t, 2, n)

	sub, _, err := st.Fetch(ctx, s.Key(s.Shard("t1")))
	require.NoError(t, err)
	others := append(sub, []byte("counterkit.ledger.sharded/1 shards=0"), []byte("counterkit.ledger.sharded/1 shards=02"),
		[]byte("counterkit.ledger.sharded/1 shards=1025"), []byte("counterkit.ledger.sharded/1 shards="), nil)
	for _, v := range others {
		_, ok := ledger.LayoutMarker(v)
		require.False(t, ok, "%q", v)
	}

	l, err := ledger.New(st, "hot", ledger.Options{Actor: "b"})
	require.NoError(t, err)
	_, err = l.Credit(ctx, "t2", 1)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	require.ErrorContains(t, err, "layout marker of a Sharded account of 2 sub-keys")
	after, _, err := st.Fetch(ctx, "hot")
	require.NoError(t, err)
	require.Equal(t, vals, after)
}

package riak_test

import (
	"context"
	"errors"
	"testing"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// storeForeign writes value under key as another client does: with
// content type application/json and no vclock, so it becomes a sibling of
// whatever the key holds.
func storeForeign(t *testing.T, cl *riakc.Cluster, key, value string) {
	t.Helper()
	cmd, err := riakc.NewStoreValueCommandBuilder().WithBucketType(fakeType).WithBucket(testBucket).WithKey(key).
		WithContent(&riakc.Object{Value: []byte(value), ContentType: "application/json"}).Build()
	require.NoError(t, err)
	require.NoError(t, cl.Execute(cmd))
}

// dropCorrupt is the store `counterkit find ledger -drop-corrupt` runs the
// ledger on (ledger/doc.go, "Caveats"): its Fetch leaves out the siblings
// that are not well-formed ledger states and keeps the token, which covers
// them, so the ledger's write replaces them.
type dropCorrupt struct{ store.Siblings }

func (d dropCorrupt) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	values, tok, err := d.Siblings.Fetch(ctx, key)
	var kept [][]byte
	for _, v := range values {
		if !errors.Is(decodeLedger(v), crdt.ErrCorruptEncoding) {
			kept = append(kept, v)
		}
	}
	return kept, tok, err
}

// decodeLedger decodes v as a ledger state.
func decodeLedger(v []byte) error {
	c, err := tpncounter.New(tpncounter.Options{})
	if err != nil {
		return err
	}
	return c.UnmarshalBinary(v)
}

// TestForeignSiblingIsRepairable: a sibling of another content type,
// written by another client, is never taken for a counter, and does not
// take the key hostage either. Fetch hands it up, with a token covering
// it, as a value naming its content type that every counter decoder
// refuses with crdt.ErrCorruptEncoding; the ledger stops on it as on a
// corrupt sibling, and the documented repair (find ledger -drop-corrupt)
// writes over it. A Delete or Put with its token replaces it too.
func TestForeignSiblingIsRepairable(t *testing.T) {
	srv, cl := fakeCluster(t)
	s := newStore(t, cl, riak.Options{})
	key := uniqueKey("foreign")
	alice, err := ledger.New(s, key, ledger.Options{Actor: "alice"})
	require.NoError(t, err)
	_, err = alice.Credit(ctx, "txn-1", 10)
	require.NoError(t, err)
	storeForeign(t, cl, key, "{}")
	n, _ := srv.Siblings(fakeType, testBucket, key)
	require.Equal(t, 2, n)

	sibs, tok, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	require.NotNil(t, tok)
	require.Len(t, sibs, 2)
	var stand []byte
	for _, v := range sibs {
		if err := decodeLedger(v); err != nil {
			require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
			require.Nil(t, stand, "two siblings do not decode")
			stand = v
		}
	}
	require.NotNil(t, stand, "the foreign sibling was taken for a ledger state")
	require.Contains(t, string(stand), `sibling of content type "application/json", not `+riak.ContentType+" (2 bytes, sha256 ")
	for name, decode := range map[string]func([]byte) error{
		"gcounter":  gcounter.New().UnmarshalBinary,
		"pncounter": pncounter.New().UnmarshalBinary,
		"bounded":   func(b []byte) error { c, _ := bounded.New(bounded.Options{}); return c.UnmarshalBinary(b) },
	} {
		require.ErrorIs(t, decode(stand), crdt.ErrCorruptEncoding, name)
	}

	// The ledger stops on it, with the sentinel of a corrupt sibling.
	_, err = alice.Credit(ctx, "txn-2", 5)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	_, err = alice.Value(ctx)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)

	// The repair writes the merge of the other siblings over it.
	repair, err := ledger.New(dropCorrupt{s}, key, ledger.Options{Actor: "repair"})
	require.NoError(t, err)
	c, err := repair.Find(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(10), c.Value())
	n, _ = srv.Siblings(fakeType, testBucket, key)
	require.Equal(t, 1, n, "the foreign sibling survived the repair")
	_, err = alice.Credit(ctx, "txn-2", 5)
	require.NoError(t, err)
	v, err := alice.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(15), v)

	// A Delete with the token removes a foreign sibling, and a Put with it
	// replaces one.
	gone := uniqueKey("foreign-delete")
	storeForeign(t, cl, gone, `{"a":1}`)
	sibs, tok, err = s.Fetch(ctx, gone)
	require.NoError(t, err)
	require.Len(t, sibs, 1)
	require.NoError(t, s.Delete(ctx, gone, tok))
	sibs, _, err = s.Fetch(ctx, gone)
	require.NoError(t, err)
	require.Empty(t, sibs)

	over := uniqueKey("foreign-put")
	storeForeign(t, cl, over, "[]")
	_, tok, err = s.Fetch(ctx, over)
	require.NoError(t, err)
	require.NoError(t, s.Put(ctx, over, "a", []byte("v"), tok))
	sibs, _, err = s.Fetch(ctx, over)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("v")}, sibs)
}

package riak_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/crdt"
)

// Riak lists a key's siblings sorted by value (riak_object:compare/2), not
// in the order they were written, with and without dotted version
// vectors: the double does too, so a test that depends on the order fails
// on it as on a server.
func TestSiblingsInRiaksOrder(t *testing.T) {
	ctx := context.Background()
	for name, open := range map[string]func(t *testing.T) (*riak.Siblings, error){
		"created type": func(t *testing.T) (*riak.Siblings, error) {
			_, cl := fakeCluster(t)
			return riak.NewSiblings(ctx, cl, riak.Options{BucketType: fakeType, Bucket: testBucket})
		},
		"default type": func(t *testing.T) (*riak.Siblings, error) {
			_, cl := fakeDefaultTypeCluster(t)
			return riak.NewSiblings(ctx, cl, defaultTypeOptions)
		},
	} {
		t.Run(name, func(t *testing.T) {
			st, err := open(t)
			require.NoError(t, err)
			for _, w := range []struct{ actor, value string }{{"a", "zz"}, {"b", "mm"}, {"c", "aa"}} {
				require.NoError(t, st.Put(ctx, "k", crdt.ActorID("writer-"+w.actor), []byte(w.value), nil)) // blind: a sibling each
			}
			vals, _, err := st.Fetch(ctx, "k")
			require.NoError(t, err)
			require.Equal(t, [][]byte{[]byte("aa"), []byte("mm"), []byte("zz")}, vals)
		})
	}
}

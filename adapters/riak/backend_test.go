package riak_test

import (
	"os"
	"testing"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
)

// backend is a place to run the same test: the test double always, a real
// Riak when RIAK_ADDR is set.
type backend struct {
	name string
	// open returns a cluster and a bucket configured for counterkit. Tests
	// use unique keys, so the bucket may be shared (on a real Riak every
	// bucket with its own properties is kept in the ring forever).
	open func(t testing.TB) (*riakc.Cluster, string)
}

var backends = []backend{
	{"fake", func(t testing.TB) (*riakc.Cluster, string) {
		_, cl := fakeCluster(t)
		return cl, testBucket
	}},
	{"riak", func(t testing.TB) (*riakc.Cluster, string) {
		return realCluster(t), testBucket
	}},
}

// eachBackend runs fn as a subtest per backend; the real-Riak subtest
// skips without RIAK_ADDR.
func eachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			if b.name == "riak" && os.Getenv(EnvRiakAddr) == "" {
				t.Skipf("%s is not set: no real Riak to test against (the FakeServer subtest covers the adapter in CI)", EnvRiakAddr)
			}
			fn(t, b)
		})
	}
}

// forEachBackend is eachBackend with a cluster and a fresh bucket opened.
func forEachBackend(t *testing.T, fn func(t *testing.T, cl *riakc.Cluster, bucket string)) {
	eachBackend(t, func(t *testing.T, b backend) {
		cl, bucket := b.open(t)
		fn(t, cl, bucket)
	})
}

func TestBackendSiblingsCollapse(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cl *riakc.Cluster, bucket string) {
		s := newStore(t, cl, riak.Options{Bucket: bucket})
		key := uniqueKey("sib")
		sibs, tok, err := s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Empty(t, sibs)
		require.NoError(t, s.Put(ctx, key, "a", []byte("base"), tok))
		_, tok, err = s.Fetch(ctx, key)
		require.NoError(t, err)
		require.NoError(t, s.Put(ctx, key, "a", []byte("a"), tok))
		require.NoError(t, s.Put(ctx, key, "b", []byte("b"), tok))
		sibs, tok, err = s.Fetch(ctx, key)
		require.NoError(t, err)
		require.ElementsMatch(t, [][]byte{[]byte("a"), []byte("b")}, sibs)
		require.NoError(t, s.Put(ctx, key, "a", []byte("ab"), tok))
		sibs, tok, err = s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Equal(t, [][]byte{[]byte("ab")}, sibs)
		require.NoError(t, s.Delete(ctx, key, tok))
	})
}

func TestBackendDeleteKeepsRacingWrite(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cl *riakc.Cluster, bucket string) {
		s := newStore(t, cl, riak.Options{Bucket: bucket})
		key := uniqueKey("del")
		require.NoError(t, s.Put(ctx, key, "a", []byte("v1"), nil))
		_, tok, err := s.Fetch(ctx, key)
		require.NoError(t, err)
		require.NoError(t, s.Put(ctx, key, "b", []byte("racing"), tok))
		require.NoError(t, s.Delete(ctx, key, tok))
		sibs, tok, err := s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Equal(t, [][]byte{[]byte("racing")}, sibs)
		require.NoError(t, s.Delete(ctx, key, tok))
		sibs, _, err = s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Empty(t, sibs)
	})
}

func TestBackendCheckBucket(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cl *riakc.Cluster, _ string) {
		// A bucket of its own: this test changes its properties.
		bucket := "counterkit-test-props"
		require.NoError(t, riak.ConfigureBucket(ctx, cl, "", bucket))
		require.NoError(t, riak.CheckBucket(ctx, cl, "", bucket))
		// Flip the bucket to last_write_wins and back.
		cmd, err := riakc.NewStoreBucketPropsCommandBuilder().WithBucket(bucket).WithLastWriteWins(true).Build()
		require.NoError(t, err)
		require.NoError(t, cl.Execute(cmd))
		require.Error(t, riak.CheckBucket(ctx, cl, "", bucket))
		require.NoError(t, riak.ConfigureBucket(ctx, cl, "", bucket))
		require.NoError(t, riak.CheckBucket(ctx, cl, "", bucket))
	})
}

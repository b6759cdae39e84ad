package riak_test

import (
	"context"
	"errors"
	"testing"
	"time"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
	"github.com/counterkit/counterkit/crdt"
)

// A token is bound to the key and bucket its Fetch read: another key's
// vclock may cover values of this key that its caller never read, and a
// Put or Delete with it would drop them. Put and Delete refuse it before
// sending anything, in both bucket types, and the key keeps what it held.
func TestTokenOfAnotherKeyOrBucket(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cluster func(testing.TB, ...riaktest.Options) (*riaktest.FakeServer, *riakc.Cluster)
		opts    riak.Options
	}{
		{"dvv", fakeCluster, riak.Options{}},
		{"default type", fakeDefaultTypeCluster, defaultTypeOptions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, cl := tc.cluster(t)
			s := newStore(t, cl, tc.opts)
			other := tc.opts
			other.Bucket = "counterkit-other"
			if other.BucketType == "default" {
				require.NoError(t, riak.ConfigureBucket(ctx, cl, "", other.Bucket))
			}
			s2 := newStore(t, cl, other)

			a, b := uniqueKey("a"), uniqueKey("b")
			require.NoError(t, s.Put(ctx, b, "w1", []byte{0x91, 1}, nil))
			require.NoError(t, s2.Put(ctx, b, "w1", []byte{0x91, 2}, nil))
			for v := range byte(3) {
				require.NoError(t, s.Put(ctx, a, "w2", []byte{0x91, 10 + v}, nil))
			}
			_, tokA, err := s.Fetch(ctx, a)
			require.NoError(t, err)
			_, tokB2, err := s2.Fetch(ctx, b)
			require.NoError(t, err)
			before, tokB, err := s.Fetch(ctx, b)
			require.NoError(t, err)

			srv.ResetRequests()
			for name, call := range map[string]func() error{
				"put, another key's token":       func() error { return s.Put(ctx, b, "w3", []byte{0x91, 9}, tokA) },
				"delete, another key's token":    func() error { return s.Delete(ctx, b, tokA) },
				"put, another bucket's token":    func() error { return s.Put(ctx, b, "w3", []byte{0x91, 9}, tokB2) },
				"delete, another bucket's token": func() error { return s.Delete(ctx, b, tokB2) },
				"put, this bucket's token there": func() error { return s2.Put(ctx, b, "w3", []byte{0x91, 9}, tokB) },
			} {
				err := call()
				require.ErrorIs(t, err, crdt.ErrCorruptEncoding, name)
				require.ErrorContains(t, err, "another key or bucket", name)
			}
			require.Zero(t, srv.Requests(riaktest.OpPut)+srv.Requests(riaktest.OpDelete), "nothing sent")
			after, _, err := s.Fetch(ctx, b)
			require.NoError(t, err)
			require.Equal(t, before, after)

			// The key's own token still works, and drops what it covers.
			require.NoError(t, s.Put(ctx, b, "w3", []byte{0x91, 9}, tokB))
			after, _, err = s.Fetch(ctx, b)
			require.NoError(t, err)
			require.Equal(t, [][]byte{{0x91, 9}}, after)
		})
	}
}

// A stopped cluster sends nothing: every call is unavailable, none
// ambiguous, and a nil cluster is refused as a configuration error.
func TestStoppedOrNilCluster(t *testing.T) {
	srv, cl := fakeCluster(t)
	s := newStore(t, cl, riak.Options{RetryBackoff: time.Millisecond})
	key := uniqueKey("stopped")
	require.NoError(t, s.Put(ctx, key, "a", []byte{0x91, 1}, nil))
	_, tok, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	require.NoError(t, cl.Stop())
	srv.ResetRequests()
	for name, call := range map[string]func() error{
		"put":    func() error { return s.Put(ctx, key, "a", []byte{0x91, 2}, tok) },
		"delete": func() error { return s.Delete(ctx, key, tok) },
		"fetch":  func() error { _, _, err := s.Fetch(ctx, key); return err },
		"check":  func() error { return riak.CheckBucket(ctx, cl, fakeType, testBucket) },
		"configure": func() error {
			return riak.ConfigureBucket(ctx, cl, fakeType, testBucket)
		},
	} {
		err := call()
		require.ErrorIs(t, err, crdt.ErrUnavailable, name)
		require.NotErrorIs(t, err, crdt.ErrAmbiguousWrite, name)
	}
	require.Zero(t, srv.Requests(riaktest.OpPut)+srv.Requests(riaktest.OpDelete)+srv.Requests(riaktest.OpGet))

	for name, call := range map[string]func() error{
		"check":     func() error { return riak.CheckBucket(ctx, nil, fakeType, testBucket) },
		"configure": func() error { return riak.ConfigureBucket(ctx, nil, fakeType, testBucket) },
		"new":       func() error { _, err := riak.NewSiblings(ctx, nil, riak.Options{Bucket: testBucket}); return err },
	} {
		require.ErrorIs(t, call(), crdt.ErrInvalidConfig, name)
	}
}

// NewCluster refuses what no cluster can be built from, without dialling.
func TestNewClusterRefusesBadInput(t *testing.T) {
	srv := riaktest.Start(t)
	for name, c := range map[string]struct {
		timeout time.Duration
		addrs   []string
	}{
		"no address":       {time.Second, nil},
		"empty address":    {time.Second, []string{""}},
		"one empty":        {time.Second, []string{srv.Addr(), ""}},
		"not an address":   {time.Second, []string{"not an address"}},
		"negative timeout": {-time.Second, []string{srv.Addr()}},
	} {
		cl, err := riak.NewCluster(context.Background(), c.timeout, c.addrs...)
		if err == nil {
			stopCluster(cl)
		}
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, name)
		require.False(t, errors.Is(err, crdt.ErrUnavailable), name)
	}
	require.Zero(t, srv.Requests(riaktest.OpPing))
}

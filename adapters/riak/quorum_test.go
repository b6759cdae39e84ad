package riak_test

import (
	"testing"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/crdt"
)

// quorumBucket is the bucket whose n_val and quorums
// TestBackendQuorumAboveNVal changes; no other test uses it.
const quorumBucket = "counterkit-test-quorum"

// TestBackendQuorumAboveNVal: Riak refuses a request whose quorums ask for
// more vnodes than the bucket's n_val ("{n_val_violation,N}", riak_kv's
// get and put FSMs) before asking any vnode, the same on every resend:
// Siblings sends it once and reports crdt.ErrMisconfiguredStore. A delete
// writes its tombstone with the bucket's rw, not its w
// (riak_kv_delete), so a w above n_val refuses puts and not deletes.
// CheckBucket (NewSiblings) refuses such a bucket before any request.
// The bucket gets explicit quorums first, since a real Riak keeps them
// from the last run.
func TestBackendQuorumAboveNVal(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tg target) {
		typ := tg.opts.BucketType
		setProps := func(set func(b *riakc.StoreBucketPropsCommandBuilder)) {
			t.Helper()
			b := riakc.NewStoreBucketPropsCommandBuilder().WithBucketType(typ).WithBucket(quorumBucket)
			set(b)
			cmd, err := b.Build()
			require.NoError(t, err)
			require.NoError(t, tg.cl.Execute(cmd))
		}
		require.NoError(t, riak.ConfigureBucket(ctx, tg.cl, typ, quorumBucket))
		setProps(func(b *riakc.StoreBucketPropsCommandBuilder) {
			b.WithNVal(1).WithR(1).WithW(1).WithDw(1).WithRw(1).WithPr(0).WithPw(0)
		})
		opts := tg.opts
		opts.Bucket = quorumBucket
		s := newStore(t, tg.cl, opts)
		key := uniqueKey("quorum")
		requireRefused := func(err error, what string) {
			t.Helper()
			require.ErrorIs(t, err, crdt.ErrMisconfiguredStore, what)
			var re *riak.Error
			require.ErrorAs(t, err, &re)
			require.Equal(t, 1, re.Attempts, "%s: not resent", what)
			require.Equal(t, "{n_val_violation,1}", riakMessage(err), what)
		}

		require.NoError(t, s.Put(ctx, key, "a", []byte("v"), nil))
		_, tok, err := s.Fetch(ctx, key)
		require.NoError(t, err)

		setProps(func(b *riakc.StoreBucketPropsCommandBuilder) { b.WithW(2) })
		requireRefused(s.Put(ctx, key, "a", []byte("w"), tok), "put, w 2")
		sibs, _, err := s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Equal(t, [][]byte{[]byte("v")}, sibs, "the refused put wrote nothing")
		require.NoError(t, s.Delete(ctx, key, tok), "a delete writes with rw, 1")
		sibs, _, err = s.Fetch(ctx, key)
		require.NoError(t, err)
		require.Empty(t, sibs)

		setProps(func(b *riakc.StoreBucketPropsCommandBuilder) { b.WithR(2).WithRw(2) })
		_, _, err = s.Fetch(ctx, key)
		requireRefused(err, "fetch, r 2")
		requireRefused(s.Delete(ctx, key, tok), "delete, rw 2")

		// CheckBucket, and so NewSiblings, refuses such a bucket up front.
		err = riak.CheckBucket(ctx, tg.cl, typ, quorumBucket)
		require.ErrorIs(t, err, crdt.ErrMisconfiguredStore)
		for _, q := range []string{"r=2", "w=2", "rw=2"} {
			require.ErrorContains(t, err, q+" above n_val=1")
		}
		_, err = riak.NewSiblings(ctx, tg.cl, opts)
		require.ErrorIs(t, err, crdt.ErrMisconfiguredStore)
	})
}

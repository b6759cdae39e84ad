package riaktest_test

// Deletes as Riak KV 3.2 answers them. riak_kv_pb_object hands a delete
// without a vclock to riak_client:delete and one with a vclock to
// delete_vclock (an empty vclock being vclock:fresh(), which covers
// nothing); riak_kv_delete:delete/8 then
//
//	without a vclock: riak_client:get(Bucket, Key, ...)   % no deletedvclock
//	    {ok, OrigObj}    -> delete with riak_object:vclock(OrigObj)
//	    {error, notfound} -> {error, notfound}             % answered rpbdelresp
//	with a vclock:    Tombstone = riak_object:set_vclock(generate_tombstone(B, K), VClock),
//	                  riak_client:put(Tombstone, ...)      % no read first
//
// so a delete with a vclock writes a tombstone whatever is stored, and one
// without writes nothing where the get finds nothing live.

import (
	"testing"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"
)

// fetchDeletedVClock fetches key asking for a tombstone's vclock.
func fetchDeletedVClock(t *testing.T, cl *riakc.Cluster, key string) *riakc.FetchValueResponse {
	t.Helper()
	cmd, err := riakc.NewFetchValueCommandBuilder().WithBucketType(dvvType).WithBucket(bucket).
		WithKey(key).WithReturnDeletedVClock(true).Build()
	require.NoError(t, err)
	require.NoError(t, cl.Execute(cmd))
	return cmd.(*riakc.FetchValueCommand).Response
}

// TestDeleteWithVClockWhereNothingIsStored: a delete with a vclock of a
// key that holds nothing (never written, or reaped) still writes a
// tombstone, kept for delete_mode: a plain fetch says not found, one with
// deletedvclock returns the tombstone's vclock.
func TestDeleteWithVClockWhereNothingIsStored(t *testing.T) {
	srv := startDVV(t) // delete_mode 3 s: the tombstone stays for the test
	cl := client(t, srv)
	require.NoError(t, store(cl, dvvType, "other", "v", nil))
	vc := fetch(t, cl, dvvType, "other").VClock

	require.NoError(t, cl.Execute(deleteCmd(t, dvvType, "absent", vc)))
	n, _ := srv.Siblings(dvvType, bucket, "absent")
	require.Equal(t, 1, n, "a tombstone")
	require.True(t, fetch(t, cl, dvvType, "absent").IsNotFound)
	r := fetchDeletedVClock(t, cl, "absent")
	require.False(t, r.IsNotFound)
	require.NotEmpty(t, r.VClock)
	require.Len(t, r.Values, 1)
	require.True(t, r.Values[0].IsTombstone)
}

// TestDeleteWithoutVClockWritesNothingOverTombstones: a delete without a
// vclock reads the key first; a key holding only tombstones is not found
// to that read, so nothing is written: the tombstone and its vclock stay
// as they were. A key that was never written stays absent.
func TestDeleteWithoutVClockWritesNothingOverTombstones(t *testing.T) {
	srv := startDVV(t)
	cl := client(t, srv)
	require.NoError(t, store(cl, dvvType, "k", "v", nil))
	require.NoError(t, cl.Execute(deleteCmd(t, dvvType, "k", fetch(t, cl, dvvType, "k").VClock)))
	n, before := srv.Siblings(dvvType, bucket, "k")
	require.Equal(t, 1, n)

	require.NoError(t, cl.Execute(deleteCmd(t, dvvType, "k", nil)))
	n, after := srv.Siblings(dvvType, bucket, "k")
	require.Equal(t, 1, n)
	require.Equal(t, before, after, "no second tombstone was written")

	require.NoError(t, cl.Execute(deleteCmd(t, dvvType, "never", nil)))
	n, _ = srv.Siblings(dvvType, bucket, "never")
	require.Zero(t, n)
}

// TestDeleteWithEmptyVClockCoversNothing: a delete whose vclock field is
// present but empty writes a tombstone with Riak's fresh vclock, which
// covers no stored sibling: the value stays, beside the tombstone. A
// delete without the field (nil) reads the vclock first and removes it.
func TestDeleteWithEmptyVClockCoversNothing(t *testing.T) {
	srv := startDVV(t)
	cl := client(t, srv)
	require.NoError(t, store(cl, dvvType, "k", "v", nil))

	require.NoError(t, cl.Execute(deleteCmd(t, dvvType, "k", []byte{})))
	r := fetch(t, cl, dvvType, "k")
	require.Equal(t, []string{"v"}, values(r), "the value the empty vclock did not cover survives")
	require.Len(t, r.Values, 2, "beside the tombstone")

	require.NoError(t, cl.Execute(deleteCmd(t, dvvType, "k", nil)))
	require.True(t, fetch(t, cl, dvvType, "k").IsNotFound)
}

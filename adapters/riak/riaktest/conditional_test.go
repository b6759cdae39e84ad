package riaktest_test

// Conditional requests of Riak KV 3.2's protocol-buffers object service
// (riak_kv_pb_object:process/2, develop-3.2 branch), answered as Riak
// answers them. The adapter sends none of them (Siblings never sets
// if_not_modified, if_none_match or if_modified); the double answers them
// because it refuses what Riak refuses, with Riak's message.
//
// What Riak 3.2 does, from riak_kv_pb_object.erl:
//
//	process(#rpbputreq{...} = Req, State) when NotMod; NoneMatch ->
//	    Result = riak_client:get(B, K, GetOpts, C)       % no deletedvclock
//	    case Result of
//	        {ok, _} when NoneMatch -> {error, "match_found", State};
//	        {ok, O} when NotMod ->
//	            case erlify_rpbvc(PbVC) == riak_object:vclock(O) of
//	                true -> process(Req#rpbputreq{if_not_modified=undefined, ...});
//	                _ -> {error, "modified", State}
//	            end;
//	        {error, _} when NoneMatch -> process(...);
//	        {error, notfound} when NotMod -> {error, "notfound", State};
//
//	process(#rpbgetreq{if_modified=VClock, ...}) ->
//	    {ok, O} -> case erlify_rpbvc(VClock) == riak_object:vclock(O) of
//	                   true -> {reply, #rpbgetresp{unchanged = true}, State};
//
// A get of an object holding only tombstones (without deletedvclock) is
// {error, notfound}.

import (
	"errors"
	"testing"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak/riaktest"
)

func storeIfNotModified(cl *riakc.Cluster, key, value string, vclock []byte) error {
	cmd, err := riakc.NewStoreValueCommandBuilder().WithBucketType(dvvType).WithBucket(bucket).WithKey(key).
		WithIfNotModified(true).
		WithContent(&riakc.Object{Value: []byte(value), ContentType: "text/plain", VClock: vclock}).Build()
	if err != nil {
		return err
	}
	return cl.Execute(cmd)
}

func riakErrmsg(err error) string {
	var re riakc.RiakError
	if errors.As(unwrapClient(err), &re) {
		return re.Errmsg
	}
	return ""
}

// TestIfNotModifiedOnMissingKey: Riak refuses a put with
// if_not_modified on a key that does not exist with "notfound", not
// "modified".
func TestIfNotModifiedOnMissingKey(t *testing.T) {
	srv := startDVV(t)
	cl := client(t, srv)
	err := storeIfNotModified(cl, "absent", "v", nil)
	require.Equal(t, "notfound", riakErrmsg(err), "Riak 3.2 answers a conditional put on a missing key with \"notfound\": %v", err)
}

// TestIfNotModifiedOnTombstone: a key left with only tombstones (not
// yet reaped) is "not found" to Riak's get, so a put with
// if_not_modified, whatever vclock it carries, is refused ("notfound")
// and stores nothing, though the vclock equals the tombstone's.
func TestIfNotModifiedOnTombstone(t *testing.T) {
	srv := startDVV(t) // delete_mode 3 s: the tombstone stays for the test
	cl := client(t, srv)
	require.NoError(t, store(cl, dvvType, "k", "v", nil))
	require.NoError(t, cl.Execute(deleteCmd(t, dvvType, "k", fetch(t, cl, dvvType, "k").VClock)))

	cmd, err := riakc.NewFetchValueCommandBuilder().WithBucketType(dvvType).WithBucket(bucket).WithKey("k").
		WithReturnDeletedVClock(true).Build()
	require.NoError(t, err)
	require.NoError(t, cl.Execute(cmd))
	tomb := cmd.(*riakc.FetchValueCommand).Response.VClock
	require.NotEmpty(t, tomb, "the tombstone's vclock")

	err = storeIfNotModified(cl, "k", "resurrected", tomb)
	require.Equal(t, "notfound", riakErrmsg(err), "Riak 3.2 refuses it: its get finds no live object: %v", err)
	require.Empty(t, srv.Values(dvvType, bucket, "k"), "nothing stored")
}

// TestIfModifiedUnchanged: a get whose if_modified equals the
// object's vclock is answered #rpbgetresp{unchanged = true}: no content
// and no vclock.
func TestIfModifiedUnchanged(t *testing.T) {
	srv := startDVV(t)
	cl := client(t, srv)
	require.NoError(t, store(cl, dvvType, "k", "v", nil))
	vc := fetch(t, cl, dvvType, "k").VClock
	cmd, err := riakc.NewFetchValueCommandBuilder().WithBucketType(dvvType).WithBucket(bucket).WithKey("k").
		WithIfModified(vc).Build()
	require.NoError(t, err)
	require.NoError(t, cl.Execute(cmd))
	r := cmd.(*riakc.FetchValueCommand).Response
	require.True(t, r.IsUnchanged)
	require.Empty(t, r.VClock, "Riak 3.2 sends no vclock with unchanged = true")
}

// TestIfNoneMatchOnTombstone pins what the double already does as
// Riak does: a put with if_none_match on a key holding only tombstones
// is accepted (Riak's get says notfound).
func TestIfNoneMatchOnTombstone(t *testing.T) {
	srv := startDVV(t, riaktest.Options{})
	cl := client(t, srv)
	require.NoError(t, store(cl, dvvType, "k", "v", nil))
	require.NoError(t, cl.Execute(deleteCmd(t, dvvType, "k", fetch(t, cl, dvvType, "k").VClock)))
	cmd, err := riakc.NewStoreValueCommandBuilder().WithBucketType(dvvType).WithBucket(bucket).WithKey("k").
		WithIfNoneMatch(true).WithContent(&riakc.Object{Value: []byte("new"), ContentType: "text/plain"}).Build()
	require.NoError(t, err)
	require.NoError(t, cl.Execute(cmd))
	require.Equal(t, [][]byte{[]byte("new")}, srv.Values(dvvType, bucket, "k"))

	// And refused on a live key with "match_found".
	cmd, err = riakc.NewStoreValueCommandBuilder().WithBucketType(dvvType).WithBucket(bucket).WithKey("k").
		WithIfNoneMatch(true).WithContent(&riakc.Object{Value: []byte("again"), ContentType: "text/plain"}).Build()
	require.NoError(t, err)
	require.Equal(t, "match_found", riakErrmsg(cl.Execute(cmd)))
}

// TestIfNoneMatchAndIfNotModifiedTogether: with both set, Riak tries
// if_none_match first, so a put on a key it does not find goes ahead (the
// "notfound" refusal is if_not_modified's alone), and one on a live key is
// refused with "match_found".
func TestIfNoneMatchAndIfNotModifiedTogether(t *testing.T) {
	srv := startDVV(t)
	cl := client(t, srv)
	put := func(value string) error {
		cmd, err := riakc.NewStoreValueCommandBuilder().WithBucketType(dvvType).WithBucket(bucket).WithKey("k").
			WithIfNoneMatch(true).WithIfNotModified(true).
			WithContent(&riakc.Object{Value: []byte(value), ContentType: "text/plain"}).Build()
		require.NoError(t, err)
		return cl.Execute(cmd)
	}
	require.NoError(t, put("first"))
	require.Equal(t, [][]byte{[]byte("first")}, srv.Values(dvvType, bucket, "k"))
	require.Equal(t, "match_found", riakErrmsg(put("second")))
	require.Equal(t, [][]byte{[]byte("first")}, srv.Values(dvvType, bucket, "k"))
}

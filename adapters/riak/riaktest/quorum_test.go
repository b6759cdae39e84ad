package riaktest

import (
	"testing"

	rpb "github.com/basho/riak-go-client/rpb/riak"
	rpbkv "github.com/basho/riak-go-client/rpb/riak_kv"
	//lint:ignore SA1019 riak-go-client v1.7.0 generates its messages with github.com/golang/protobuf (API v1); this package marshals them as the client does
	"github.com/golang/protobuf/proto"
	"github.com/stretchr/testify/require"
)

// TestQuorumAboveNValIsRefused: a get, put or delete whose quorums,
// expanded against the bucket's n_val, ask for more vnodes than n_val is
// refused with "{n_val_violation,N}" before anything is read or written,
// as Riak's get and put FSMs validate it (riak_kv_get_fsm's
// validate_quorum, riak_kv_put_fsm's validate). A request's own quorum
// overrides the bucket's ("default" does not). A delete writes its
// tombstone with the request's w, or rw when the request gives no w
// (riak_kv_delete's get_w_options), so a bucket's w above n_val refuses
// puts and not deletes; a delete without a vclock first reads with r, or
// rw when the request gives neither r nor w (get_r_options).
func TestQuorumAboveNValIsRefused(t *testing.T) {
	s := fuzzServer(t)
	b, k := []byte("b"), []byte("k")
	typ := []byte("t")
	content := &rpbkv.RpbContent{Value: []byte("v")}
	u := proto.Uint32
	req := func(code byte, m proto.Message) string {
		t.Helper()
		body, err := proto.Marshal(m)
		require.NoError(t, err)
		_, _, rerr := s.handle(code, body)
		return string(rerr)
	}
	setProps := func(p *rpb.RpbBucketProps) {
		t.Helper()
		body, err := proto.Marshal(&rpb.RpbSetBucketReq{Type: typ, Bucket: b, Props: p})
		require.NoError(t, err)
		_, _, rerr := s.handle(codeSetBucketReq, body)
		require.Empty(t, string(rerr))
	}
	get := func(m *rpbkv.RpbGetReq) string {
		m.Type, m.Bucket, m.Key = typ, b, k
		return req(codeGetReq, m)
	}
	put := func(m *rpbkv.RpbPutReq) string {
		m.Type, m.Bucket, m.Key, m.Content = typ, b, k, content
		return req(codePutReq, m)
	}
	del := func(m *rpbkv.RpbDelReq) string {
		m.Type, m.Bucket, m.Key = typ, b, k
		return req(codeDelReq, m)
	}
	const violation = "{n_val_violation,1}"

	// n_val 1 with the type's quorums ("quorum": 1 of 1) is served.
	setProps(&rpb.RpbBucketProps{NVal: u(1)})
	require.Empty(t, put(&rpbkv.RpbPutReq{}))
	require.Empty(t, get(&rpbkv.RpbGetReq{}))
	// A request's quorum above n_val is refused, "default" is not.
	require.Equal(t, violation, get(&rpbkv.RpbGetReq{R: u(2)}))
	require.Equal(t, violation, get(&rpbkv.RpbGetReq{Pr: u(2)}))
	require.Empty(t, get(&rpbkv.RpbGetReq{R: u(quorumDefault), Pr: u(quorumAll)}))
	require.Equal(t, violation, put(&rpbkv.RpbPutReq{W: u(2)}))
	require.Equal(t, violation, put(&rpbkv.RpbPutReq{Dw: u(2)}))
	require.Equal(t, violation, put(&rpbkv.RpbPutReq{Pw: u(2)}))
	require.Empty(t, put(&rpbkv.RpbPutReq{W: u(quorumAll), Dw: u(0), Pw: u(quorumOne)}))
	require.Equal(t, violation, del(&rpbkv.RpbDelReq{Rw: u(2)}), "read before the tombstone")
	require.Equal(t, violation, del(&rpbkv.RpbDelReq{R: u(2)}))
	require.Equal(t, violation, del(&rpbkv.RpbDelReq{Vclock: []byte{}, W: u(2)}))
	require.Equal(t, violation, del(&rpbkv.RpbDelReq{Vclock: []byte{}, Rw: u(2)}))
	require.Equal(t, violation, del(&rpbkv.RpbDelReq{Vclock: []byte{}, Dw: u(2)}))
	n, _ := s.Siblings("t", "b", "k")
	require.Equal(t, 2, n, "the refused requests wrote nothing")

	// The bucket's w above n_val: puts are refused, deletes (rw) are not.
	setProps(&rpb.RpbBucketProps{W: u(2)})
	require.Equal(t, violation, put(&rpbkv.RpbPutReq{}))
	require.Empty(t, put(&rpbkv.RpbPutReq{W: u(1)}), "the request's w overrides the bucket's")
	require.Empty(t, get(&rpbkv.RpbGetReq{}))
	require.Equal(t, violation, del(&rpbkv.RpbDelReq{W: u(2)}))
	require.Empty(t, del(&rpbkv.RpbDelReq{W: u(quorumDefault)}), "a default w is no w: rw is used")
	require.Empty(t, s.Values("t", "b", "k"), "the delete landed")

	// The bucket's r and rw above n_val.
	setProps(&rpb.RpbBucketProps{W: u(quorumQuorum), R: u(2), Rw: u(2)})
	require.Equal(t, violation, get(&rpbkv.RpbGetReq{}))
	require.Empty(t, put(&rpbkv.RpbPutReq{}))
	require.Equal(t, violation, del(&rpbkv.RpbDelReq{}))
	require.Equal(t, violation, del(&rpbkv.RpbDelReq{Vclock: []byte{}}))
	require.Empty(t, del(&rpbkv.RpbDelReq{Vclock: []byte{}, W: u(1)}), "w given: rw is not used")
	// A conditional put reads first, with the bucket's r: if_not_modified
	// reports the read's refusal, if_none_match goes ahead without it.
	require.Equal(t, violation, put(&rpbkv.RpbPutReq{IfNotModified: proto.Bool(true)}))
	require.NotEmpty(t, s.Values("t", "b", "k"))
	require.Empty(t, put(&rpbkv.RpbPutReq{IfNoneMatch: proto.Bool(true)}), "the read failed, so nothing matched")

	// n_val 3 again: every quorum of the type's fits.
	setProps(&rpb.RpbBucketProps{NVal: u(3)})
	require.Empty(t, get(&rpbkv.RpbGetReq{R: u(3), Pr: u(3)}))
	require.Empty(t, put(&rpbkv.RpbPutReq{W: u(3), Dw: u(3), Pw: u(3)}))
	require.Equal(t, "{n_val_violation,3}", put(&rpbkv.RpbPutReq{W: u(4)}))
}

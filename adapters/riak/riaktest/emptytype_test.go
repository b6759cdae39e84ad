package riaktest

// A request whose bucket type is present but empty names a type "" that
// does not exist, as Riak KV 3.2 reads it: only an absent type or
// "default" is the default type (riak_kv_pb_object's maybe_bucket_type,
// riak_core_pb_bucket's maybe_create_bucket_type; riak_core_pb_bucket_type
// looks the name up as given). Gets and puts refuse it earlier ("Type
// cannot be zero-length"); the other requests answer as for any type that
// does not exist.

import (
	"testing"

	rpb "github.com/basho/riak-go-client/rpb/riak"
	rpbkv "github.com/basho/riak-go-client/rpb/riak_kv"
	//lint:ignore SA1019 riak-go-client v1.7.0 generates its messages with github.com/golang/protobuf (API v1); this package marshals them as the client does
	"github.com/golang/protobuf/proto"
)

func TestEmptyBucketTypeIsNoType(t *testing.T) {
	s := fuzzServer(t)
	// A value in the default type that a delete there would remove.
	handleOK(t, s, codePutReq, &rpbkv.RpbPutReq{Bucket: []byte("b"), Key: []byte("k"),
		Content: &rpbkv.RpbContent{Value: []byte("v")}})
	before := handleOK(t, s, codeGetBucketReq, &rpb.RpbGetBucketReq{Bucket: []byte("b")})
	empty := []byte{}
	for _, c := range []struct {
		name string
		code byte
		msg  proto.Message
		want rpcError // "" for success
	}{
		{"delete", codeDelReq, &rpbkv.RpbDelReq{Type: empty, Bucket: []byte("b"), Key: []byte("k")}, "no_type"},
		{"get bucket", codeGetBucketReq, &rpb.RpbGetBucketReq{Type: empty, Bucket: []byte("b")}, "No bucket-type named ''"},
		{"set bucket", codeSetBucketReq, &rpb.RpbSetBucketReq{Type: empty, Bucket: []byte("b"),
			Props: &rpb.RpbBucketProps{NVal: proto.Uint32(1)}}, "No bucket-type named ''"},
		{"get bucket type", codeGetBucketTypeReq, &rpb.RpbGetBucketTypeReq{Type: empty}, "Invalid bucket type: <<>>"},
		{"set bucket type", codeSetBucketTypeReq, &rpb.RpbSetBucketTypeReq{Type: empty,
			Props: &rpb.RpbBucketProps{NVal: proto.Uint32(1)}}, "Invalid bucket properties: not_active"},
		{"reset bucket", codeResetBucketReq, &rpb.RpbResetBucketReq{Type: empty, Bucket: []byte("b")}, ""},
	} {
		body, err := proto.Marshal(c.msg)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, rerr := s.handle(c.code, body); rerr != c.want {
			t.Errorf("%s: answer %q, want %q", c.name, rerr, c.want)
		}
	}
	if n, _ := s.Siblings("default", "b", "k"); n != 1 {
		t.Errorf("the default type's value: %d siblings, want 1 (untouched)", n)
	}
	if after := handleOK(t, s, codeGetBucketReq, &rpb.RpbGetBucketReq{Bucket: []byte("b")}); !proto.Equal(before, after) {
		t.Errorf("the default type's bucket properties changed: %v, want %v", after, before)
	}
}

package riaktest

import (
	"testing"

	rpb "github.com/basho/riak-go-client/rpb/riak"
	rpbkv "github.com/basho/riak-go-client/rpb/riak_kv"
	"github.com/golang/protobuf/proto"
)

// FuzzHandle feeds arbitrary request frames (message code and protobuf
// body) to the double's request handler: it must never panic, and must
// answer every request with either a response or an error message.
func FuzzHandle(f *testing.F) {
	vc, err := VClock{"vnode-0": 1}.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	seeds := []struct {
		code byte
		msg  proto.Message
	}{
		{codePingReq, nil},
		{codeGetReq, &rpbkv.RpbGetReq{Bucket: []byte("b"), Key: []byte("k")}},
		{codeGetReq, &rpbkv.RpbGetReq{Bucket: []byte("b"), Key: []byte("k"), IfModified: vc, Head: proto.Bool(true)}},
		{codePutReq, &rpbkv.RpbPutReq{Bucket: []byte("b"), Key: []byte("k"), Vclock: vc, Content: &rpbkv.RpbContent{Value: []byte("v")}, ReturnBody: proto.Bool(true)}},
		{codePutReq, &rpbkv.RpbPutReq{Bucket: []byte("b"), Content: &rpbkv.RpbContent{Value: []byte("v")}, IfNoneMatch: proto.Bool(true)}},
		{codeDelReq, &rpbkv.RpbDelReq{Bucket: []byte("b"), Key: []byte("k"), Vclock: vc}},
		{codeGetBucketReq, &rpb.RpbGetBucketReq{Bucket: []byte("b"), Type: []byte("default")}},
		{codeSetBucketReq, &rpb.RpbSetBucketReq{Bucket: []byte("b"), Props: &rpb.RpbBucketProps{AllowMult: proto.Bool(true)}}},
		{codeResetBucketReq, &rpb.RpbResetBucketReq{Bucket: []byte("b")}},
		{codeGetBucketTypeReq, &rpb.RpbGetBucketTypeReq{Type: []byte("default")}},
		{codeSetBucketTypeReq, &rpb.RpbSetBucketTypeReq{Type: []byte("default"), Props: &rpb.RpbBucketProps{NVal: proto.Uint32(1)}}},
		{codeGetServerInfoReq, nil},
	}
	for _, s := range seeds {
		var body []byte
		if s.msg != nil {
			if body, err = proto.Marshal(s.msg); err != nil {
				f.Fatal(err)
			}
		}
		f.Add(s.code, body)
	}
	srv, err := NewFakeServer(Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = srv.Close() })
	f.Fuzz(func(t *testing.T, code byte, body []byte) {
		respCode, resp, rerr := srv.handle(code, body)
		if rerr == "" && respCode == 0 {
			t.Fatalf("code %d: neither a response nor an error", code)
		}
		if resp != nil {
			if _, err := proto.Marshal(resp); err != nil {
				t.Fatalf("code %d: response does not marshal: %v", code, err)
			}
		}
	})
}

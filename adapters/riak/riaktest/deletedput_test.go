package riaktest

// A put whose content carries the deleted field is a tombstone, as in
// Riak KV 3.2: riak_kv_pb_object decodes the content with
// riak_pb_kv_codec:decode_content, which keeps the field as the
// X-Riak-Deleted metadata whatever its value,
//
//	decode_content_meta(_, undefined, _Pb) -> [];
//	...
//	decode_content_meta(deleted, DeletedVal, _Pb) -> [{?MD_DELETED, DeletedVal}].
//
// and riak_kv_util:obj_not_deleted takes a content for deleted when its
// metadata has that key at all:
//
//	[{M, V} || {M, V} <- riak_object:get_contents(Obj),
//	           dict:is_key(<<"X-Riak-Deleted">>, M) =:= false]
//
// A fetch encodes the metadata back (encode_content_meta(?MD_DELETED, V)
// gives deleted = header_val_to_bool(V)). riak-go-client v1.7.0 never sends
// the field (toRpbContent), but another client may.

import (
	"testing"

	rpbkv "github.com/basho/riak-go-client/rpb/riak_kv"
	//lint:ignore SA1019 riak-go-client v1.7.0 generates its messages with github.com/golang/protobuf (API v1); this package marshals them as the client does
	"github.com/golang/protobuf/proto"
)

// handleOK sends one request to s's handler and fails the test on an
// error answer.
func handleOK(t *testing.T, s *FakeServer, code byte, m proto.Message) proto.Message {
	t.Helper()
	body, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	_, resp, rerr := s.handle(code, body)
	if rerr != "" {
		t.Fatalf("code %d: %s", code, rerr)
	}
	return resp
}

func TestPutWithDeletedFieldIsATombstone(t *testing.T) {
	for _, deleted := range []bool{true, false} {
		t.Run(map[bool]string{true: "deleted=true", false: "deleted=false"}[deleted], func(t *testing.T) {
			s := fuzzServer(t)
			key := []byte("k")
			get := func(deletedVClock bool) *rpbkv.RpbGetResp {
				t.Helper()
				resp := handleOK(t, s, codeGetReq, &rpbkv.RpbGetReq{Type: []byte("t"), Bucket: []byte("b"), Key: key,
					Deletedvclock: proto.Bool(deletedVClock)})
				if resp == nil {
					return nil
				}
				return resp.(*rpbkv.RpbGetResp)
			}
			handleOK(t, s, codePutReq, &rpbkv.RpbPutReq{Type: []byte("t"), Bucket: []byte("b"), Key: key,
				Content: &rpbkv.RpbContent{Value: []byte("v"), ContentType: []byte("text/plain"), Deleted: proto.Bool(deleted)}})

			if r := get(false); r != nil {
				t.Fatalf("a key holding only a content with the deleted field: got %v, want not found", r)
			}
			r := get(true)
			if r == nil || len(r.Vclock) == 0 || len(r.Content) != 0 {
				t.Fatalf("with deletedvclock: got %v, want the tombstone's vclock and no content", r)
			}

			// Beside a live value, it is returned as a sibling with the
			// deleted field as it was sent.
			handleOK(t, s, codePutReq, &rpbkv.RpbPutReq{Type: []byte("t"), Bucket: []byte("b"), Key: key,
				Content: &rpbkv.RpbContent{Value: []byte("live"), ContentType: []byte("text/plain")}})
			r = get(false)
			if r == nil || len(r.Content) != 2 {
				t.Fatalf("got %v, want two siblings", r)
			}
			got := map[string]*bool{}
			for _, c := range r.Content {
				got[string(c.Value)] = c.Deleted
			}
			if got["v"] == nil || *got["v"] != deleted || got["live"] != nil {
				t.Fatalf("deleted fields by value %v, want v: %v and live: <nil>", got, deleted)
			}
		})
	}
}

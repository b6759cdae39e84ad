package riaktest

import (
	"testing"

	rpbkv "github.com/basho/riak-go-client/rpb/riak_kv"
	//lint:ignore SA1019 riak-go-client v1.7.0 generates its messages with github.com/golang/protobuf (API v1); this package marshals them as the client does
	"github.com/golang/protobuf/proto"
	"github.com/stretchr/testify/require"
)

// TestZeroLengthRefusals: a get or put whose bucket or key is empty, or
// whose type is present but empty, is refused as Riak 3.2's
// riak_kv_pb_object refuses it (bucket first, then key, then type), and
// changes nothing. A delete of the empty key finds nothing and succeeds,
// as in Riak, whose delete has no such check.
func TestZeroLengthRefusals(t *testing.T) {
	s := fuzzServer(t)
	b, k, e := []byte("b"), []byte("k"), []byte{}
	content := &rpbkv.RpbContent{Value: []byte("v")}
	for _, c := range []struct {
		name string
		code byte
		msg  proto.Message
		want string
	}{
		{"get, empty key", codeGetReq, &rpbkv.RpbGetReq{Bucket: b, Key: e, Type: []byte("t")}, "Key cannot be zero-length"},
		{"get, empty bucket", codeGetReq, &rpbkv.RpbGetReq{Bucket: e, Key: e}, "Bucket cannot be zero-length"},
		{"get, empty type", codeGetReq, &rpbkv.RpbGetReq{Bucket: b, Key: k, Type: e}, "Type cannot be zero-length"},
		{"put, empty key", codePutReq, &rpbkv.RpbPutReq{Bucket: b, Key: e, Type: []byte("t"), Content: content}, "Key cannot be zero-length"},
		{"put, empty bucket", codePutReq, &rpbkv.RpbPutReq{Bucket: e, Key: e, Content: content}, "Bucket cannot be zero-length"},
		{"put, empty type", codePutReq, &rpbkv.RpbPutReq{Bucket: b, Key: k, Type: e, Content: content}, "Type cannot be zero-length"},
		{"put, empty type and no key", codePutReq, &rpbkv.RpbPutReq{Bucket: b, Type: e, Content: content}, "Type cannot be zero-length"},
		{"delete, empty key", codeDelReq, &rpbkv.RpbDelReq{Bucket: b, Key: e, Type: []byte("t")}, ""},
	} {
		body, err := proto.Marshal(c.msg)
		require.NoError(t, err)
		code, _, rerr := s.handle(c.code, body)
		if c.want == "" {
			require.Empty(t, string(rerr), c.name)
			require.Equal(t, codeDelResp, code, c.name)
			continue
		}
		require.Equal(t, c.want, string(rerr), c.name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Empty(t, s.objects, "a refused request stored something")
}

package riaktest

import (
	"strings"
	"testing"

	rpb "github.com/basho/riak-go-client/rpb/riak"
	rpbkv "github.com/basho/riak-go-client/rpb/riak_kv"
	//lint:ignore SA1019 riak-go-client v1.7.0 generates its messages with github.com/golang/protobuf (API v1); this package marshals them as the client does
	"github.com/golang/protobuf/proto"
)

// fuzzRequest is a request frame for the fuzz corpora.
type fuzzRequest struct {
	code byte
	msg  proto.Message
}

// fuzzRequests returns one request of every kind the double handles.
func fuzzRequests(tb testing.TB) []fuzzRequest {
	vc, err := VClock{"vnode-0": 1}.MarshalBinary()
	if err != nil {
		tb.Fatal(err)
	}
	return []fuzzRequest{
		{codePingReq, nil},
		{codeGetReq, &rpbkv.RpbGetReq{Bucket: []byte("b"), Key: []byte("k")}},
		{codeGetReq, &rpbkv.RpbGetReq{Bucket: []byte("b"), Key: []byte("k"), IfModified: vc, Head: proto.Bool(true)}},
		{codePutReq, &rpbkv.RpbPutReq{Bucket: []byte("b"), Key: []byte("k"), Vclock: vc, Content: &rpbkv.RpbContent{Value: []byte("v")}, ReturnBody: proto.Bool(true)}},
		{codePutReq, &rpbkv.RpbPutReq{Bucket: []byte("b"), Content: &rpbkv.RpbContent{Value: []byte("v")}, IfNoneMatch: proto.Bool(true)}},
		{codeDelReq, &rpbkv.RpbDelReq{Bucket: []byte("b"), Key: []byte("k"), Vclock: vc}},
		{codeGetBucketReq, &rpb.RpbGetBucketReq{Bucket: []byte("b"), Type: []byte("default")}},
		{codeSetBucketReq, &rpb.RpbSetBucketReq{Bucket: []byte("b"), Props: &rpb.RpbBucketProps{AllowMult: proto.Bool(true)}}},
		{codeSetBucketReq, &rpb.RpbSetBucketReq{Bucket: []byte("b"), Type: []byte("t"), Props: &rpb.RpbBucketProps{LastWriteWins: proto.Bool(true)}}},
		{codeResetBucketReq, &rpb.RpbResetBucketReq{Bucket: []byte("b")}},
		{codeGetBucketTypeReq, &rpb.RpbGetBucketTypeReq{Type: []byte("default")}},
		{codeSetBucketTypeReq, &rpb.RpbSetBucketTypeReq{Type: []byte("t"), Props: &rpb.RpbBucketProps{NVal: proto.Uint32(1)}}},
		{codeGetServerInfoReq, nil},
	}
}

func marshalRequest(tb testing.TB, r fuzzRequest) []byte {
	if r.msg == nil {
		return nil
	}
	body, err := proto.Marshal(r.msg)
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

// fuzzServer returns a fresh double with no listener, and a created bucket
// type "t" (with dotted version vectors), so that every fuzz input starts
// from the same state and a failing input replays from its corpus file
// alone.
func fuzzServer(t *testing.T) *FakeServer {
	s := newState(Options{})
	if err := s.CreateBucketType("t", BucketTypeProps{AllowMult: true}); err != nil {
		t.Fatal(err)
	}
	return s
}

// handleChecked sends one request to s's handler: it must answer with
// either a response or an error message, and the response must marshal.
func handleChecked(t *testing.T, s *FakeServer, code byte, body []byte) {
	t.Helper()
	respCode, resp, rerr := s.handle(code, body)
	if rerr == "" && respCode == 0 {
		t.Fatalf("code %d: neither a response nor an error", code)
	}
	if resp != nil {
		if _, err := proto.Marshal(resp); err != nil {
			t.Fatalf("code %d: response does not marshal: %v", code, err)
		}
	}
}

// FuzzHandle feeds arbitrary request frames (message code and protobuf
// body) to a fresh double's request handler: it must never panic, and
// must answer every request with either a response or an error message.
func FuzzHandle(f *testing.F) {
	for _, r := range fuzzRequests(f) {
		f.Add(r.code, marshalRequest(f, r))
	}
	f.Fuzz(func(t *testing.T, code byte, body []byte) {
		handleChecked(t, fuzzServer(t), code, body)
	})
}

// FuzzHandleSequence feeds a sequence of request frames to one fresh
// double, so that requests meet the state earlier ones left (bucket
// properties, siblings, tombstones). The input is a script of frames, each
// a message code, a one-byte body length and the body; a truncated last
// frame is dropped. Every input starts from the same state, so a failing
// one replays from its corpus file alone.
func FuzzHandleSequence(f *testing.F) {
	reqs := fuzzRequests(f)
	frame := func(r fuzzRequest) []byte {
		body := marshalRequest(f, r)
		if len(body) > 255 {
			f.Fatalf("seed body of %d bytes", len(body))
		}
		return append([]byte{r.code, byte(len(body))}, body...)
	}
	var all []byte
	for i, r := range reqs {
		f.Add(frame(r))
		all = append(all, frame(r)...)
		// Each request followed by every other one.
		for _, next := range reqs[i+1:] {
			f.Add(append(frame(r), frame(next)...))
		}
	}
	f.Add(all)
	f.Fuzz(func(t *testing.T, script []byte) {
		s := fuzzServer(t)
		for len(script) >= 2 {
			code, n := script[0], int(script[1])
			script = script[2:]
			if n > len(script) {
				return
			}
			handleChecked(t, s, code, script[:n])
			script = script[n:]
		}
	})
}

// TestMalformedRequestIsNamed: a request body that does not decode is
// answered with an error naming the message it should have been, and an
// unknown message code with Riak's message.
func TestMalformedRequestIsNamed(t *testing.T) {
	s := fuzzServer(t)
	for code, name := range map[byte]string{
		codeGetReq: "RpbGetReq", codePutReq: "RpbPutReq", codeDelReq: "RpbDelReq",
		codeGetBucketReq: "RpbGetBucketReq", codeGetBucketTypeReq: "RpbGetBucketTypeReq",
		codeSetBucketReq: "RpbSetBucketReq", codeResetBucketReq: "RpbResetBucketReq",
		codeSetBucketTypeReq: "RpbSetBucketTypeReq",
	} {
		respCode, resp, rerr := s.handle(code, []byte{0xff})
		if respCode != 0 || resp != nil || !strings.HasPrefix(string(rerr), "bad "+name+": ") {
			t.Errorf("code %d with a malformed body: %d, %v, %q; want an error beginning %q", code, respCode, resp, rerr, "bad "+name+": ")
		}
	}
	// A code no service registered: riak_api_pb_server's message.
	if _, _, rerr := s.handle(200, nil); rerr != "Unknown message code: 200" {
		t.Errorf("code 200: %q, want %q", rerr, "Unknown message code: 200")
	}
}

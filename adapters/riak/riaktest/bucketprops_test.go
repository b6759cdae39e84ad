package riaktest

import (
	"testing"

	rpb "github.com/basho/riak-go-client/rpb/riak"
	//lint:ignore SA1019 riak-go-client v1.7.0 generates its messages with github.com/golang/protobuf (API v1); this package marshals them as the client does
	"github.com/golang/protobuf/proto"
	"github.com/stretchr/testify/require"
)

// Riak's refusals, as its protocol-buffers bucket service sends them
// (riak_core_pb_bucket formats riak_kv_bucket's error list with ~p).
// A list that does not fit in 80 columns after the 27-character prefix is
// broken after each element, the next indented to column 29 (nl), and a
// {Property, Reason} tuple that does not fit after its property, the
// reason 4 columns further in (nl4).
const (
	nl             = "\n                            "
	nl4            = nl + "    "
	wantLWWWithDVV = `Invalid bucket properties: [{dvv_enabled,` + nl4 + `"If last_write_wins is true, dvv_enabled must be false"}]`
	wantDTMult     = `Invalid bucket properties: [{allow_mult,` + nl4 + `"Data Type buckets must be allow_mult=true"}]`
)

// TestBucketPropsValidation sets properties on buckets and bucket types the
// way a client does and checks that the double accepts what Riak 3.2
// accepts and refuses, with Riak's message, what it refuses; a refusal
// must leave the properties as they were.
func TestBucketPropsValidation(t *testing.T) {
	const (
		dvvType  = "dvv"      // created with defaults: dvv_enabled=true
		noDVV    = "no-dvv"   // created with dvv_enabled=false
		counters = "counters" // a data-type type
	)
	newServer := func(t *testing.T) *FakeServer {
		s := newState(Options{})
		require.NoError(t, s.CreateBucketType(dvvType, BucketTypeProps{AllowMult: true}))
		require.NoError(t, s.CreateBucketType(noDVV, BucketTypeProps{AllowMult: true, DisableDVV: true}))
		require.NoError(t, s.CreateBucketType(counters, BucketTypeProps{AllowMult: true, Datatype: "counter"}))
		return s
	}
	yes, no, zero := proto.Bool(true), proto.Bool(false), proto.Uint32(0)
	for _, tc := range []struct {
		name   string
		typ    string
		bucket string // "" sets the type's properties (RpbSetBucketTypeReq)
		props  *rpb.RpbBucketProps
		want   string // "" if Riak accepts
	}{
		{"lww on a bucket of a dvv type", dvvType, "b", &rpb.RpbBucketProps{LastWriteWins: yes}, wantLWWWithDVV},
		{"lww on a dvv type", dvvType, "", &rpb.RpbBucketProps{LastWriteWins: yes}, wantLWWWithDVV},
		{"lww with allow_mult on a dvv bucket", dvvType, "b", &rpb.RpbBucketProps{AllowMult: yes, LastWriteWins: yes}, wantLWWWithDVV},
		{"lww on a data-type bucket", counters, "b", &rpb.RpbBucketProps{LastWriteWins: yes}, wantLWWWithDVV},
		{"lww on a bucket of a type without dvv", noDVV, "b", &rpb.RpbBucketProps{LastWriteWins: yes}, ""},
		{"lww on a type without dvv", noDVV, "", &rpb.RpbBucketProps{LastWriteWins: yes}, ""},
		{"lww on a default-type bucket", "default", "b", &rpb.RpbBucketProps{LastWriteWins: yes}, ""},
		{"lww off on a dvv bucket", dvvType, "b", &rpb.RpbBucketProps{AllowMult: yes, LastWriteWins: no}, ""},
		{"allow_mult off on a dvv bucket", dvvType, "b", &rpb.RpbBucketProps{AllowMult: no}, ""},
		{"allow_mult off on a data-type bucket", counters, "b", &rpb.RpbBucketProps{AllowMult: no}, wantDTMult},
		{"allow_mult off on a data-type type", counters, "", &rpb.RpbBucketProps{AllowMult: no}, wantDTMult},
		{"same datatype", counters, "b", &rpb.RpbBucketProps{Datatype: []byte("counter")}, ""},
		{"other datatype", counters, "b", &rpb.RpbBucketProps{Datatype: []byte("set")},
			`Invalid bucket properties: [{datatype,"set not supported for bucket datatype property"}]`},
		{"datatype on a plain type", dvvType, "b", &rpb.RpbBucketProps{Datatype: []byte("counter")},
			"Invalid bucket properties: [{datatype,\"`datatype` must not be defined.\"}]"},
		{"datatype on a default-type bucket", "default", "b", &rpb.RpbBucketProps{Datatype: []byte("counter")}, ""},
		{"consistent on a plain type", dvvType, "b", &rpb.RpbBucketProps{Consistent: yes},
			`Invalid bucket properties: [{consistent,` + nl4 + `"Write once buckets must not be consistent=true"}]`},
		{"consistent=false on a plain type", dvvType, "b", &rpb.RpbBucketProps{Consistent: no}, ""},
		{"consistent on a default-type bucket", "default", "b", &rpb.RpbBucketProps{Consistent: yes},
			`Invalid bucket properties: [{consistent,"cannot update consistent property"}]`},
		{"write_once on a plain type", dvvType, "", &rpb.RpbBucketProps{WriteOnce: yes},
			"Invalid bucket properties: [{write_once," + nl4 + "\"Cannot set existing bucket type to `write_once`\"}]"},
		{"write_once on a default-type bucket", "default", "b", &rpb.RpbBucketProps{WriteOnce: yes},
			`Invalid bucket properties: [{write_once,"cannot update write_once property"}]`},
		{"n_val 0", dvvType, "b", &rpb.RpbBucketProps{NVal: proto.Uint32(0)}, `Invalid bucket properties: [{n_val,not_integer}]`},
		{"n_val 5", dvvType, "b", &rpb.RpbBucketProps{NVal: proto.Uint32(5)}, ""},
		{"several refusals, in Riak's order", dvvType, "b", &rpb.RpbBucketProps{LastWriteWins: yes, Consistent: yes, NVal: proto.Uint32(0)},
			`Invalid bucket properties: [{dvv_enabled,` + nl4 + `"If last_write_wins is true, dvv_enabled must be false"},` +
				nl + `{n_val,not_integer},` + nl + `{consistent,` + nl4 + `"Write once buckets must not be consistent=true"}]`},
		{"the default type itself", "default", "", &rpb.RpbBucketProps{AllowMult: yes}, "Invalid bucket properties: no_default_update"},
		{"a bucket of an unknown type", "nope", "b", &rpb.RpbBucketProps{AllowMult: yes}, "No bucket-type named 'nope'"},
		{"an unknown type itself", "nope", "", &rpb.RpbBucketProps{AllowMult: yes}, "Invalid bucket properties: not_active"},
		{"r 0", dvvType, "b", &rpb.RpbBucketProps{R: zero}, `Invalid bucket properties: [{r,not_valid_quorum}]`},
		{"w 0", dvvType, "b", &rpb.RpbBucketProps{W: zero}, `Invalid bucket properties: [{w,not_valid_quorum}]`},
		{"rw 0", dvvType, "b", &rpb.RpbBucketProps{Rw: zero}, `Invalid bucket properties: [{rw,not_valid_quorum}]`},
		{"r 0 on a type", dvvType, "", &rpb.RpbBucketProps{R: zero}, `Invalid bucket properties: [{r,not_valid_quorum}]`},
		{"w 0 on a default-type bucket", "default", "b", &rpb.RpbBucketProps{W: zero}, `Invalid bucket properties: [{w,not_valid_quorum}]`},
		{"r, w and rw 0, in Riak's order", dvvType, "b", &rpb.RpbBucketProps{R: zero, W: zero, Rw: zero, NVal: zero},
			`Invalid bucket properties: [{rw,not_valid_quorum},` + nl + `{w,not_valid_quorum},` + nl + `{r,not_valid_quorum},` + nl + `{n_val,not_integer}]`},
		{"r default", dvvType, "b", &rpb.RpbBucketProps{R: proto.Uint32(quorumDefault)}, `Invalid bucket properties: [{r,not_valid_quorum}]`},
		{"pr default", dvvType, "b", &rpb.RpbBucketProps{Pr: proto.Uint32(quorumDefault)}, `Invalid bucket properties: [{pr,not_valid_quorum}]`},
		{"pr, pw and dw 0", dvvType, "b", &rpb.RpbBucketProps{Pr: zero, Pw: zero, Dw: zero}, ""},
		{"r, w and rw symbolic", dvvType, "b", &rpb.RpbBucketProps{R: proto.Uint32(quorumQuorum), W: proto.Uint32(quorumOne), Rw: proto.Uint32(quorumAll)}, ""},
		{"r, w and rw 1", dvvType, "b", &rpb.RpbBucketProps{R: proto.Uint32(1), W: proto.Uint32(1), Rw: proto.Uint32(1)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			get := func() *rpb.RpbBucketProps {
				t.Helper()
				s.mu.Lock()
				defer s.mu.Unlock()
				p, _ := s.propsLocked(tc.typ, tc.bucket)
				return p
			}
			before := get()
			var (
				code byte
				body []byte
				err  error
			)
			if tc.bucket == "" {
				code = codeSetBucketTypeReq
				body, err = proto.Marshal(&rpb.RpbSetBucketTypeReq{Type: []byte(tc.typ), Props: tc.props})
			} else {
				code = codeSetBucketReq
				body, err = proto.Marshal(&rpb.RpbSetBucketReq{Type: []byte(tc.typ), Bucket: []byte(tc.bucket), Props: tc.props})
			}
			require.NoError(t, err)
			respCode, _, rerr := s.handle(code, body)
			if tc.want != "" {
				require.Equal(t, tc.want, string(rerr))
				require.True(t, proto.Equal(before, get()), "a refused update changed the properties")
				return
			}
			require.Empty(t, string(rerr))
			require.Equal(t, codeSetBucketResp, respCode)
			want := proto.Clone(before).(*rpb.RpbBucketProps)
			proto.Merge(want, tc.props)
			require.True(t, proto.Equal(want, get()), "accepted properties not stored")
		})
	}
}

// TestCreateBucketTypeValidation: CreateBucketType refuses what
// `riak admin bucket-type create` refuses, and creates nothing then.
func TestCreateBucketTypeValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    BucketTypeProps
		want string // "" if Riak accepts
	}{
		{"lww with dvv", BucketTypeProps{AllowMult: true, LastWriteWins: true}, `[{dvv_enabled,` + nl4 + `"If last_write_wins is true, dvv_enabled must be false"}]`},
		{"lww without dvv", BucketTypeProps{LastWriteWins: true, DisableDVV: true}, ""},
		{"datatype without allow_mult", BucketTypeProps{Datatype: "set"}, `[{allow_mult,` + nl4 + `"Data Type buckets must be allow_mult=true"}]`},
		{"datatype", BucketTypeProps{Datatype: "set", AllowMult: true}, ""},
		{"allow_mult off", BucketTypeProps{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newState(Options{})
			err := s.CreateBucketType("t", tc.p)
			s.mu.Lock()
			_, created := s.types["t"]
			s.mu.Unlock()
			if tc.want == "" {
				require.NoError(t, err)
				require.True(t, created)
				return
			}
			require.ErrorContains(t, err, "Invalid bucket properties: "+tc.want)
			require.False(t, created)
		})
	}
}

func TestErlAtom(t *testing.T) {
	for in, want := range map[string]string{"set": "set", "hll": "hll", "gSet_2": "gSet_2", "Set": "'Set'", "a-b": "'a-b'", "": "''", "it's": `'it\'s'`, "end": "'end'", "maybe": "maybe"} {
		require.Equal(t, want, erlAtom(in), in)
	}
}

package riaktest

import (
	"bufio"
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rpb "github.com/basho/riak-go-client/rpb/riak"
	rpbkv "github.com/basho/riak-go-client/rpb/riak_kv"
	//lint:ignore SA1019 riak-go-client v1.7.0 generates its messages with github.com/golang/protobuf (API v1); this package marshals them as the client does
	"github.com/golang/protobuf/proto"
)

// Riak protocol-buffers message codes the double understands.
const (
	codeErrorResp         byte = 0
	codePingReq           byte = 1
	codePingResp          byte = 2
	codeGetServerInfoReq  byte = 7
	codeGetServerInfoResp byte = 8
	codeGetReq            byte = 9
	codeGetResp           byte = 10
	codePutReq            byte = 11
	codePutResp           byte = 12
	codeDelReq            byte = 13
	codeDelResp           byte = 14
	codeGetBucketReq      byte = 19
	codeGetBucketResp     byte = 20
	codeSetBucketReq      byte = 21
	codeSetBucketResp     byte = 22
	codeResetBucketReq    byte = 29
	codeResetBucketResp   byte = 30
	codeGetBucketTypeReq  byte = 31
	codeSetBucketTypeReq  byte = 32
)

// MaxFrameSize is the largest request frame the double reads, in bytes
// (length prefix excluded). A larger frame closes the connection.
const MaxFrameSize = 64 << 20

// Op classifies requests for counting and fault injection. Ops are plain
// values, safe to share.
type Op int

// The request kinds the double counts separately.
const (
	OpOther     Op = iota // anything not listed below
	OpPing                // RpbPingReq (the client's health check)
	OpGet                 // RpbGetReq (FetchValueCommand)
	OpPut                 // RpbPutReq (StoreValueCommand)
	OpDelete              // RpbDelReq (DeleteValueCommand)
	OpGetBucket           // RpbGetBucketReq and RpbGetBucketTypeReq
	OpSetBucket           // RpbSetBucketReq, RpbResetBucketReq, RpbSetBucketTypeReq
	numOps
)

var opNames = [...]string{"other", "ping", "get", "put", "delete", "get-bucket", "set-bucket"}

// String returns a short lower-case name.
func (o Op) String() string { return enumName(opNames[:], o, "Op") }

// enumName is names[v], or kind(v) for a v out of its range.
func enumName[T ~int](names []string, v T, kind string) string {
	if v < 0 || int(v) >= len(names) {
		return fmt.Sprintf("%s(%d)", kind, int(v))
	}
	return names[v]
}

// Fault is a failure the double injects into one request. Faults are plain
// values, safe to share.
type Fault int

// The injectable faults. "Apply" means the request takes effect on the
// double's store (for a read it is a no-op).
const (
	// NoFault handles the request normally.
	NoFault Fault = iota
	// Refuse answers RpbErrorResp "overload" without applying: the client
	// learns the write did not land.
	Refuse
	// CloseBeforeApply closes the connection without applying. The client
	// sees a reset and cannot tell whether the write landed (it did not).
	CloseBeforeApply
	// DropResponse applies, then never answers; the client's read times out.
	DropResponse
	// CloseAfterApply applies, then closes the connection; the client sees
	// EOF or a reset after sending.
	CloseAfterApply
	// TimeoutAfterApply applies, then answers RpbErrorResp "timeout", the way
	// a Riak coordinator answers when W replicas did not confirm in time.
	TimeoutAfterApply
)

var faultNames = [...]string{"none", "refuse", "close-before-apply", "drop-response", "close-after-apply", "timeout-after-apply"}

// String returns a short lower-case name.
func (f Fault) String() string { return enumName(faultNames[:], f, "Fault") }

// Applies reports whether the request takes effect under f.
func (f Fault) Applies() bool { return f != Refuse && f != CloseBeforeApply }

// BucketTypeProps are the properties of a bucket type created with
// CreateBucketType. Unlike `riak admin bucket-type create`, the zero value
// means allow_mult=false: set AllowMult explicitly. It is a plain value,
// safe to copy and share.
type BucketTypeProps struct {
	AllowMult     bool
	LastWriteWins bool
	// DisableDVV creates the type with dvv_enabled=false, like
	// `riak admin bucket-type create NAME '{"props":{"dvv_enabled":false}}'`.
	// Riak refuses last_write_wins=true on a type with dvv_enabled=true.
	DisableDVV bool
	// Datatype, when set (for example "counter"), marks a Riak data-type
	// bucket type, which Riak requires to have allow_mult=true. The double
	// stores KV values in it anyway; it exists so that clients'
	// configuration checks can be tested.
	Datatype string
	// Backend sets the type's backend property, like
	// `riak admin bucket-type create NAME '{"props":{"backend":"NAME"}}'`:
	// which backend of a multi-backend node (Options.Backends) stores its
	// objects.
	Backend string
}

// Backend is one backend of a multi-backend node (riak.conf
// storage_backend = multi, multi_backend.NAME.storage_backend = bitcask).
type Backend struct {
	// Expiry is bitcask's expiry (multi_backend.NAME.bitcask.expiry,
	// expiry_secs): a get on a node whose clock reads second s finds no
	// object whose last write was stamped (in whole seconds, truncated)
	// before s - Expiry, so an object is read for more than Expiry after
	// its last write and at most a second longer (README.md, "Backend
	// expiry"). Zero: off. It must be whole seconds.
	Expiry time.Duration
}

// Defaults for Options fields left zero, and the Options.DeleteMode that
// reaps at once.
const (
	// DefaultMaxSiblings is Riak's default max_siblings (riak_kv): a write
	// that would leave more siblings than this on an object is refused.
	DefaultMaxSiblings = 100
	// DefaultMaxObjectSize is Riak's default max_object_size (riak.conf
	// object.size.maximum, 50MB): a write that would leave a larger object,
	// every sibling counted, is refused.
	DefaultMaxObjectSize = 50 << 20
	// DefaultDeleteMode is Riak's default delete_mode: how long an object
	// left with only tombstones is kept before it is reaped.
	DefaultDeleteMode = 3 * time.Second
	// ReapImmediately, as Options.DeleteMode, reaps an object as soon as a
	// delete leaves it with only tombstones (delete_mode=immediate).
	ReapImmediately time.Duration = -1
)

// Options configure a FakeServer. The zero value is ready to use; it is a
// plain value, safe to copy and share.
type Options struct {
	// Vnodes is how many coordinating vnode ids writes rotate over
	// (default 3). More vnodes give wider version vectors.
	Vnodes int
	// MaxSiblings is the most siblings (tombstones included) a write may
	// leave on an object; a put or delete that would leave more is refused,
	// with nothing applied, by the error Riak sends: "{too_many_siblings,N}".
	// Zero means DefaultMaxSiblings; a negative value means no limit.
	MaxSiblings int
	// MaxObjectSize is the largest object, in bytes, a write may leave: its
	// siblings' values and metadata, counted here as each value plus
	// objectOverhead (more than Riak's own encoding adds, so that the double
	// refuses whatever Riak refuses). A put or delete that would leave a
	// larger one is refused, with nothing applied, by the error Riak sends:
	// "{too_large,N}". Zero means DefaultMaxObjectSize; a negative value
	// means no limit.
	MaxObjectSize int
	// DeleteMode is how long an object left with only tombstones is kept
	// before it is reaped (README.md). Zero means DefaultDeleteMode;
	// ReapImmediately (any negative value) reaps at once.
	DeleteMode time.Duration
	// Backends are the named backends of a multi-backend node, which a
	// bucket's backend property picks (riak_kv_multi_backend). A bucket
	// without one, or naming one not listed, keeps its objects for good.
	Backends map[string]Backend
	// Clock is the node's clock: write timestamps, delete_mode and
	// backend expiry. Nil means time.Now.
	Clock func() time.Time
}

type bucketID struct{ typ, bucket string }

type objectID struct{ typ, bucket, key string }

// FakeServer is a TEST DOUBLE, not a database: it answers riak-go-client's
// FetchValue, StoreValue, DeleteValue, bucket and bucket-type props, Ping
// and GetServerInfo commands. It is safe for concurrent use; create one
// with Start or NewFakeServer.
type FakeServer struct {
	ln         net.Listener
	vnodes     []string
	rr         atomic.Uint64
	maxSibs    int           // < 0: no limit
	maxSize    int           // bytes; < 0: no limit
	deleteMode time.Duration // < 0: reap at once
	backends   map[string]Backend
	clock      func() time.Time

	counts [numOps]atomic.Int64

	mu      sync.Mutex
	types   map[string]*rpb.RpbBucketProps
	dvv     map[string]bool // dvv_enabled per bucket type
	buckets map[bucketID]*rpb.RpbBucketProps
	objects map[objectID]*object
	faults  map[Op][]Fault
	faultFn func(op Op, key string) Fault
	hist    map[int]int64
	clocks  map[string]uint64 // per-actor write counter, and the last key epoch at ""
	conns   map[net.Conn]struct{}
	closed  bool

	wg sync.WaitGroup
}

// Start starts a FakeServer on 127.0.0.1:0 and closes it when tb's test ends.
func Start(tb testing.TB, opts ...Options) *FakeServer {
	tb.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	s, err := NewFakeServer(o)
	if err != nil {
		tb.Fatalf("riaktest: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// NewFakeServer starts a FakeServer listening on 127.0.0.1 on a free port.
// The caller must Close it.
func NewFakeServer(opts Options) (*FakeServer, error) {
	for name, b := range opts.Backends {
		if b.Expiry < 0 || b.Expiry%time.Second != 0 {
			return nil, fmt.Errorf("backend %q: expiry %v is not a whole number of seconds (bitcask's expiry_secs)", name, b.Expiry)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := newState(opts)
	s.ln = ln
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// newState returns a FakeServer with empty state and no listener: what
// NewFakeServer serves, and what the fuzz targets feed requests to
// directly.
func newState(opts Options) *FakeServer {
	n := opts.Vnodes
	if n <= 0 {
		n = 3
	}
	s := &FakeServer{
		maxSibs:    cmp.Or(opts.MaxSiblings, DefaultMaxSiblings),
		maxSize:    cmp.Or(opts.MaxObjectSize, DefaultMaxObjectSize),
		deleteMode: cmp.Or(opts.DeleteMode, DefaultDeleteMode),
		backends:   maps.Clone(opts.Backends),
		clock:      opts.Clock,
		types:      map[string]*rpb.RpbBucketProps{"default": typeProps(BucketTypeProps{})},
		dvv:        map[string]bool{"default": false},
		buckets:    map[bucketID]*rpb.RpbBucketProps{},
		objects:    map[objectID]*object{},
		faults:     map[Op][]Fault{},
		hist:       map[int]int64{},
		clocks:     map[string]uint64{},
		conns:      map[net.Conn]struct{}{},
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	for i := 0; i < n; i++ {
		s.vnodes = append(s.vnodes, fmt.Sprintf("vnode-%d", i))
	}
	return s
}

// typeProps are the properties of a new bucket type: Riak 3.2's defaults
// (riak_core_bucket_type's common_defaults, as riak_pb_codec encodes
// them: the quorums r, w, dw and rw "quorum", pr and pw 0, notfound_ok
// true, empty commit hooks, ...) with p's.
func typeProps(p BucketTypeProps) *rpb.RpbBucketProps {
	props := &rpb.RpbBucketProps{
		NVal:          proto.Uint32(3),
		AllowMult:     proto.Bool(p.AllowMult),
		LastWriteWins: proto.Bool(p.LastWriteWins),
		Precommit:     []*rpb.RpbCommitHook{},
		HasPrecommit:  proto.Bool(true),
		Postcommit:    []*rpb.RpbCommitHook{},
		HasPostcommit: proto.Bool(true),
		ChashKeyfun:   &rpb.RpbModFun{Module: []byte("riak_core_util"), Function: []byte("chash_std_keyfun")},
		Linkfun:       &rpb.RpbModFun{Module: []byte("riak_kv_wm_link_walker"), Function: []byte("mapreduce_linkfun")},
		OldVclock:     proto.Uint32(86400),
		YoungVclock:   proto.Uint32(20),
		BigVclock:     proto.Uint32(50),
		SmallVclock:   proto.Uint32(50),
		Pr:            proto.Uint32(0),
		R:             proto.Uint32(quorumQuorum),
		W:             proto.Uint32(quorumQuorum),
		Pw:            proto.Uint32(0),
		Dw:            proto.Uint32(quorumQuorum),
		Rw:            proto.Uint32(quorumQuorum),
		BasicQuorum:   proto.Bool(false),
		NotfoundOk:    proto.Bool(true),
		Consistent:    proto.Bool(false),
	}
	if p.Datatype != "" {
		props.Datatype = []byte(p.Datatype)
	}
	if p.Backend != "" {
		props.Backend = []byte(p.Backend)
	}
	return props
}

// Addr is the host:port of the protocol-buffers listener.
func (s *FakeServer) Addr() string { return s.ln.Addr().String() }

// Close stops the listener, closes every client connection and waits for
// the serving goroutines to finish. It is safe to call more than once.
func (s *FakeServer) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	var err error
	if s.ln != nil {
		err = s.ln.Close()
	}
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// CreateBucketType creates and activates a bucket type, like
// `riak admin bucket-type create` followed by `activate`, with
// dvv_enabled=true unless p.DisableDVV is set. Properties Riak refuses at
// creation (last_write_wins=true with dvv_enabled=true, a Datatype with
// allow_mult=false) are refused with its reasons (README.md, "Bucket
// properties"). The "default" type always exists, with Riak's defaults.
func (s *FakeServer) CreateBucketType(name string, p BucketTypeProps) error {
	if name == "" || name == "default" {
		return fmt.Errorf("riaktest: bucket type %q cannot be created", name)
	}
	props := typeProps(p)
	if errs := validateCreate(props, !p.DisableDVV); len(errs) > 0 {
		return fmt.Errorf("riaktest: bucket type %q: %s", name, invalidProps(errs))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.types[name]; ok {
		return fmt.Errorf("riaktest: bucket type %q already exists", name)
	}
	s.types[name] = props
	s.dvv[name] = !p.DisableDVV
	return nil
}

// InjectFault makes the next n requests of kind op fail with f, in arrival
// order. Queued faults take precedence over SetFaultFunc.
func (s *FakeServer) InjectFault(op Op, f Fault, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[op] = append(s.faults[op], slices.Repeat([]Fault{f}, max(n, 0))...)
}

// SetFaultFunc installs fn to choose a fault for every request with no
// queued fault; key is the object key ("" for requests without one). fn is
// called with the server's lock held and must not call back into s. A nil fn
// removes it.
func (s *FakeServer) SetFaultFunc(fn func(op Op, key string) Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faultFn = fn
}

// Requests returns how many requests of kind op have arrived, whether or
// not a fault was injected into them.
func (s *FakeServer) Requests(op Op) int64 {
	if op < 0 || op >= numOps {
		return 0
	}
	return s.counts[op].Load()
}

// ResetRequests zeroes the request counters and the sibling histogram.
func (s *FakeServer) ResetRequests() {
	for i := range s.counts {
		s.counts[i].Store(0)
	}
	s.mu.Lock()
	s.hist = map[int]int64{}
	s.mu.Unlock()
}

// SiblingHistogram returns, for each sibling count, how many successful
// fetches of an existing object returned that many siblings (tombstones
// included).
func (s *FakeServer) SiblingHistogram() map[int]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.hist)
}

// Siblings returns the number of siblings stored for a key (tombstones
// included) and its causal context; 0 and nil if the key does not exist
// (or was reaped).
func (s *FakeServer) Siblings(bucketType, bucket, key string) (int, VClock) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objectLocked(objectID{bucketType, bucket, key})
	if o == nil {
		return 0, nil
	}
	return len(o.sibs), o.vv.Join(nil)
}

// Values returns copies of the live (non-tombstone) sibling values stored
// for a key.
func (s *FakeServer) Values(bucketType, bucket, key string) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objectLocked(objectID{bucketType, bucket, key})
	if o == nil {
		return nil
	}
	var out [][]byte
	for _, sib := range o.sibs {
		if !sib.tombstone() {
			out = append(out, append([]byte(nil), sib.content.Value...))
		}
	}
	return out
}

func (s *FakeServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

// rpcError is an RpbErrorResp to send.
type rpcError string

func (s *FakeServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		_ = c.Close()
	}()
	r := bufio.NewReader(c)
	for {
		code, body, err := readFrame(r)
		if err != nil {
			return
		}
		// An unknown code is the zero kind: OpOther, no key. A body that
		// does not parse is classified by its code alone; handle reports it.
		k, key := kinds[code], ""
		if k.key != nil {
			key = k.key(body)
		}
		s.counts[k.op].Add(1)
		fault := s.nextFault(k.op, key)
		respCode, resp, rerr := byte(0), proto.Message(nil), rpcError("")
		if fault.Applies() {
			respCode, resp, rerr = s.handle(code, body)
		}
		switch fault {
		case CloseBeforeApply, CloseAfterApply:
			return
		case DropResponse:
			continue
		case Refuse:
			rerr = "overload"
		case TimeoutAfterApply:
			rerr = "timeout"
		}
		if rerr != "" {
			respCode, resp = codeErrorResp, &rpb.RpbErrorResp{Errmsg: []byte(rerr), Errcode: proto.Uint32(0)}
		}
		if writeFrame(c, respCode, resp) != nil || rerr.crashed() {
			return
		}
	}
}

func (s *FakeServer) nextFault(op Op, key string) Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.faults[op]; len(q) > 0 {
		s.faults[op] = q[1:]
		return q[0]
	}
	if s.faultFn != nil {
		return s.faultFn(op, key)
	}
	return NoFault
}

func readFrame(r io.Reader) (byte, []byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || n > MaxFrameSize {
		return 0, nil, fmt.Errorf("frame of %d bytes", n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return 0, nil, err
	}
	return buf[0], buf[1:], nil
}

func writeFrame(w io.Writer, code byte, msg proto.Message) error {
	var body []byte
	if msg != nil {
		var err error
		if body, err = proto.Marshal(msg); err != nil {
			return err
		}
	}
	frame := make([]byte, 5+len(body))
	binary.BigEndian.PutUint32(frame, uint32(len(body)+1))
	frame[4] = code
	copy(frame[5:], body)
	_, err := w.Write(frame)
	return err
}

// handler answers one request: a message code and body, or an error
// message.
type handler func(s *FakeServer, body []byte) (byte, proto.Message, rpcError)

// kinds holds, per request code, its Op, how to find the key it addresses
// (nil: none) and its handler.
var kinds = map[byte]struct {
	op     Op
	key    func(body []byte) string
	handle handler
}{
	codePingReq: {OpPing, nil, func(*FakeServer, []byte) (byte, proto.Message, rpcError) { return codePingResp, nil, "" }},
	codeGetServerInfoReq: {OpOther, nil, func(*FakeServer, []byte) (byte, proto.Message, rpcError) {
		return codeGetServerInfoResp, &rpb.RpbGetServerInfoResp{Node: []byte("riaktest@127.0.0.1"), ServerVersion: []byte("riaktest-fake-server")}, ""
	}},
	codeGetReq: {OpGet, keyOf[rpbkv.RpbGetReq], msg((*FakeServer).get)},
	codePutReq: {OpPut, keyOf[rpbkv.RpbPutReq], msg((*FakeServer).put)},
	codeDelReq: {OpDelete, keyOf[rpbkv.RpbDelReq], msg((*FakeServer).del)},
	codeGetBucketReq: {OpGetBucket, nil, msg(func(s *FakeServer, m *rpb.RpbGetBucketReq) (byte, proto.Message, rpcError) {
		return s.getBucket(typeName(m.Type), string(m.Bucket))
	})},
	codeGetBucketTypeReq: {OpGetBucket, nil, msg(func(s *FakeServer, m *rpb.RpbGetBucketTypeReq) (byte, proto.Message, rpcError) {
		return s.getBucket(typeName(m.Type), "")
	})},
	codeSetBucketReq: {OpSetBucket, nil, msg(func(s *FakeServer, m *rpb.RpbSetBucketReq) (byte, proto.Message, rpcError) {
		return s.setBucket(typeName(m.Type), string(m.Bucket), m.Props)
	})},
	codeResetBucketReq: {OpSetBucket, nil, msg(func(s *FakeServer, m *rpb.RpbResetBucketReq) (byte, proto.Message, rpcError) {
		return s.resetBucket(typeName(m.Type), string(m.Bucket))
	})},
	codeSetBucketTypeReq: {OpSetBucket, nil, msg(func(s *FakeServer, m *rpb.RpbSetBucketTypeReq) (byte, proto.Message, rpcError) {
		return s.setBucketType(typeName(m.Type), m.Props)
	})},
}

// keyOf decodes body as an M and returns its key ("" if it does not decode
// that far).
func keyOf[M any, P interface {
	*M
	proto.Message
	GetKey() []byte
}](body []byte) string {
	m := P(new(M))
	_ = proto.Unmarshal(body, m)
	return string(m.GetKey())
}

// typeName is the bucket type a request names: an absent type is
// "default"; a present one is taken as given, so that an empty one names a
// type "" that does not exist, as Riak reads it (riak_kv_pb_object's
// maybe_bucket_type, riak_core_pb_bucket's maybe_create_bucket_type).
func typeName(t []byte) string {
	if t == nil {
		return "default"
	}
	return string(t)
}

// handle applies one request and returns the response to send: a message
// code and body, or an error message.
func (s *FakeServer) handle(code byte, body []byte) (byte, proto.Message, rpcError) {
	if k, ok := kinds[code]; ok {
		return k.handle(s, body)
	}
	// riak_api_pb_server's answer, formatted with ~p.
	return 0, nil, rpcError(fmt.Sprintf("Unknown message code: %d", code))
}

// msg makes fn a handler: it decodes the body as an M, and answers a body
// that does not decode with an error naming the message.
func msg[M any, P interface {
	*M
	proto.Message
}](fn func(*FakeServer, P) (byte, proto.Message, rpcError)) handler {
	return func(s *FakeServer, body []byte) (byte, proto.Message, rpcError) {
		m := P(new(M))
		if err := proto.Unmarshal(body, m); err != nil {
			return 0, nil, rpcError(fmt.Sprintf("bad %s: %v", reflect.TypeFor[M]().Name(), err))
		}
		return fn(s, m)
	}
}

// propsLocked returns the effective properties of a bucket (its type's,
// overlaid with the bucket's own), or an error if the type does not exist.
func (s *FakeServer) propsLocked(typ, bucket string) (*rpb.RpbBucketProps, rpcError) {
	tp, ok := s.types[typ]
	if !ok {
		return nil, noSuchType
	}
	p := proto.Clone(tp).(*rpb.RpbBucketProps)
	if bp := s.buckets[bucketID{typ, bucket}]; bp != nil { // none for bucket ""
		proto.Merge(p, bp)
	}
	return p, ""
}

// noSuchType is Riak's answer to a fetch, store or delete in a bucket type
// that does not exist (or is not active): riak_client's
// riak_kv_util:consistent_object check gets {error,no_type} from
// riak_core_bucket:get_bucket, and riak_kv_pb_object sends the reason
// printed with ~p.
const noSuchType rpcError = "no_type"

// noType is Riak's answer to a bucket-properties request for a bucket of a
// bucket type that does not exist.
func noType(typ string) rpcError {
	return rpcError(fmt.Sprintf("No bucket-type named '%s'", typ))
}

func (s *FakeServer) getBucket(typ, bucket string) (byte, proto.Message, rpcError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.types[typ]; !ok {
		if bucket == "" {
			// RpbGetBucketTypeReq: Riak formats the name with ~p, which
			// prints an empty binary as <<>>.
			if typ == "" {
				return 0, nil, "Invalid bucket type: <<>>"
			}
			return 0, nil, rpcError(fmt.Sprintf("Invalid bucket type: <<%q>>", typ))
		}
		return 0, nil, noType(typ)
	}
	p, _ := s.propsLocked(typ, bucket) // the type exists
	return codeGetBucketResp, &rpb.RpbGetBucketResp{Props: p}, ""
}

// setBucket validates and stores a bucket's own properties, as Riak's
// riak_core_bucket:set_bucket does: refused properties change nothing.
func (s *FakeServer) setBucket(typ, bucket string, props *rpb.RpbBucketProps) (byte, proto.Message, rpcError) {
	if bucket == "" {
		return 0, nil, "bucket is required"
	}
	if props == nil {
		return 0, nil, "props are required"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.types[typ]; !ok {
		return 0, nil, noType(typ)
	}
	existing, _ := s.propsLocked(typ, bucket)
	if errs := validateUpdate(typ == "default", existing, s.dvv[typ], props); len(errs) > 0 {
		return 0, nil, rpcError(invalidProps(errs))
	}
	id := bucketID{typ, bucket}
	bp := s.buckets[id]
	if bp == nil {
		bp = &rpb.RpbBucketProps{}
		s.buckets[id] = bp
	}
	proto.Merge(bp, props)
	return codeSetBucketResp, nil, ""
}

// setBucketType validates and stores a created bucket type's properties.
// Riak refuses to update the "default" type, whose properties come from
// its configuration file.
func (s *FakeServer) setBucketType(typ string, props *rpb.RpbBucketProps) (byte, proto.Message, rpcError) {
	if props == nil {
		return 0, nil, "props are required"
	}
	if typ == "default" {
		return 0, nil, rpcError(invalidProps(nil) + "no_default_update")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tp, ok := s.types[typ]
	if !ok {
		// riak_core_claimant's update_bucket_type finds no properties for
		// the type and so refuses it as inactive: {error,not_active},
		// printed with ~p by riak_core_pb_bucket_type.
		return 0, nil, rpcError(invalidProps(nil) + "not_active")
	}
	if errs := validateUpdate(false, tp, s.dvv[typ], props); len(errs) > 0 {
		return 0, nil, rpcError(invalidProps(errs))
	}
	proto.Merge(tp, props)
	return codeSetBucketResp, nil, ""
}

// resetBucket drops a bucket's own properties. Riak answers success even
// for a bucket type that does not exist.
func (s *FakeServer) resetBucket(typ, bucket string) (byte, proto.Message, rpcError) {
	if bucket == "" {
		return 0, nil, "bucket is required"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.buckets, bucketID{typ, bucket})
	return codeResetBucketResp, nil, ""
}

// crashPrefix starts the answer riak_api_pb_server sends when the
// handler of a request crashed ("Error processing incoming message:
// ~p:~p:~p", the class, the reason and the stack trace); it then closes
// the connection. The double does the same.
const crashPrefix = "Error processing incoming message: "

// crashed reports whether rerr is a crash report, after which the
// connection is closed.
func (rerr rpcError) crashed() bool { return strings.HasPrefix(string(rerr), crashPrefix) }

// decodeContext decodes a request's vclock. Riak's handler decodes it with
// riak_object:decode_vclock, which crashes on bytes it did not encode, so
// bytes that do not decode get a crash report naming decode_vclock, with
// the double's reason in it.
func decodeContext(b []byte) (VClock, rpcError) {
	var vc VClock
	if err := vc.UnmarshalBinary(b); err != nil {
		return nil, rpcError(fmt.Sprintf("%serror:{badarg,%q}:[{riak_object,decode_vclock,2,[]},"+
			"{riak_kv_pb_object,process,2,[]},{riak_api_pb_server,process_message,4,[]}]", crashPrefix, err.Error()))
	}
	return vc, ""
}

// zeroLength is Riak 3.2's refusal of a get or put (riak_kv_pb_object's
// process/2 clauses, in their order) whose bucket or key is empty, or
// whose type is present but empty; "" if it has none of these. A put
// without a key (the field absent) is not refused: Riak makes up a key.
func zeroLength(bucket, key, typ []byte, keyOptional bool) rpcError {
	switch {
	case len(bucket) == 0:
		return "Bucket cannot be zero-length"
	case len(key) == 0 && !(keyOptional && key == nil):
		return "Key cannot be zero-length"
	case typ != nil && len(typ) == 0:
		return "Type cannot be zero-length"
	}
	return ""
}

func (s *FakeServer) get(m *rpbkv.RpbGetReq) (byte, proto.Message, rpcError) {
	if rerr := zeroLength(m.Bucket, m.Key, m.Type, false); rerr != "" {
		return 0, nil, rerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	typ := typeName(m.Type)
	props, rerr := s.propsLocked(typ, string(m.Bucket))
	if rerr != "" {
		return 0, nil, rerr
	}
	if rerr := readQuorumError(props, m.R, m.Pr); rerr != "" {
		return 0, nil, rerr
	}
	o := s.objectLocked(objectID{typ, string(m.Bucket), string(m.Key)})
	if o == nil {
		return codeGetResp, nil, "" // not found: an empty RpbGetResp
	}
	vc, err := o.vv.MarshalBinary()
	if err != nil {
		return 0, nil, rpcError(err.Error())
	}
	if !o.live() {
		// Only tombstones, not yet reaped: "not found", unless the client
		// asked for the tombstone's vclock (a response with a vclock and
		// no content).
		if m.GetDeletedvclock() {
			return codeGetResp, &rpbkv.RpbGetResp{Vclock: vc}, ""
		}
		return codeGetResp, nil, ""
	}
	if len(m.IfModified) > 0 {
		ctx, rerr := decodeContext(m.IfModified)
		if rerr != "" {
			return 0, nil, rerr
		}
		if ctx.Equal(o.vv) {
			// Riak answers #rpbgetresp{unchanged = true}: no vclock.
			return codeGetResp, &rpbkv.RpbGetResp{Unchanged: proto.Bool(true)}, ""
		}
	}
	s.hist[len(o.sibs)]++
	return codeGetResp, &rpbkv.RpbGetResp{Vclock: vc, Content: o.contents(m.GetHead())}, ""
}

// objectLocked returns the object stored under id, reaping it first if it
// holds only tombstones and its delete_mode has passed, or if its bucket's
// backend has expired it (as bitcask's get drops an expired key from its
// keydir: it is gone, its vclock with it).
func (s *FakeServer) objectLocked(id objectID) *object {
	o := s.objects[id]
	if o == nil {
		return nil
	}
	now := s.clock()
	reaped := !o.reapAt.IsZero() && !o.live() && !now.Before(o.reapAt)
	if reaped || expired(o.written, now, s.expiryLocked(id.typ, id.bucket)) {
		delete(s.objects, id)
		return nil
	}
	return o
}

// expiryLocked returns the expiry of the backend a bucket's backend
// property names (0: none).
func (s *FakeServer) expiryLocked(typ, bucket string) time.Duration {
	p, rerr := s.propsLocked(typ, bucket)
	if rerr != "" || len(p.Backend) == 0 {
		return 0
	}
	return s.backends[string(p.Backend)].Expiry
}

// expired is bitcask's test of a key on get (bitcask:get/3, expiry_time/1):
// its timestamp, the write's second (bitcask_time:tstamp(), truncated),
// is below the current second less expiry_secs. So an object written at
// second w is read up to the end of second w + expiry: more than expiry
// after the write, at most a second more.
func expired(written, now time.Time, expiry time.Duration) bool {
	return expiry > 0 && written.Unix() < now.Unix()-int64(expiry/time.Second)
}

// writeLocked returns old with content written under ctx in a bucket of
// type typ and properties p, coordinated by the next vnode (round robin), or
// Riak's refusal when the result has more siblings than max_siblings allows
// or is larger than max_object_size.
func (s *FakeServer) writeLocked(typ string, p *rpb.RpbBucketProps, old *object, ctx VClock, content *rpbkv.RpbContent, now time.Time) (*object, rpcError) {
	wp := writeProps{allowMult: p.GetAllowMult(), lastWriteWins: p.GetLastWriteWins(), dvv: s.dvv[typ]}
	next := apply(old, ctx, content, wp, s.vnodes[int(s.rr.Add(1)-1)%len(s.vnodes)], s.clocks, now)
	if s.maxSibs >= 0 && len(next.sibs) > s.maxSibs {
		return nil, rpcError(fmt.Sprintf("{too_many_siblings,%d}", len(next.sibs)))
	}
	if n := next.size(); s.maxSize >= 0 && n > s.maxSize {
		return nil, rpcError(fmt.Sprintf("{too_large,%d}", n))
	}
	return next, ""
}

func (s *FakeServer) put(m *rpbkv.RpbPutReq) (byte, proto.Message, rpcError) {
	if rerr := zeroLength(m.Bucket, m.Key, m.Type, true); rerr != "" {
		return 0, nil, rerr
	}
	if m.Content == nil {
		return 0, nil, "content is required"
	}
	ctx, rerr := decodeContext(m.Vclock)
	if rerr != "" {
		return 0, nil, rerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	typ := typeName(m.Type)
	props, rerr := s.propsLocked(typ, string(m.Bucket))
	if rerr != "" {
		return 0, nil, rerr
	}
	key, generated := string(m.Key), false
	if m.Key == nil { // absent, not empty: Riak generates a key
		var b [10]byte
		_, _ = rand.Read(b[:])
		key, generated = hex.EncodeToString(b[:]), true
	}
	id := objectID{typ, string(m.Bucket), key}
	old := s.objectLocked(id)
	if m.GetIfNoneMatch() || m.GetIfNotModified() {
		// Riak reads the key first (riak_kv_pb_object), with the bucket's
		// quorums, a key with no live value, only tombstones included,
		// being "notfound" to it, and tries if_none_match first: with both
		// set, a put on a key it does not find goes ahead. A read Riak
		// refuses finds nothing for if_none_match, and its refusal is the
		// answer for if_not_modified alone.
		readErr := readQuorumError(props, nil, nil)
		found := old != nil && old.live() && readErr == ""
		switch {
		case readErr != "" && !m.GetIfNoneMatch():
			return 0, nil, readErr
		case found && m.GetIfNoneMatch():
			return 0, nil, "match_found"
		case found && !ctx.Equal(old.vv):
			return 0, nil, "modified"
		case !found && !m.GetIfNoneMatch():
			return 0, nil, "notfound"
		}
	}
	if rerr := writeQuorumError(props, m.W, m.Dw, m.Pw); rerr != "" {
		return 0, nil, rerr
	}
	// A content with the deleted field is stored as a tombstone, with the
	// field as sent (riak_pb_kv_codec keeps it; object.go, sibling).
	content := proto.Clone(m.Content).(*rpbkv.RpbContent)
	now := s.clock()
	next, rerr := s.writeLocked(typ, props, old, ctx, content, now)
	if rerr != "" {
		return 0, nil, rerr
	}
	s.storeLocked(id, next, now)
	resp := &rpbkv.RpbPutResp{}
	if generated {
		resp.Key = []byte(key)
	}
	if m.GetReturnBody() || m.GetReturnHead() {
		vc, err := next.vv.MarshalBinary()
		if err != nil {
			return 0, nil, rpcError(err.Error())
		}
		// return_head blanks the values even with return_body set.
		resp.Vclock, resp.Content = vc, next.contents(m.GetReturnHead())
	}
	if !generated && resp.Vclock == nil {
		return codePutResp, nil, ""
	}
	return codePutResp, resp, ""
}

// del deletes as Riak 3.2 does (riak_kv_pb_object, riak_kv_delete). A
// delete without a vclock reads the key first: a key that does not exist,
// or holds only tombstones, is "not found" to that read, and the delete
// succeeds writing nothing; otherwise it writes a tombstone with the
// vclock it read. A delete with a vclock writes a tombstone with it
// without reading, also where nothing is stored (the tombstone is reaped
// after delete_mode like any other); an empty vclock is Riak's fresh one,
// which covers nothing. Its protocol-buffers delete has no zero-length
// check on the key (riak_kv_pb_object checks only get and put): a delete
// of the empty key stores nothing that a get can read.
func (s *FakeServer) del(m *rpbkv.RpbDelReq) (byte, proto.Message, rpcError) {
	if len(m.Bucket) == 0 {
		return 0, nil, "bucket is required"
	}
	ctx, rerr := decodeContext(m.Vclock)
	if rerr != "" {
		return 0, nil, rerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	typ := typeName(m.Type)
	props, rerr := s.propsLocked(typ, string(m.Bucket))
	if rerr != "" {
		return 0, nil, rerr
	}
	id := objectID{typ, string(m.Bucket), string(m.Key)}
	old := s.objectLocked(id)
	if m.Vclock == nil {
		if rerr := deleteReadQuorumError(props, m); rerr != "" {
			return 0, nil, rerr
		}
		if old == nil || !old.live() {
			return codeDelResp, nil, ""
		}
		ctx = old.vv
	}
	if rerr := deleteWriteQuorumError(props, m); rerr != "" {
		return 0, nil, rerr
	}
	tomb := &rpbkv.RpbContent{Value: []byte{}, Deleted: proto.Bool(true)}
	now := s.clock()
	next, rerr := s.writeLocked(typ, props, old, ctx, tomb, now)
	if rerr != "" {
		return 0, nil, rerr
	}
	s.storeLocked(id, next, now)
	return codeDelResp, nil, ""
}

// storeLocked stores next, written at now, under id. An object left with
// only tombstones is reaped after delete_mode: Riak's get finding only
// tombstones on every vnode of the key (riak_kv_delete's own get after a
// delete, or any other) has them deleted after delete_mode.
func (s *FakeServer) storeLocked(id objectID, next *object, now time.Time) {
	switch {
	case next.live():
		s.objects[id] = next
	case s.deleteMode < 0:
		delete(s.objects, id) // delete_mode=immediate
	default:
		next.reapAt = now.Add(s.deleteMode) // reaped by objectLocked
		s.objects[id] = next
	}
}

package riak_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"

	rpb "github.com/basho/riak-go-client/rpb/riak"
	//lint:ignore SA1019 riak-go-client v1.7.0 generates its messages with github.com/golang/protobuf (API v1); this package marshals them as the client does
	"github.com/golang/protobuf/proto"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
	"github.com/counterkit/counterkit/crdt"
)

// faultProxy is a loopback TCP proxy in front of a Riak protocol-buffers
// listener (a real Riak or the test double) that injects riaktest's faults
// into the requests it relays, so that tests that need faults run against
// a real Riak too. Riak's protocol-buffers clients send one request and
// read its one response before sending the next on a connection, which is
// what the proxy relies on. Each client connection gets its own upstream
// connection; closing one closes the other.
//
// "Apply" means the request reached the server and was answered: a fault
// after applying is injected into the answer, one before applying keeps
// the request from the server. A faultProxy is safe for concurrent use.
type faultProxy struct {
	ln       net.Listener
	upstream string

	mu     sync.Mutex
	fn     func(op riaktest.Op, key string) riaktest.Fault
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// startFaultProxy starts a proxy to upstream (host:port) and closes it when
// the test ends. It injects no fault until setFaultFunc.
func startFaultProxy(t testing.TB, upstream string) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fault proxy: %v", err)
	}
	p := &faultProxy{ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *faultProxy) addr() string { return p.ln.Addr().String() }

// setFaultFunc installs fn to choose the fault for each request (nil: no
// faults). fn is called with the proxy's lock held.
func (p *faultProxy) setFaultFunc(fn func(op riaktest.Op, key string) riaktest.Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fn = fn
}

func (p *faultProxy) fault(op riaktest.Op, key string) riaktest.Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fn == nil {
		return riaktest.NoFault
	}
	return p.fn(op, key)
}

func (p *faultProxy) close() {
	p.mu.Lock()
	p.closed = true
	_ = p.ln.Close()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// track registers c to be closed by close; false if the proxy is closed.
func (p *faultProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *faultProxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *faultProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			return
		}
		p.wg.Add(1)
		go p.relay(c)
	}
}

// Riak protocol-buffers message codes the proxy looks at.
const (
	pbErrorResp = 0
	pbGetReq    = 9
	pbPutReq    = 11
	pbDelReq    = 13
)

func (p *faultProxy) relay(client net.Conn) {
	defer p.wg.Done()
	defer p.untrack(client)
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	for {
		req, err := readPBFrame(client)
		if err != nil {
			return
		}
		op, key := classifyPB(req)
		f := p.fault(op, key)
		switch f {
		case riaktest.Refuse:
			if writePBError(client, "overload") != nil {
				return
			}
			continue
		case riaktest.CloseBeforeApply:
			return
		}
		if _, err := server.Write(req); err != nil {
			return
		}
		resp, err := readPBFrame(server)
		if err != nil {
			return
		}
		switch f {
		case riaktest.DropResponse:
			continue // the client times out and closes the connection
		case riaktest.CloseAfterApply:
			return
		case riaktest.TimeoutAfterApply:
			err = writePBError(client, "timeout")
		default:
			_, err = client.Write(resp)
		}
		if err != nil {
			return
		}
	}
}

// readPBFrame reads one frame: a 4-byte big-endian length, then that many
// bytes (a message code and a protobuf body). It returns the whole frame.
func readPBFrame(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || n > riaktest.MaxFrameSize {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	frame := make([]byte, 4+n)
	copy(frame, hdr[:])
	if _, err := io.ReadFull(r, frame[4:]); err != nil {
		return nil, err
	}
	return frame, nil
}

// classifyPB returns the op of a request frame. The key is not decoded:
// the proxy's faults do not depend on it.
func classifyPB(frame []byte) (riaktest.Op, string) {
	switch frame[4] {
	case pbGetReq:
		return riaktest.OpGet, ""
	case pbPutReq:
		return riaktest.OpPut, ""
	case pbDelReq:
		return riaktest.OpDelete, ""
	}
	return riaktest.OpOther, ""
}

func writePBError(w io.Writer, msg string) error {
	body, err := proto.Marshal(&rpb.RpbErrorResp{Errmsg: []byte(msg), Errcode: proto.Uint32(0)})
	if err != nil {
		return err
	}
	frame := make([]byte, 5+len(body))
	binary.BigEndian.PutUint32(frame, uint32(1+len(body)))
	frame[4] = pbErrorResp
	copy(frame[5:], body)
	_, err = w.Write(frame)
	return err
}

// TestFaultProxy: each fault the proxy injects into a put reaches the
// Store as the double's own fault does (refused or ambiguous), and the
// write lands on the server exactly when the fault applies it.
func TestFaultProxy(t *testing.T) {
	for _, f := range []riaktest.Fault{riaktest.NoFault, riaktest.Refuse, riaktest.CloseBeforeApply,
		riaktest.DropResponse, riaktest.CloseAfterApply, riaktest.TimeoutAfterApply} {
		t.Run(f.String(), func(t *testing.T) {
			srv, _ := fakeCluster(t)
			p := startFaultProxy(t, srv.Addr())
			cl := newCluster(t, p.addr())
			s := newStore(t, cl, riak.Options{RetryCount: riak.NoRetries})
			key := uniqueKey("proxy")
			var once sync.Once
			p.setFaultFunc(func(op riaktest.Op, _ string) riaktest.Fault {
				fault := riaktest.NoFault
				if op == riaktest.OpPut {
					once.Do(func() { fault = f })
				}
				return fault
			})
			err := s.Put(ctx, key, "a", []byte("v"), nil)
			switch f {
			case riaktest.NoFault:
				require.NoError(t, err)
			default: // a refusal too: a put a node forwarded first may land
				require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			}
			require.Equal(t, int64(map[bool]int{true: 1}[f.Applies()]), srv.Requests(riaktest.OpPut))
			if f.Applies() {
				require.Equal(t, [][]byte{[]byte("v")}, srv.Values(fakeType, testBucket, key))
			} else {
				require.Empty(t, srv.Values(fakeType, testBucket, key))
			}
			// Later requests go through (on a new connection once the
			// driver's health check passes, if the fault closed one).
			sibs, _, err := newStore(t, cl, riak.Options{}).Fetch(ctx, key)
			require.NoError(t, err)
			require.Len(t, sibs, len(srv.Values(fakeType, testBucket, key)))
		})
	}
}

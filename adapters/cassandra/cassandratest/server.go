package cassandratest

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/datastax/go-cassandra-native-protocol/segment"
)

// Options configure a Server. The zero value is ready to use; it is a
// plain value, safe to copy and share.
type Options struct {
	// Now is the node's clock: it dates the expiry of a cell written with
	// a TTL (in whole seconds, truncated), decides whether a cell is live,
	// and gives the timestamp of a write that sets none. Nil means
	// time.Now.
	Now func() time.Time
	// Latency delays the answer to every request that reads or writes a
	// user table (QUERY, EXECUTE or BATCH): the request is applied first,
	// then the answer waits, so a client whose timeout expires meanwhile
	// sees a write that did land. Other requests (handshake, PREPARE,
	// schema changes, system tables) are answered at once.
	Latency time.Duration
}

// Server is a test double of a one-node Cassandra 4.0 cluster, not a
// database: it speaks the CQL native protocol (v3, v4 and v5) on a loopback
// port and keeps its tables in memory. It is safe for concurrent use;
// create one with Start or NewServer.
type Server struct {
	opts   Options
	now    func() time.Time
	ln     net.Listener
	port   int
	hostID [16]byte

	mu        sync.Mutex
	keyspaces map[string]*keyspace
	prepared  map[string]*prepared
	conns     map[net.Conn]struct{}
	closed    bool

	closing chan struct{}
	wg      sync.WaitGroup

	queries, prepares, executes, batches, reads atomic.Int64
}

// connState is what the server keeps per connection.
type connState struct {
	nc      net.Conn
	modern  atomic.Bool // v5 segments, from the READY on
	writeMu sync.Mutex
	mu      sync.Mutex
	ks      string // USE
	started bool   // STARTUP answered
}

// Start starts a Server on 127.0.0.1:0 and closes it when tb's test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := NewServer(opts)
	if err != nil {
		tb.Fatalf("cassandratest: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// NewServer starts a Server listening on 127.0.0.1 on a free port. The
// caller must Close it.
func NewServer(opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := &Server{opts: opts, now: opts.Now, ln: ln, port: ln.Addr().(*net.TCPAddr).Port,
		keyspaces: map[string]*keyspace{}, prepared: map[string]*prepared{}, conns: map[net.Conn]struct{}{}, closing: make(chan struct{})}
	if s.now == nil {
		s.now = time.Now
	}
	_, _ = rand.Read(s.hostID[:])
	s.hostID[6] = s.hostID[6]&0x0f | 0x40 // a version 4 UUID
	s.hostID[8] = s.hostID[8]&0x3f | 0x80
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr is the host:port of the native protocol listener, usable as a
// gocql host.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Close stops the listener, closes every client connection and waits for
// the serving goroutines to finish; requests still waiting out
// Options.Latency are not answered. It is safe to call more than once.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.closing)
	_ = s.ln.Close()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = nc.Close()
			return
		}
		s.conns[nc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(&connState{nc: nc})
	}
}

// serveConn reads requests until the connection ends and answers each in
// a goroutine of its own, as a node answers in any order. Framing is the
// library's: frames (v3, v4, and v5 until READY), then v5 segments, a
// frame above one segment's payload spread over several.
func (s *Server) serveConn(c *connState) {
	var reqs sync.WaitGroup
	defer func() {
		_ = c.nc.Close()
		reqs.Wait()
		s.mu.Lock()
		delete(s.conns, c.nc)
		s.mu.Unlock()
		s.wg.Done()
	}()
	r := bufio.NewReader(c.nc)
	codec, segCodec := frame.NewCodec(), segment.NewCodec()
	var pending []byte // a frame spread over segments, so far
	dispatch := func(f *frame.Frame) {
		if _, ok := f.Body.Message.(*message.Startup); ok {
			// Answered before reading on: READY switches v5 to segments.
			if resp := s.handle(f, c); resp != nil {
				s.send(c, codec, segCodec, resp)
			}
			return
		}
		reqs.Add(1)
		go func() {
			defer reqs.Done()
			if resp := s.handle(f, c); resp != nil {
				s.send(c, codec, segCodec, resp)
			}
		}()
	}
	for {
		if !c.modern.Load() {
			f, err := codec.DecodeFrame(r)
			if err != nil {
				return
			}
			dispatch(f)
			continue
		}
		seg, err := segCodec.DecodeSegment(r)
		if err != nil {
			return
		}
		data := seg.Payload.UncompressedData
		if !seg.Header.IsSelfContained {
			pending = append(pending, data...)
			if len(pending) < primitive.FrameHeaderLengthV3AndHigher ||
				len(pending) < primitive.FrameHeaderLengthV3AndHigher+int(binary.BigEndian.Uint32(pending[5:9])) {
				continue
			}
			data, pending = pending, nil
		}
		for src := bytes.NewReader(data); src.Len() > 0; {
			f, err := codec.DecodeFrame(src)
			if err != nil {
				return
			}
			dispatch(f)
		}
	}
}

// send writes one response: a frame, or (v5, after READY) the frame in one
// self-contained segment, or over several when it is larger than one
// segment's payload.
func (s *Server) send(c *connState, codec frame.Codec, segCodec segment.Codec, f *frame.Frame) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	var buf bytes.Buffer
	if err := codec.EncodeFrame(f, &buf); err != nil {
		_ = c.nc.Close()
		return
	}
	w := bufio.NewWriter(c.nc)
	if !c.modern.Load() {
		_, _ = w.Write(buf.Bytes())
		_ = w.Flush()
		if _, ok := f.Body.Message.(*message.Ready); ok && f.Header.Version >= primitive.ProtocolVersion5 {
			c.modern.Store(true)
		}
		return
	}
	data := buf.Bytes()
	whole := len(data) <= segment.MaxPayloadLength
	for len(data) > 0 {
		n := min(len(data), segment.MaxPayloadLength)
		seg := &segment.Segment{Header: &segment.Header{IsSelfContained: whole}, Payload: &segment.Payload{UncompressedData: data[:n]}}
		if err := segCodec.EncodeSegment(seg, w); err != nil {
			_ = c.nc.Close()
			return
		}
		data = data[n:]
	}
	_ = w.Flush()
}

// Stats counts the requests a Server has received.
type Stats struct {
	Queries  int64 // QUERY messages
	Prepares int64 // PREPARE messages
	Executes int64 // EXECUTE messages
	Batches  int64 // BATCH messages
	Reads    int64 // pages of a user table read
}

// Stats returns the request counts so far.
func (s *Server) Stats() Stats {
	return Stats{Queries: s.queries.Load(), Prepares: s.prepares.Load(), Executes: s.executes.Load(),
		Batches: s.batches.Load(), Reads: s.reads.Load()}
}

// ForgetPrepared drops every prepared statement, as a restart does: the
// next EXECUTE of each is answered Unprepared, and the client prepares it
// again.
func (s *Server) ForgetPrepared() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.prepared)
}

// handle answers one request: the handshake (OPTIONS, STARTUP,
// REGISTER), then statements. Protocol v5 and later is served as v5.
func (s *Server) handle(req *frame.Frame, c *connState) *frame.Frame {
	select {
	case <-s.closing:
		return nil
	default:
	}
	resp, slow := s.serveSafely(req, c)
	if slow && s.opts.Latency > 0 {
		t := time.NewTimer(s.opts.Latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-s.closing:
			return nil
		}
	}
	return frame.NewFrame(req.Header.Version, req.Header.StreamId, resp)
}

// serveSafely is serve, with a panic (a bug of the double) answered as a
// server error instead of ending the test binary.
func (s *Server) serveSafely(req *frame.Frame, c *connState) (resp message.Message, slow bool) {
	defer func() {
		if r := recover(); r != nil {
			resp, slow = &message.ServerError{ErrorMessage: fmt.Sprintf("cassandratest: %v", r)}, false
		}
	}()
	return s.serve(req, c)
}

// serve runs one request; slow reports a request that Options.Latency
// delays.
func (s *Server) serve(req *frame.Frame, cs *connState) (resp message.Message, slow bool) {
	cs.mu.Lock()
	ks := cs.ks
	cs.mu.Unlock()
	setKS := func(k string) { cs.mu.Lock(); cs.ks = k; cs.mu.Unlock() }
	if req.Header.Version > primitive.ProtocolVersion5 || req.Header.Version < primitive.ProtocolVersion3 {
		return &message.ProtocolError{ErrorMessage: fmt.Sprintf("Invalid or unsupported protocol version (%d); supported versions are (3/v3, 4/v4, 5/v5)",
			req.Header.Version)}, false
	}
	cs.mu.Lock()
	started := cs.started
	cs.mu.Unlock()
	switch m := req.Body.Message.(type) {
	case *message.Options:
		return &message.Supported{Options: map[string][]string{"CQL_VERSION": {"3.4.5"}, "COMPRESSION": {},
			"PROTOCOL_VERSIONS": {"3/v3", "4/v4", "5/v5"}}}, false
	case *message.Startup:
		if c := m.GetCompression(); c != primitive.CompressionNone {
			return &message.ProtocolError{ErrorMessage: fmt.Sprintf("the test double does not support compression %v", c)}, false
		}
		cs.mu.Lock()
		cs.started = true
		cs.mu.Unlock()
		return &message.Ready{}, false
	case *message.Register:
		return &message.Ready{}, false
	}
	if !started {
		return &message.ProtocolError{ErrorMessage: "Unexpected message, expecting STARTUP or OPTIONS"}, false
	}
	switch m := req.Body.Message.(type) {
	case *message.Query:
		s.queries.Add(1)
		opts := m.Options
		if opts == nil {
			opts = &message.QueryOptions{}
		}
		p, err := s.prepare(m.Query, cmpOr(opts.Keyspace, ks))
		if err != nil {
			return err, false
		}
		return s.run(p, opts, setKS), p.tbl != nil
	case *message.Prepare:
		s.prepares.Add(1)
		p, err := s.prepare(m.Query, cmpOr(m.Keyspace, ks))
		if err != nil {
			return err, false
		}
		s.mu.Lock()
		s.prepared[string(p.id)] = p
		s.mu.Unlock()
		result := p.result
		return &message.PreparedResult{PreparedQueryId: p.id, ResultMetadataId: p.id,
			VariablesMetadata: &message.VariablesMetadata{PkIndices: p.pkIdx, Columns: p.vars},
			ResultMetadata:    &message.RowsMetadata{ColumnCount: int32(len(result)), Columns: result}}, false
	case *message.Execute:
		s.executes.Add(1)
		p, err := s.lookupPrepared(m.QueryId)
		if err != nil {
			return err, false
		}
		opts := m.Options
		if opts == nil {
			opts = &message.QueryOptions{}
		}
		return s.run(p, opts, setKS), p.tbl != nil
	case *message.Batch:
		s.batches.Add(1)
		return s.batch(m, cmpOr(m.Keyspace, ks)), true
	}
	return &message.ProtocolError{ErrorMessage: fmt.Sprintf("unexpected message %v", req.Body.Message)}, false
}

// lookupPrepared finds a prepared statement whose table is still the
// one it was prepared on; otherwise the answer is Unprepared.
func (s *Server) lookupPrepared(id []byte) (*prepared, message.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.prepared[string(id)]
	if p != nil && p.tbl != nil {
		if k := s.keyspaces[p.tbl.ks]; k == nil || k.tables[p.tbl.name] != p.tbl {
			delete(s.prepared, string(id))
			p = nil
		}
	}
	if p == nil {
		return nil, &message.Unprepared{ErrorMessage: fmt.Sprintf("Prepared query with ID %s not found (either the query was not prepared "+
			"on this host (maybe the host has been restarted?) or you have prepared too many queries and it has been evicted "+
			"from the internal cache)", hex.EncodeToString(id)), Id: id}
	}
	return p, nil
}

// bindValues checks the number of values against the statement's
// markers.
func bindValues(p *prepared, vals []*primitive.Value, named map[string]*primitive.Value) (binding, message.Error) {
	if len(named) > 0 && len(vals) == 0 {
		return binding{}, invalid("the test double does not support named values")
	}
	if len(vals) != len(p.vars) {
		return binding{}, invalid("There were %d markers(?) in CQL but %d bound variables", len(p.vars), len(vals))
	}
	return binding{vals: vals}, nil
}

// run executes a prepared statement with a request's options.
func (s *Server) run(p *prepared, opts *message.QueryOptions, setKS func(string)) message.Message {
	b, err := bindValues(p, opts.PositionalValues, opts.NamedValues)
	if err != nil {
		return err
	}
	switch p.stmt.(type) {
	case selectStmt:
		if p.sys != nil {
			return s.readSystem(p, b, opts.Consistency)
		}
		return s.read(p, b, opts.Consistency, opts.PageSize, opts.PagingState)
	case insertStmt, updateStmt, deleteStmt:
		return s.write([]*prepared{p}, []binding{b}, opts.Consistency, opts.DefaultTimestamp, nil)
	}
	return s.ddl(p, setKS)
}

// batch runs a BATCH of prepared and unprepared statements as one write.
func (s *Server) batch(m *message.Batch, ks string) message.Message {
	stmts := make([]*prepared, len(m.Children))
	binds := make([]binding, len(m.Children))
	for i, child := range m.Children {
		var p *prepared
		var err message.Error
		if child.Id != nil {
			p, err = s.lookupPrepared(child.Id)
		} else {
			p, err = s.prepare(child.Query, ks)
		}
		if err != nil {
			return err
		}
		switch p.stmt.(type) {
		case insertStmt, updateStmt, deleteStmt:
		default:
			return invalid("Invalid statement in batch: only UPDATE, INSERT and DELETE statements are allowed.")
		}
		if binds[i], err = bindValues(p, child.Values, nil); err != nil {
			return err
		}
		stmts[i] = p
	}
	typ := m.Type
	return s.write(stmts, binds, m.Consistency, m.DefaultTimestamp, &typ)
}

package memory

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tally"
)

var _ tally.Store = (*TallyStore)(nil)

// The operation kinds a TallyFaultFunc sees.
const (
	TallyOpPut  = "put-shard"
	TallyOpRead = "read"
	TallyOpGC   = "apply-gc"
)

// TallyOp describes one TallyStore call to a TallyFaultFunc. It is a plain
// value; its byte slices belong to the caller and must not be modified.
type TallyOp struct {
	Seq      uint64 // 1 for the store's first call, then 2, 3, ...
	Kind     string // TallyOpPut, TallyOpRead or TallyOpGC
	Key      string
	Shard    tally.EncodedShard // TallyOpPut
	WriteTS  int64              // TallyOpPut
	Batch    tally.GCBatch      // TallyOpGC
	Complete bool               // TallyOpRead
}

// TallyFault is what a TallyFaultFunc makes of one call.
type TallyFault int

// The faults. For reads, every fault other than TallyOK refuses the read
// with an error wrapping crdt.ErrUnavailable.
const (
	// TallyOK serves the call normally.
	TallyOK TallyFault = iota
	// TallyUnavailable refuses the call: no effect, and an error wrapping
	// crdt.ErrUnavailable.
	TallyUnavailable
	// TallyLost times the call out and drops it: no effect, and an error
	// wrapping crdt.ErrAmbiguousWrite.
	TallyLost
	// TallyLanded applies the write but loses its acknowledgement: an
	// error wrapping crdt.ErrAmbiguousWrite although it took effect.
	TallyLanded
	// TallyHeld times the call out but keeps the write in flight: an error
	// wrapping crdt.ErrAmbiguousWrite now, and the write takes effect
	// whenever DeliverHeld is called with its Seq (late, possibly after
	// newer writes), or never (DropHeld).
	TallyHeld
)

// TallyFaultFunc decides the fault of each call. It runs with the store's
// lock held and must not call the store.
type TallyFaultFunc func(TallyOp) TallyFault

// TallyCalls counts the calls a TallyStore has served, faulted ones
// included. It is a plain value.
type TallyCalls struct {
	Reads       int64 // Read calls
	ShardWrites int64 // PutShard calls
	GCWrites    int64 // ApplyGC calls
}

// TallyStore is an in-memory tally.Store with Cassandra's last-write-wins
// rules (see tally.Store): every cell keeps the winner of the total order
// (write timestamp, tombstone above value, then value bytes), so writes and
// deletes may arrive in any order and any number of times. It is the
// reference backend for tests, examples and benchmarks, not for production.
//
// For tests it counts its calls (Calls), injects faults (SetFault: refused,
// lost, landed-but-unacknowledged and late writes) and can serve stale
// reads (SetStaleReads): a read that is not complete then shows, for each
// cell independently, any value the cell has held since stale reads were
// turned on — a stronger adversary than any real replica set.
//
// Deleted rows stay as tombstones (nothing models Cassandra's compaction),
// so a read scans them; the tally package's own work per read is constant
// once GC has folded the shards.
//
// The zero value is not usable; call NewTallyStore. A TallyStore is safe for
// concurrent use.
type TallyStore struct {
	mu    sync.Mutex
	parts map[string]*tallyPart
	fault TallyFaultFunc
	stale *rand.Rand
	held  map[uint64]TallyOp
	seq   uint64

	reads, shardWrites, gcWrites atomic.Int64
}

type tallyPart struct {
	rows  map[crdt.ActorID]*tallyCell
	tally tallyCell
}

// tallyVersion is one state of a cell.
type tallyVersion struct {
	set     bool // false: never written
	ts      int64
	deleted bool
	data    []byte
}

// after reports whether v wins over w under last-write-wins.
func (v tallyVersion) after(w tallyVersion) bool {
	if !w.set {
		return true
	}
	if c := cmp.Compare(v.ts, w.ts); c != 0 {
		return c > 0
	}
	if v.deleted != w.deleted {
		return v.deleted
	}
	return bytes.Compare(v.data, w.data) > 0
}

type tallyCell struct {
	cur     tallyVersion
	history []tallyVersion // earlier versions, kept while stale reads are on
}

func (c *tallyCell) apply(v tallyVersion, keepHistory bool) {
	if !v.after(c.cur) {
		return
	}
	if keepHistory {
		c.history = append(c.history, c.cur)
	}
	c.cur = v
}

// pick returns the current version, or with r a random one it has held.
func (c *tallyCell) pick(r *rand.Rand) tallyVersion {
	if r == nil || len(c.history) == 0 {
		return c.cur
	}
	if i := r.IntN(len(c.history) + 1); i < len(c.history) {
		return c.history[i]
	}
	return c.cur
}

// NewTallyStore returns an empty store.
func NewTallyStore() *TallyStore {
	return &TallyStore{parts: map[string]*tallyPart{}, held: map[uint64]TallyOp{}}
}

// SetFault installs f (nil removes it).
func (s *TallyStore) SetFault(f TallyFaultFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = f
}

// SetStaleReads makes reads that are not complete return, per cell, a
// version drawn by r among those the cell has held since this call; nil
// turns stale reads off. Writes made while stale reads are on are kept in
// history, so use it for tests only.
func (s *TallyStore) SetStaleReads(r *rand.Rand) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stale = r
	if r == nil {
		for _, p := range s.parts {
			p.tally.history = nil
			for _, c := range p.rows {
				c.history = nil
			}
		}
	}
}

// Calls returns the call counts.
func (s *TallyStore) Calls() TallyCalls {
	return TallyCalls{Reads: s.reads.Load(), ShardWrites: s.shardWrites.Load(), GCWrites: s.gcWrites.Load()}
}

// ResetCalls sets the call counts to zero.
func (s *TallyStore) ResetCalls() {
	s.reads.Store(0)
	s.shardWrites.Store(0)
	s.gcWrites.Store(0)
}

// LiveShards returns the number of live (not deleted) shard rows of key.
func (s *TallyStore) LiveShards(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	if p := s.parts[key]; p != nil {
		for _, c := range p.rows {
			if c.cur.set && !c.cur.deleted {
				n++
			}
		}
	}
	return n
}

// Held returns the Seq of every held write, ascending.
func (s *TallyStore) Held() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	seqs := make([]uint64, 0, len(s.held))
	for q := range s.held {
		seqs = append(seqs, q)
	}
	slices.Sort(seqs)
	return seqs
}

// DeliverHeld applies the held write seq now and reports whether there was
// one.
func (s *TallyStore) DeliverHeld(seq uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	op, ok := s.held[seq]
	if ok {
		delete(s.held, seq)
		s.applyLocked(op)
	}
	return ok
}

// DropHeld discards the held write seq, which then never takes effect, and
// reports whether there was one.
func (s *TallyStore) DropHeld(seq uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.held[seq]
	delete(s.held, seq)
	return ok
}

func (s *TallyStore) part(key string) *tallyPart {
	p := s.parts[key]
	if p == nil {
		p = &tallyPart{rows: map[crdt.ActorID]*tallyCell{}}
		s.parts[key] = p
	}
	return p
}

// applyLocked makes a write take effect.
func (s *TallyStore) applyLocked(op TallyOp) {
	p := s.part(op.Key)
	keep := s.stale != nil
	switch op.Kind {
	case TallyOpPut:
		c := p.rows[op.Shard.Mutator]
		if c == nil {
			c = &tallyCell{}
			p.rows[op.Shard.Mutator] = c
		}
		c.apply(tallyVersion{set: true, ts: op.WriteTS, data: op.Shard.Data}, keep)
	case TallyOpGC:
		p.tally.apply(tallyVersion{set: true, ts: op.Batch.WriteTS, data: op.Batch.Tally}, keep)
		for _, id := range op.Batch.Delete {
			c := p.rows[id]
			if c == nil {
				c = &tallyCell{}
				p.rows[id] = c
			}
			c.apply(tallyVersion{set: true, ts: op.Batch.WriteTS, deleted: true}, keep)
		}
	}
}

// write runs a write call: validation, fault, effect.
func (s *TallyStore) write(ctx context.Context, op TallyOp) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: memory tally store: %w", crdt.ErrUnavailable, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	op.Seq = s.seq
	f := TallyOK
	if s.fault != nil {
		f = s.fault(op)
	}
	switch f {
	case TallyOK:
		s.applyLocked(op)
		return nil
	case TallyUnavailable:
		return fmt.Errorf("%w: memory tally store: injected refusal of %s #%d", crdt.ErrUnavailable, op.Kind, op.Seq)
	case TallyLost:
		return fmt.Errorf("%w: memory tally store: injected timeout of %s #%d (dropped)", crdt.ErrAmbiguousWrite, op.Kind, op.Seq)
	case TallyLanded:
		s.applyLocked(op)
		return fmt.Errorf("%w: memory tally store: injected timeout of %s #%d (applied)", crdt.ErrAmbiguousWrite, op.Kind, op.Seq)
	case TallyHeld:
		s.held[op.Seq] = op
		return fmt.Errorf("%w: memory tally store: injected timeout of %s #%d (held in flight)", crdt.ErrAmbiguousWrite, op.Kind, op.Seq)
	default:
		return fmt.Errorf("%w: memory tally store: unknown fault %d", crdt.ErrInvalidConfig, f)
	}
}

// PutShard implements tally.Store.
func (s *TallyStore) PutShard(ctx context.Context, key string, sh tally.EncodedShard, writeTS int64) error {
	s.shardWrites.Add(1)
	if err := sh.Mutator.Validate(); err != nil {
		return fmt.Errorf("memory tally store: %w", err)
	}
	sh.Data = bytes.Clone(sh.Data)
	return s.write(ctx, TallyOp{Kind: TallyOpPut, Key: key, Shard: sh, WriteTS: writeTS})
}

// ApplyGC implements tally.Store.
func (s *TallyStore) ApplyGC(ctx context.Context, key string, b tally.GCBatch) error {
	s.gcWrites.Add(1)
	for _, id := range b.Delete {
		if err := id.Validate(); err != nil {
			return fmt.Errorf("memory tally store: %w", err)
		}
	}
	b.Tally = bytes.Clone(b.Tally)
	b.Delete = slices.Clone(b.Delete)
	return s.write(ctx, TallyOp{Kind: TallyOpGC, Key: key, Batch: b})
}

// Read implements tally.Store. Shards come sorted by mutator id.
func (s *TallyStore) Read(ctx context.Context, key string, complete bool) ([]tally.EncodedShard, []byte, error) {
	s.reads.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("%w: memory tally store: %w", crdt.ErrUnavailable, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	op := TallyOp{Seq: s.seq, Kind: TallyOpRead, Key: key, Complete: complete}
	if s.fault != nil {
		if f := s.fault(op); f != TallyOK {
			return nil, nil, fmt.Errorf("%w: memory tally store: injected failure of read #%d", crdt.ErrUnavailable, op.Seq)
		}
	}
	p := s.parts[key]
	if p == nil {
		return nil, nil, nil
	}
	var r *rand.Rand
	if !complete {
		r = s.stale
	}
	ids := make([]crdt.ActorID, 0, len(p.rows))
	for id, c := range p.rows {
		if r != nil || (c.cur.set && !c.cur.deleted) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids) // also makes stale picks reproducible
	var shards []tally.EncodedShard
	for _, id := range ids {
		if v := p.rows[id].pick(r); v.set && !v.deleted {
			shards = append(shards, tally.EncodedShard{Mutator: id, Data: bytes.Clone(v.data)})
		}
	}
	var tb []byte
	if v := p.tally.pick(r); v.set && !v.deleted {
		tb = bytes.Clone(v.data)
	}
	return shards, tb, nil
}

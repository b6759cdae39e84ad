package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// frozenSiblings is a store.Siblings holding the siblings one Fetch
// returned, so that a driver's read path (ledger.Ledger.Value, statestore.Load)
// runs on exactly the values printed, and a dry run of a driver's write
// path (ledger.Ledger.Find) runs on them without writing: Put records the value
// instead of storing it. Other keys (a ledger's records and stored
// sightings, which its retirement pass reads and writes) are read from
// base, when set, and what is put to them is kept here, read back in
// place of base's, so that the dry run retires what the run would.
type frozenSiblings struct {
	key    string
	values [][]byte
	base   store.Siblings // nil: other keys hold nothing

	mu     sync.Mutex
	put    []byte            // the last value Put, if any
	others map[string][]byte // the last value Put to each other key
}

// frozenToken is the token frozenSiblings hands out: it names every
// sibling it holds.
var frozenToken = store.Token("frozen")

func (f *frozenSiblings) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	if key != f.key {
		f.mu.Lock()
		v, ok := f.others[key]
		f.mu.Unlock()
		switch {
		case ok:
			return [][]byte{append([]byte(nil), v...)}, frozenToken, nil
		case f.base != nil:
			return f.base.Fetch(ctx, key)
		}
		return nil, nil, nil
	}
	if len(f.values) == 0 {
		return nil, nil, nil
	}
	out := make([][]byte, len(f.values))
	for i, v := range f.values {
		out[i] = append([]byte(nil), v...)
	}
	return out, frozenToken, nil
}

func (f *frozenSiblings) Put(_ context.Context, key string, actor crdt.ActorID, value []byte, _ store.Token) error {
	if err := store.CheckPut(key, actor, value); err != nil {
		return err // what every store refuses, so that a dry run fails as the run would
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if key != f.key {
		if f.base == nil {
			return fmt.Errorf("%w: dry run: put to another key %q", crdt.ErrUnavailable, key)
		}
		if f.others == nil {
			f.others = map[string][]byte{}
		}
		f.others[key] = append([]byte(nil), value...)
		return nil
	}
	f.put = append([]byte(nil), value...)
	return nil
}

// written returns the value a dry run would have written, or nil.
func (f *frozenSiblings) written() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.put
}

// partitionCopy is an in-memory copy of one partition's live rows
// (adapters/memory, made by readPartition), on which a driver reads a
// snapshot as printed or runs a maintenance job as a dry run. It counts the
// range deletes applied to it.
type partitionCopy struct {
	*memory.Partitions
	rangeDeletes atomic.Int64
}

func (p *partitionCopy) Apply(ctx context.Context, muts []store.Mutation) error {
	if err := p.Partitions.Apply(ctx, muts); err != nil {
		return err
	}
	for _, m := range muts {
		if m.Op == store.OpDeleteRange {
			p.rangeDeletes.Add(1)
		}
	}
	return nil
}

// copyOnRead is the store of a dry run that spans several partitions
// (merge transactions): the first time the driver reads a partition, it is
// copied from src into memory (Snapshot at store.ReadComplete, at most
// limit rows, copyRows), and every read and write then goes to the copy,
// never to src. A partition the driver writes without reading it (a
// Transactions record partition) is not copied: the writes land in memory
// alone. It counts the mutations applied, by op, and the rows of the copy
// the delete-ranges among them covered.
type copyOnRead struct {
	src   store.Partitions
	limit int
	mem   *memory.Partitions

	mu        sync.Mutex
	copied    map[string]bool
	ops       map[store.Op]int
	rangeRows int
}

func newCopyOnRead(src store.Partitions, limit int) *copyOnRead {
	return &copyOnRead{src: src, limit: limit, mem: memory.NewPartitions(), copied: map[string]bool{}, ops: map[store.Op]int{}}
}

// load copies partition from src unless it was copied already.
func (c *copyOnRead) load(ctx context.Context, partition string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.copied[partition] {
		return nil
	}
	rows, err := c.src.Snapshot(ctx, partition, c.limit, store.ReadComplete)
	if err == nil {
		err = copyRows(ctx, c.mem, partition, rows)
	}
	if err != nil {
		return err
	}
	c.copied[partition] = true
	return nil
}

func (c *copyOnRead) Scan(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	if err := c.load(ctx, partition); err != nil {
		return err
	}
	return c.mem.Scan(ctx, partition, from, level, fn)
}

func (c *copyOnRead) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error) {
	if err := c.load(ctx, partition); err != nil {
		return nil, err
	}
	return c.mem.Snapshot(ctx, partition, limit, level)
}

func (c *copyOnRead) Apply(ctx context.Context, muts []store.Mutation) error {
	var ranged int
	for _, m := range muts {
		if m.Op == store.OpDeleteRange {
			n, err := c.inRange(ctx, m)
			if err != nil {
				return err
			}
			ranged += n
		}
	}
	if err := c.mem.Apply(ctx, muts); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range muts {
		c.ops[m.Op]++
	}
	c.rangeRows += ranged
	return nil
}

// inRange returns how many rows of the copy the delete-range m covers.
func (c *copyOnRead) inRange(ctx context.Context, m store.Mutation) (int, error) {
	n := 0
	err := c.mem.Scan(ctx, m.Partition, m.Key, store.ReadComplete, func(r store.Row) bool {
		if m.End != nil && string(r.Key) >= string(m.End) {
			return false
		}
		n++
		return true
	})
	return n, err
}

// corruptSiblings is the store of find ledger -drop-corrupt: its Fetch of
// key leaves out the values that are not well-formed ledger states
// (crdt.ErrCorruptEncoding) and returns the store's token, which covers
// them, so the ledger's write replaces them. Every other call, and every
// other key, goes to the store unchanged.
type corruptSiblings struct {
	store.Siblings
	key     string
	counter tpncounter.Options

	mu      sync.Mutex
	dropped []string          // what keep left out, each once
	seen    map[[32]byte]bool // the SHA-256 of each sibling in dropped
}

// keep returns the values that are not corrupt and records the others.
func (c *corruptSiblings) keep(values [][]byte) [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [][]byte
	for i, v := range values {
		s, err := tpncounter.New(c.counter)
		if err == nil {
			err = s.UnmarshalBinary(v)
		}
		if errors.Is(err, crdt.ErrCorruptEncoding) {
			// Each sibling is reported once, by its content: reads may
			// list it at other positions.
			if sum := sha256.Sum256(v); !c.seen[sum] {
				if c.seen == nil {
					c.seen = map[[32]byte]bool{}
				}
				c.seen[sum] = true
				c.dropped = append(c.dropped, fmt.Sprintf("sibling %d of %d, %d bytes, sha256 %x: %v", i+1, len(values), len(v), sum[:8], err))
			}
			continue
		}
		out = append(out, v)
	}
	return out
}

// last returns what the Fetches of key left out.
func (c *corruptSiblings) last() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

func (c *corruptSiblings) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	values, tok, err := c.Siblings.Fetch(ctx, key)
	if err != nil || key != c.key {
		return values, tok, err
	}
	return c.keep(values), tok, nil
}

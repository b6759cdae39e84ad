package memory

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// DefaultPageSize is the page size of Partitions.Scan when PageSize is
// zero.
const DefaultPageSize = 100

// Partitions is an in-memory store.Partitions: ordered rows per partition,
// last write wins by explicit timestamp, with point, range and partition
// tombstones kept so that a late write under a delete stays invisible, as in
// Cassandra. Reads are always complete. Scan reads PageSize rows at a time
// under the lock, so a scan sees writes made between pages, as a paged
// Cassandra read does.
//
// The zero value is ready to use; a Partitions is safe for concurrent use.
// Tombstones are never collected: it is meant for tests, examples and
// short-lived programs.
type Partitions struct {
	// PageSize is how many rows Scan reads per lock; zero means
	// DefaultPageSize.
	PageSize int

	mu    sync.Mutex
	parts map[string]*partition
}

var _ store.Partitions = (*Partitions)(nil)

// NewPartitions returns an empty store.
func NewPartitions() *Partitions { return &Partitions{} }

type cell struct {
	value []byte
	ts    int64
}

type partition struct {
	cells map[string]cell
	// keys holds the keys of cells in order when sorted is true; a write
	// that adds or removes a cell clears sorted, and the next read sorts.
	keys   []string
	sorted bool
	// dels holds the deletions that may still shadow a late write: point
	// deletes by key (the newest per key), range deletes (none covered by
	// another with a later timestamp), and the newest partition delete.
	points map[string]int64
	ranges []store.Mutation
	drop   int64
}

func (p *partition) shadowed(k string, ts int64) bool {
	if p.drop >= ts {
		return true
	}
	if d, ok := p.points[k]; ok && d >= ts {
		return true
	}
	for _, r := range p.ranges {
		if r.Shadows([]byte(k), ts) {
			return true
		}
	}
	return false
}

func (p *partition) apply(m store.Mutation) {
	switch m.Op {
	case store.OpPut:
		k := string(m.Key)
		if p.shadowed(k, m.Timestamp) {
			return
		}
		if c, ok := p.cells[k]; ok && !store.Wins(m.Value, m.Timestamp, c.value, c.ts) {
			return
		}
		if _, ok := p.cells[k]; !ok {
			p.sorted = false
		}
		p.cells[k] = cell{slices.Clone(m.Value), m.Timestamp}
		return
	case store.OpDelete:
		k := string(m.Key)
		if m.Timestamp > p.points[k] {
			p.points[k] = m.Timestamp
		}
	case store.OpDeleteRange:
		for _, r := range p.ranges {
			if r.Timestamp >= m.Timestamp && covers(r, m) {
				return
			}
		}
		p.ranges = slices.DeleteFunc(p.ranges, func(r store.Mutation) bool {
			return m.Timestamp >= r.Timestamp && covers(m, r)
		})
		m.Key, m.End, m.Value = slices.Clone(m.Key), slices.Clone(m.End), nil
		p.ranges = append(p.ranges, m)
	case store.OpDeletePartition:
		p.drop = max(p.drop, m.Timestamp)
	}
	for k, c := range p.cells {
		if m.Shadows([]byte(k), c.ts) {
			delete(p.cells, k)
			p.sorted = false
		}
	}
}

// sortedKeys returns the keys of the live cells in order.
func (p *partition) sortedKeys() []string {
	if !p.sorted {
		p.keys = p.keys[:0]
		for k := range p.cells {
			p.keys = append(p.keys, k)
		}
		slices.Sort(p.keys)
		p.sorted = true
	}
	return p.keys
}

// covers reports whether range a contains range b.
func covers(a, b store.Mutation) bool {
	if string(b.Key) < string(a.Key) {
		return false
	}
	return a.End == nil || (b.End != nil && string(b.End) <= string(a.End))
}

// Apply applies muts atomically.
func (s *Partitions) Apply(ctx context.Context, muts []store.Mutation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := store.CheckMutations(muts); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.parts == nil {
		s.parts = map[string]*partition{}
	}
	for _, m := range muts {
		p := s.parts[m.Partition]
		if p == nil {
			p = &partition{cells: map[string]cell{}, points: map[string]int64{}}
			s.parts[m.Partition] = p
		}
		p.apply(m)
	}
	return nil
}

// rows returns up to n live rows of partition from key from on, in order
// (n < 0: all). Callers hold s.mu.
func (s *Partitions) rows(partition string, from []byte, n int) []store.Row {
	p := s.parts[partition]
	if p == nil {
		return nil
	}
	keys := p.sortedKeys()
	i, _ := slices.BinarySearch(keys, string(from))
	keys = keys[i:]
	if n >= 0 && len(keys) > n {
		keys = keys[:n]
	}
	out := make([]store.Row, len(keys))
	for i, k := range keys {
		out[i] = store.Row{Key: []byte(k), Value: slices.Clone(p.cells[k].value)}
	}
	return out
}

// Scan calls fn with the rows of partition from from on, a page at a time.
func (s *Partitions) Scan(ctx context.Context, partition string, from []byte, _ store.Read, fn func(store.Row) bool) error {
	if err := crdt.ValidateKey("partition key", partition); err != nil {
		return err
	}
	page := s.PageSize
	if page <= 0 {
		page = DefaultPageSize
	}
	next := slices.Clone(from)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.mu.Lock()
		rows := s.rows(partition, next, page)
		s.mu.Unlock()
		if len(rows) == 0 {
			return nil
		}
		last := slices.Clone(rows[len(rows)-1].Key)
		for _, r := range rows {
			if !fn(r) {
				return nil
			}
		}
		if len(rows) < page {
			return nil
		}
		// fn owns the rows it was given and may have changed them.
		next = append(last, 0)
	}
}

// Snapshot returns every row of partition, read under one lock.
func (s *Partitions) Snapshot(ctx context.Context, partition string, limit int, _ store.Read) ([]store.Row, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := crdt.ValidateKey("partition key", partition); err != nil {
		return nil, err
	}
	s.mu.Lock()
	rows := s.rows(partition, nil, limit+1)
	s.mu.Unlock()
	if len(rows) > limit {
		return nil, fmt.Errorf("memory: partition %q has more than %d rows: %w", partition, limit, crdt.ErrTooLarge)
	}
	return rows, nil
}

package memory

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/storekit"
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

// cell is a live row: its value is the n bytes at off in chunk of its
// partition's values.
type cell struct {
	chunk, off, n int32
	ts            int64
}

// A partition's values are copied into chunks: the first of firstChunk
// bytes, each next one twice the size of the one before, up to chunkSize
// (so a partition of a few rows takes a few hundred bytes); a value over
// chunkSize/4 gets a chunk of its own. Garbage (values overwritten or
// deleted) is compacted away once it is at least compactMin bytes and
// half of what the chunks hold.
const (
	firstChunk = 256
	chunkSize  = 32 << 10
	compactMin = 1 << 10
)

// inlineKey is the longest row key a shortKey holds. Most of the drivers'
// row keys (balance 33 bytes, deltalog 17, tally at most 17) fit, so
// comparing two reads no memory outside their rows; a longer key (41 bytes
// in a Transactions row partition) keeps the rest in its order's tails.
const inlineKey = 40

// shortKey is a row key of at most inlineKey bytes, the first n of b.
type shortKey struct {
	b [inlineKey]byte
	n uint8
}

// rowKey is any row key: a short one in shortKey and tail empty, a longer
// one with its first inlineKey bytes in shortKey and the rest in tail.
type rowKey struct {
	shortKey
	tail string
}

func makeRowKey(k []byte) rowKey {
	var r rowKey
	r.n = uint8(copy(r.b[:], k))
	if len(k) > inlineKey {
		r.tail = string(k[inlineKey:])
	}
	return r
}

// appendTo appends the key's bytes to dst.
func (k *rowKey) appendTo(dst []byte) []byte {
	return append(append(dst, k.b[:k.n]...), k.tail...)
}

// compareRowKeys orders keys as unsigned bytes.
func compareRowKeys(a, b rowKey) int {
	if c := bytes.Compare(a.b[:a.n], b.b[:b.n]); c != 0 {
		return c
	}
	return strings.Compare(a.tail, b.tail) // equal heads: no tails unless full
}

type partition struct {
	// rows holds the live rows' keys and cells, in order.
	rows order
	// chunks hold the values of the live rows, appended to chunks[fill];
	// of the size bytes they hold, garbage are values since overwritten or
	// deleted, reclaimed by compact.
	chunks        [][]byte
	fill          int
	size, garbage int
	// dels holds the deletions that may still shadow a late write: point
	// deletes by key (the newest per key), range deletes (none covered by
	// another with a later timestamp), and the newest partition delete.
	points map[rowKey]int64
	ranges []store.Mutation
	drop   int64
}

// value returns c's value, which the caller must not modify.
func (p *partition) value(c cell) []byte {
	return p.chunks[c.chunk][c.off : c.off+c.n : c.off+c.n]
}

// store copies v into the partition's chunks and returns its cell, at ts.
func (p *partition) store(v []byte, ts int64) cell {
	p.size += len(v)
	if len(v) > chunkSize/4 {
		p.chunks = append(p.chunks, slices.Clone(v))
		return cell{chunk: int32(len(p.chunks) - 1), n: int32(len(v)), ts: ts}
	}
	if len(p.chunks) == 0 || len(p.chunks[p.fill])+len(v) > cap(p.chunks[p.fill]) {
		n := firstChunk
		if len(p.chunks) > 0 {
			n = min(chunkSize, 2*cap(p.chunks[p.fill]))
		}
		p.chunks = append(p.chunks, make([]byte, 0, max(n, len(v))))
		p.fill = len(p.chunks) - 1
	}
	c := p.chunks[p.fill]
	p.chunks[p.fill] = append(c, v...)
	return cell{chunk: int32(p.fill), off: int32(len(c)), n: int32(len(v)), ts: ts}
}

// put stores v as the value of k at ts.
func (p *partition) put(k *rowKey, v []byte, ts int64) {
	if old, ok := p.rows.Set(k, p.store(v, ts)); ok {
		p.garbage += int(old.n)
	}
}

// remove deletes the live row k.
func (p *partition) remove(k *rowKey) {
	if c, ok := p.rows.Delete(k); ok {
		p.garbage += int(c.n)
	}
}

// compact copies the live values into new chunks once garbage is half of
// what the chunks hold (and at least compactMin), so that values take
// about twice their size at most.
func (p *partition) compact() {
	if p.garbage < compactMin || p.garbage < p.size/2 {
		return
	}
	var live partition // only its chunks are used
	p.rows.AscendFrom(rowKey{}, func(_ *rowKey, c *cell) bool {
		*c = live.store(p.value(*c), c.ts)
		return true
	})
	p.chunks, p.fill, p.size, p.garbage = live.chunks, live.fill, live.size, 0
}

func (p *partition) shadowed(k *rowKey, key []byte, ts int64) bool {
	if p.drop >= ts {
		return true
	}
	if len(p.points) > 0 {
		if d, ok := p.points[*k]; ok && d >= ts {
			return true
		}
	}
	return slices.ContainsFunc(p.ranges, func(r store.Mutation) bool { return r.Shadows(key, ts) })
}

func (p *partition) apply(m store.Mutation) {
	switch m.Op {
	case store.OpPut:
		k := makeRowKey(m.Key)
		if p.shadowed(&k, m.Key, m.Timestamp) {
			return
		}
		if c, ok := p.rows.Get(&k); ok && !store.Wins(m.Value, m.Timestamp, p.value(c), c.ts) {
			return
		}
		p.put(&k, m.Value, m.Timestamp)
		return
	case store.OpDelete:
		// Only the row m.Key can be shadowed (m.Shadows).
		k := makeRowKey(m.Key)
		if m.Timestamp > p.points[k] {
			p.points[k] = m.Timestamp
		}
		if c, ok := p.rows.Get(&k); ok && m.Timestamp >= c.ts {
			p.remove(&k)
		}
		return
	case store.OpDeleteRange:
		for _, r := range p.ranges {
			if r.Timestamp >= m.Timestamp && storekit.Covers(r, m) {
				return
			}
		}
		p.ranges = slices.DeleteFunc(p.ranges, func(r store.Mutation) bool {
			return m.Timestamp >= r.Timestamp && storekit.Covers(m, r)
		})
		m.Key, m.End, m.Value = slices.Clone(m.Key), slices.Clone(m.End), nil
		p.ranges = append(p.ranges, m)
	case store.OpDeletePartition:
		p.drop = max(p.drop, m.Timestamp)
	}
	from, in := rowKey{}, func(*rowKey) bool { return true }
	if m.Op == store.OpDeleteRange {
		from = makeRowKey(m.Key)
		if m.End != nil {
			end := makeRowKey(m.End)
			in = func(k *rowKey) bool { return compareRowKeys(*k, end) < 0 }
		}
	}
	var buf []byte
	p.rows.DeleteFunc(from, in, func(k *rowKey, c *cell) bool {
		buf = k.appendTo(buf[:0])
		if !m.Shadows(buf, c.ts) {
			return false
		}
		p.garbage += int(c.n)
		return true
	})
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
			p = &partition{points: map[rowKey]int64{}}
			s.parts[m.Partition] = p
		}
		p.apply(m)
		p.compact()
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
	size := p.rows.Len()
	if n >= 0 {
		size = min(size, n)
	}
	out := make([]store.Row, 0, size)
	p.rows.AscendFrom(makeRowKey(from), func(k *rowKey, c *cell) bool {
		if len(out) == n {
			return false
		}
		out = append(out, store.Row{Key: k.appendTo(make([]byte, 0, int(k.n)+len(k.tail))), Value: slices.Clone(p.value(*c))})
		return true
	})
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
	return storekit.ScanPages(from, storekit.LocalFirstPage, page, func(from []byte, n int) ([]store.Row, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.rows(partition, from, n), nil
	}, fn)
}

// Snapshot returns every row of partition, read under one lock.
func (s *Partitions) Snapshot(ctx context.Context, partition string, limit int, _ store.Read) ([]store.Row, error) {
	if err := storekit.CheckKey(ctx, "partition key", partition); err != nil {
		return nil, err
	}
	n, err := storekit.ReadLimit(limit)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return storekit.Limit("memory", partition, limit, s.rows(partition, nil, n), nil)
}

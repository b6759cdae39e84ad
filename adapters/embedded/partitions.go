package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/storekit"
	"github.com/counterkit/counterkit/store"
	bolt "go.etcd.io/bbolt"
)

// Partitions is the DB's store.Partitions, with the semantics of
// memory.Partitions; reads are always complete (the store.Read level is
// ignored). Tombstones are kept for Options.TombstoneGrace, then collected
// by later Applies, a few per transaction, oldest first.
type Partitions struct {
	db *DB
}

var _ store.Partitions = (*Partitions)(nil)

// gcPerApply bounds the tombstones one Apply collects.
const gcPerApply = 64

// Tombstone kinds in the gc index.
const (
	gcPoint = 'p'
	gcRange = 'r'
	gcDrop  = 'd'
)

// Apply applies muts atomically and durably.
func (p *Partitions) Apply(ctx context.Context, muts []store.Mutation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := store.CheckMutations(muts); err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	size := 0
	for _, m := range muts {
		size += len(m.Partition) + len(m.Key) + len(m.End) + len(m.Value) + 16
	}
	if size > MaxBatchBytes {
		return fmt.Errorf("embedded: batch of %d bytes (max %d): %w", size, MaxBatchBytes, crdt.ErrTooLarge)
	}
	if len(muts) == 0 {
		return nil
	}
	// bbolt keeps written bytes until the commit: the batch must not share
	// memory with the caller's.
	own := storekit.CloneBatch(muts)
	now := p.db.opts.Now()
	return p.db.update(func(t *wtx) error {
		w := writer{
			rows: t.bucket(bucketRows), points: t.bucket(bucketPoints),
			ranges: t.bucket(bucketRanges), drops: t.bucket(bucketDrops), gc: t.bucket(bucketGC),
			now: now.UnixMicro(),
		}
		for _, m := range own {
			if err := w.apply(m); err != nil {
				return err
			}
		}
		if cutoff := now.Add(-p.db.opts.TombstoneGrace).UnixMicro(); p.db.opts.TombstoneGrace > 0 && cutoff > 0 {
			return w.collect(cutoff)
		}
		return nil
	}, size)
}

type writer struct {
	rows, points, ranges, drops, gc tb
	now                             int64 // arrival time of the batch's tombstones, µs
}

// A row is stored under prefix(partition) || row key as
// timestamp (8 bytes) || CRC-32C(key, timestamp || value) || value.

func sealCell(key []byte, ts int64, value []byte) []byte {
	out := make([]byte, 12, 12+len(value))
	binary.BigEndian.PutUint64(out, uint64(ts))
	out = append(out, value...)
	binary.BigEndian.PutUint32(out[8:], crcUpdate(checksum(key, out[:8]), out[12:]))
	return out
}

// openCell returns a row's timestamp and value (in the transaction's memory).
func openCell(key, rec []byte) (int64, []byte, error) {
	if len(rec) < 13 || binary.BigEndian.Uint32(rec[8:]) != crcUpdate(checksum(key, rec[:8]), rec[12:]) {
		return 0, nil, corrupt("row", key)
	}
	return int64(binary.BigEndian.Uint64(rec)), rec[12:], nil
}

// A point or partition tombstone is stored as its timestamp and its
// arrival time (Options.Now when it was applied), 8 bytes each; the gc
// index orders tombstones by arrival time.

// getTombstone returns the tombstone stored under k, if any; one that is
// not 16 bytes is damage, never passed over.
func getTombstone(b tb, k []byte) (ts, arrival int64, ok bool, err error) {
	v, ok := b.lookup(k)
	switch {
	case !ok:
		return 0, 0, false, nil
	case len(v) != 16:
		return 0, 0, false, fmt.Errorf("embedded: tombstone %q malformed: %w", k, crdt.ErrCorruptEncoding)
	}
	return int64(binary.BigEndian.Uint64(v)), int64(binary.BigEndian.Uint64(v[8:])), true, nil
}

func tsBytes(ts int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(ts)) }

func gcKey(arrival int64, kind byte, body []byte) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 9+len(body)), uint64(arrival))
	return append(append(k, kind), body...)
}

// A range tombstone is stored under prefix(partition) || sequence as
// timestamp || arrival || uvarint(len(start)) || start || flag || end
// (flag 0: no upper bound, no end; 1: end follows).
type rangeDel struct {
	id      []byte
	m       store.Mutation // the OpDeleteRange stored (End nil: no upper bound)
	arrival int64
}

func encodeRange(m store.Mutation, arrival int64) []byte {
	b := binary.BigEndian.AppendUint64(tsBytes(m.Timestamp), uint64(arrival))
	b = binary.AppendUvarint(b, uint64(len(m.Key)))
	b = append(b, m.Key...)
	if m.End == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	return append(b, m.End...)
}

func decodeRange(id, v []byte) (rangeDel, error) {
	bad := fmt.Errorf("embedded: range tombstone %q malformed: %w", id, crdt.ErrCorruptEncoding)
	if len(v) < 18 {
		return rangeDel{}, bad
	}
	n, l := binary.Uvarint(v[16:])
	if l <= 0 || uint64(len(v)-16-l) < n+1 {
		return rangeDel{}, bad
	}
	rest := v[16+l:]
	r := rangeDel{id: id, arrival: int64(binary.BigEndian.Uint64(v[8:])),
		m: store.Mutation{Op: store.OpDeleteRange, Key: rest[:n], Timestamp: int64(binary.BigEndian.Uint64(v))}}
	switch {
	case rest[n] == 1:
		r.m.End = rest[n+1:] // not nil, even when empty
	case rest[n] != 0 || len(rest) != int(n)+1:
		return rangeDel{}, bad
	}
	return r, nil
}

func (w *writer) rangesOf(prefix []byte) ([]rangeDel, error) {
	var out []rangeDel
	c := w.ranges.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != len(prefix)+8 { // only this partition's ranges start with its prefix
			return nil, fmt.Errorf("embedded: range tombstone %q malformed: %w", k, crdt.ErrCorruptEncoding)
		}
		r, err := decodeRange(k, v)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (w *writer) apply(m store.Mutation) error {
	prefix := appendPrefix(nil, m.Partition)
	ck := append(slices.Clip(prefix), m.Key...) // the stored key of m.Key
	switch m.Op {
	case store.OpPut:
		for _, t := range []struct {
			b tb
			k []byte
		}{{w.drops, prefix}, {w.points, ck}} {
			d, _, ok, err := getTombstone(t.b, t.k)
			if err != nil || ok && d >= m.Timestamp {
				return err
			}
		}
		rs, err := w.rangesOf(prefix)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if r.m.Shadows(m.Key, m.Timestamp) {
				return nil
			}
		}
		if old := w.rows.Get(ck); old != nil {
			ts, val, err := openCell(ck, old)
			if err != nil {
				return err
			}
			if !store.Wins(m.Value, m.Timestamp, val, ts) {
				return nil
			}
		}
		return w.rows.Put(ck, sealCell(ck, m.Timestamp, m.Value))
	case store.OpDelete:
		if newer, err := w.tombstone(w.points, ck, gcPoint, m.Timestamp); !newer || err != nil {
			return err
		}
		return w.deleteRows(prefix, ck, append(slices.Clip(ck), 0), m.Timestamp)
	case store.OpDeleteRange:
		rs, err := w.rangesOf(prefix)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if r.m.Timestamp >= m.Timestamp && storekit.Covers(r.m, m) {
				return nil
			}
		}
		for _, r := range rs {
			if m.Timestamp >= r.m.Timestamp && storekit.Covers(m, r.m) {
				if err := w.ranges.Delete(r.id); err != nil {
					return err
				}
				if err := w.gc.Delete(gcKey(r.arrival, gcRange, r.id)); err != nil {
					return err
				}
			}
		}
		seq, err := w.ranges.NextSequence()
		if err != nil {
			return err
		}
		id := binary.BigEndian.AppendUint64(slices.Clip(prefix), seq)
		if err := w.ranges.putNew(id, encodeRange(m, w.now)); err != nil {
			return err
		}
		if err := w.gc.Put(gcKey(w.now, gcRange, id), nil); err != nil {
			return err
		}
		var end []byte
		if m.End != nil {
			end = append(slices.Clip(prefix), m.End...)
		}
		return w.deleteRows(prefix, ck, end, m.Timestamp)
	case store.OpDeletePartition:
		if newer, err := w.tombstone(w.drops, prefix, gcDrop, m.Timestamp); !newer || err != nil {
			return err
		}
		return w.deleteRows(prefix, prefix, nil, m.Timestamp)
	}
	return fmt.Errorf("embedded: unknown op %d: %w", m.Op, crdt.ErrInvalidAmount)
}

// tombstone records a deletion at ts under k in b, and in the gc index,
// unless one as new is there; it reports whether it recorded one.
func (w *writer) tombstone(b tb, k []byte, kind byte, ts int64) (bool, error) {
	old, arrived, ok, err := getTombstone(b, k)
	if err != nil || ok && old >= ts {
		return false, err
	}
	if ok {
		if err := w.gc.Delete(gcKey(arrived, kind, k)); err != nil {
			return false, err
		}
	}
	if err := b.Put(k, binary.BigEndian.AppendUint64(tsBytes(ts), uint64(w.now))); err != nil {
		return false, err
	}
	return true, w.gc.Put(gcKey(w.now, kind, k), nil)
}

// deleteRows deletes the partition's rows with a stored key in [from,
// end) (end nil: to the partition's end) and a timestamp ≤ ts.
func (w *writer) deleteRows(prefix, from, end []byte, ts int64) error {
	var doomed [][]byte
	c := w.rows.Cursor()
	for k, v := c.Seek(from); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if end != nil && bytes.Compare(k, end) >= 0 {
			break
		}
		t, _, err := openCell(k, v)
		if err != nil {
			return err
		}
		if t <= ts {
			doomed = append(doomed, slices.Clone(k))
		}
	}
	for _, k := range doomed {
		if err := w.rows.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// collect drops up to gcPerApply tombstones arrived before cutoff, oldest first.
func (w *writer) collect(cutoff int64) error {
	var due [][]byte
	c := w.gc.Cursor()
	for k, _ := c.First(); k != nil && len(due) < gcPerApply; k, _ = c.Next() {
		if len(k) < 9 {
			return fmt.Errorf("embedded: gc index entry %q malformed: %w", k, crdt.ErrCorruptEncoding)
		}
		if int64(binary.BigEndian.Uint64(k)) >= cutoff {
			break
		}
		due = append(due, slices.Clone(k))
	}
	kinds := map[byte]tb{gcPoint: w.points, gcDrop: w.drops, gcRange: w.ranges}
	for _, k := range due {
		b, ok := kinds[k[8]]
		if !ok {
			return fmt.Errorf("embedded: gc index entry %q malformed: %w", k, crdt.ErrCorruptEncoding)
		}
		// Collected only if it is still the tombstone that arrived then.
		if v := b.Get(k[9:]); len(v) >= 16 && bytes.Equal(v[8:16], k[:8]) {
			if err := b.Delete(k[9:]); err != nil {
				return err
			}
		}
		if err := w.gc.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// Scan calls fn with the live rows of partition from from on, reading
// Options.PageSize rows per read transaction.
func (p *Partitions) Scan(ctx context.Context, partition string, from []byte, _ store.Read, fn func(store.Row) bool) error {
	if err := crdt.ValidateKey("partition key", partition); err != nil {
		return err
	}
	prefix := appendPrefix(nil, partition)
	return storekit.ScanPages(from, storekit.LocalFirstPage, p.db.opts.PageSize, func(from []byte, n int) ([]store.Row, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return p.read(prefix, append(slices.Clip(prefix), from...), n)
	}, fn)
}

// Snapshot returns every live row of partition, in one read transaction.
func (p *Partitions) Snapshot(ctx context.Context, partition string, limit int, _ store.Read) ([]store.Row, error) {
	if err := storekit.CheckKey(ctx, "partition key", partition); err != nil {
		return nil, err
	}
	n, err := storekit.ReadLimit(limit)
	if err != nil {
		return nil, err
	}
	prefix := appendPrefix(nil, partition)
	rows, err := p.read(prefix, prefix, n)
	return storekit.Limit("embedded", partition, limit, rows, err)
}

// read returns up to n rows of the partition from the stored key from on.
func (p *Partitions) read(prefix, from []byte, n int) ([]store.Row, error) {
	var rows []store.Row
	err := p.db.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketRows).Cursor()
		for k, v := c.Seek(from); k != nil && bytes.HasPrefix(k, prefix) && len(rows) < n; k, v = c.Next() {
			_, val, err := openCell(k, v)
			if err != nil {
				return err
			}
			rows = append(rows, store.Row{Key: slices.Clone(k[len(prefix):]), Value: slices.Clone(val)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil // a clone of an empty key is not nil
}

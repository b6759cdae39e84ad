package embedded

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/counterkit/counterkit/crdt"
	bolt "go.etcd.io/bbolt"
)

// Keys, ReadStats and Compact read a store without opening it, for tools
// that must change nothing and must not wait for a service: read-only,
// checked as Open checks (openChecked), one version of the file.

// Shape is the store shape a key belongs to.
type Shape int

const (
	// ShapeSiblings is a key of DB.Siblings.
	ShapeSiblings Shape = iota + 1
	// ShapePartition is a partition key of DB.Partitions.
	ShapePartition
)

// String returns "siblings" or "partition".
func (s Shape) String() string {
	if s == ShapeSiblings || s == ShapePartition {
		return [...]string{"siblings", "partition"}[s-1]
	}
	return fmt.Sprintf("Shape(%d)", int(s))
}

// KeyInfo is one key stored in a data file.
type KeyInfo struct {
	Shape Shape
	Key   string
	// Entries is how many values the key holds: a sibling key's
	// siblings, a partition's live rows.
	Entries int
	// Bytes is the size of those entries as stored: their keys and
	// values, record headers included.
	Bytes int64
}

// Keys returns every key that holds a value in the data file of dir: the
// sibling keys, then the partition keys with live rows, each sorted.
// Values are not checked against their checksums (DB.Verify does that). It
// fails with an error wrapping ErrLocked when a DB holds dir,
// crdt.ErrNotFound when dir holds no data file, crdt.ErrCorruptEncoding,
// crdt.ErrMisconfiguredStore or crdt.ErrUnsupportedVersion as Open does, or
// ctx's error.
func Keys(ctx context.Context, dir string) (keys []KeyInfo, err error) {
	err = inspect(ctx, dir, func(_ *readOnly, tx *bolt.Tx) error {
		keys, err = storedKeys(ctx, tx)
		return err
	})
	return keys, err
}

// storedKeys lists the siblings' and rows' keys in Keys' order.
func storedKeys(ctx context.Context, tx *bolt.Tx) ([]KeyInfo, error) {
	keys := []KeyInfo{}
	if err := walkKeys(ctx, tx, func(k KeyInfo) { keys = append(keys, k) }); err != nil {
		return nil, err
	}
	slices.SortFunc(keys, func(a, b KeyInfo) int { return cmp.Or(cmp.Compare(a.Shape, b.Shape), strings.Compare(a.Key, b.Key)) })
	return keys, nil
}

// keysDigest stands for the keys walkKeys reports in a file: their number
// and a SHA-256 digest of each one's shape, key, entries and bytes, in
// stored order. Compact compares a copy's keys with the original's by it,
// holding no key (a list of them took about 600 bytes a key).
type keysDigest struct {
	n   int
	sum [sha256.Size]byte
}

// digestKeys returns the keysDigest of tx.
func digestKeys(ctx context.Context, tx *bolt.Tx) (keysDigest, error) {
	var d keysDigest
	h := sha256.New()
	var b []byte
	err := walkKeys(ctx, tx, func(k KeyInfo) {
		d.n++
		b = binary.AppendUvarint(b[:0], uint64(k.Shape))
		b = binary.AppendUvarint(b, uint64(len(k.Key)))
		b = append(b, k.Key...)
		b = binary.AppendUvarint(b, uint64(k.Entries))
		b = binary.AppendVarint(b, k.Bytes)
		h.Write(b)
	})
	h.Sum(d.sum[:0])
	return d, err
}

// walkKeys calls fn with each key of tx, sibling keys first, in stored
// order (by length, then bytes), once all its entries are counted.
func walkKeys(ctx context.Context, tx *bolt.Tx, fn func(KeyInfo)) error {
	for i, name := range [][]byte{bucketSiblings, bucketRows} {
		shape := ShapeSiblings + Shape(i)
		var cur KeyInfo
		var curKey []byte // cur's key while it is counted, in the engine's memory
		c := tx.Bucket(name).Cursor()
		n := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if n++; n%4096 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			key, rest, err := cutPrefix(k)
			if err != nil {
				return err
			}
			if shape == ShapeSiblings && len(rest) != dotBytes {
				return fmt.Errorf("embedded: sibling %q: a stored key of %d bytes after the key, not a dot: %w", k, len(rest), crdt.ErrCorruptEncoding)
			}
			size := int64(len(k) + len(v))
			// A key's entries are adjacent: they share its prefix.
			if cur.Entries > 0 && bytes.Equal(curKey, key) {
				cur.Entries++
				cur.Bytes += size
				continue
			}
			if cur.Entries > 0 {
				fn(cur)
			}
			cur, curKey = KeyInfo{Shape: shape, Key: string(key), Entries: 1, Bytes: size}, key
		}
		if cur.Entries > 0 {
			fn(cur)
		}
	}
	return nil
}

// Stats is the size of a data file and of what it holds.
type Stats struct {
	File          string // the data file's path
	FormatVersion int    // the layout version of the file
	FileBytes     int64  // the file's size
	DataBytes     int64  // the part of it the engine uses
	PageSize      int
	FreePages     int // pages below the engine's high-water mark it may reuse
	SiblingKeys   int
	SiblingValues int
	Partitions    int
	Rows          int
	// Buckets has the engine's figures for each of its buckets
	// (siblings, rows, the tombstones in points, ranges and drops, their
	// collection index gc, and meta), sorted by name.
	Buckets []BucketStats
}

// BucketStats is the engine's account of one bucket. A small bucket is
// stored inline, inside its parent's page (bbolt's inline buckets): it
// then has no pages of its own (LeafPages, BranchPages and BytesAllocated
// 0), and BytesInUse is what it takes of its parent's page.
type BucketStats struct {
	Name           string
	Keys           int // entries
	Depth          int // levels of its B+tree
	LeafPages      int // overflow pages included
	BranchPages    int // overflow pages included
	BytesInUse     int // an inline bucket's included
	BytesAllocated int
	Inline         bool // stored inside its parent's page
}

// ReadStats returns the size of the data file of dir and counts of what it
// holds. It fails as Keys does.
func ReadStats(ctx context.Context, dir string) (*Stats, error) {
	var s *Stats
	err := inspect(ctx, dir, func(r *readOnly, tx *bolt.Tx) error {
		s = &Stats{File: r.db.path, FormatVersion: r.version, FileBytes: r.size, DataBytes: tx.Size(),
			PageSize: tx.DB().Info().PageSize, FreePages: r.walk.freePages(), Buckets: []BucketStats{}}
		err := walkKeys(ctx, tx, func(k KeyInfo) {
			if k.Shape == ShapeSiblings {
				s.SiblingKeys++
				s.SiblingValues += k.Entries
			} else {
				s.Partitions++
				s.Rows += k.Entries
			}
		})
		if err != nil {
			return err
		}
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			st := b.Stats()
			bs := BucketStats{Name: string(name), Keys: st.KeyN, Depth: st.Depth,
				LeafPages: st.LeafPageN + st.LeafOverflowN, BranchPages: st.BranchPageN + st.BranchOverflowN,
				BytesInUse: st.LeafInuse + st.BranchInuse, BytesAllocated: st.LeafAlloc + st.BranchAlloc}
			if b.Root() == 0 {
				// An inline bucket's bytes are in its parent's page: bbolt
				// counts them apart (in a page of the bucket's own,
				// LeafInuse has those of its inline sub-buckets).
				bs.Inline, bs.BytesInUse = true, st.InlineBucketInuse
			}
			s.Buckets = append(s.Buckets, bs)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// CompactResult is what Compact did.
type CompactResult struct {
	BytesBefore int64 // the part of the original file the engine used
	BytesAfter  int64 // the copy's size
	Keys        int   // sibling and partition keys copied
}

// compactTxBytes bounds the bytes one transaction of the copy writes: the
// engine holds a node for every key written in a transaction (about 350
// bytes a key with short keys and values), so a small bound keeps
// Compact's memory flat (TestCompactMemoryDoesNotGrowWithTheStore) at no
// cost in time.
const compactTxBytes = 2 << 20

// Compact writes a copy of the store in dir without its free pages into
// to, which must not exist or be empty (or hold only an interrupted
// compaction's temporary file). The original is checked first as
// DB.Verify checks a store and not changed; the copy is made durable,
// checked the same way and its keys compared with the original's before it
// gets FileName. Besides the errors of Keys it fails with an error wrapping
// crdt.ErrInvalidConfig when to holds files, ErrLocked when a DB holds to,
// crdt.ErrUnavailable when to cannot be written, or ctx's error.
func Compact(ctx context.Context, dir, to string) (res CompactResult, err error) {
	if to == "" {
		return res, fmt.Errorf("embedded: compact: empty directory name: %w", crdt.ErrInvalidConfig)
	}
	if err := copyTarget("compact", to, false); err != nil {
		return res, err
	}
	// checkedKeys checks every record of tx and digests its keys.
	checkedKeys := func(tx *bolt.Tx) (keysDigest, error) {
		if err := checkRecords(tx); err != nil {
			return keysDigest{}, err
		}
		return digestKeys(ctx, tx)
	}
	err = inspect(ctx, dir, func(_ *readOnly, tx *bolt.Tx) error {
		before, err := checkedKeys(tx)
		if err != nil {
			return err
		}
		res.BytesBefore, res.Keys = tx.Size(), before.n
		return writeInto("compact", to, DefaultLockTimeout, func() error { return copyTarget("compact", to, true) }, func(tmp string) error {
			dst, err := openBolt(tmp, Options{LockTimeout: DefaultLockTimeout}, false)
			if err != nil {
				return err
			}
			err = bolt.Compact(dst, tx.DB(), compactTxBytes)
			if err == nil {
				err = dst.Update(restampDigests) // the copy's transactions are its own
			}
			if err := syncClose(dst, err); err != nil {
				return fmt.Errorf("embedded: compact: %w: %w", crdt.ErrUnavailable, err)
			}
			return nil
		}, func(tmp string) error {
			err := inspectPath(ctx, tmp, func(c *readOnly, copyTx *bolt.Tx) error {
				after, err := checkedKeys(copyTx)
				if err == nil && before != after {
					err = fmt.Errorf("embedded: compact: the copy holds other keys than %s: %w", dir, crdt.ErrCorruptEncoding)
				}
				res.BytesAfter = c.size
				return err
			})
			if err != nil {
				return fmt.Errorf("embedded: compact: the copy does not check: %w", err)
			}
			return nil
		})
	})
	if err != nil {
		return CompactResult{}, err
	}
	return res, nil
}

// copyTarget is emptyOrAbsent for the target of Backup or Compact (op),
// which may also hold only an interrupted copy's CopyTempName (a crash,
// or a command that stopped waiting): passed over, or, with remove (under
// the target's lock: no other copy writes it), deleted.
func copyTarget(op, to string, remove bool) error {
	if entries, err := os.ReadDir(to); err == nil && len(entries) == 1 && entries[0].Name() == CopyTempName && entries[0].Type().IsRegular() {
		if !remove {
			return nil
		}
		if err := os.Remove(filepath.Join(to, CopyTempName)); err != nil {
			return fmt.Errorf("embedded: %s: remove an interrupted copy: %w: %w", op, crdt.ErrUnavailable, err)
		}
	}
	return emptyOrAbsent(op, to)
}

// readOnly is a data file opened read-only and checked.
type readOnly struct {
	db      *DB
	version int        // its format version
	walk    *fileCheck // the file check's findings
	size    int64      // the file's size
}

// inspect runs fn in one read transaction of dir's checked data file.
func inspect(ctx context.Context, dir string, fn func(*readOnly, *bolt.Tx) error) error {
	if dir == "" {
		return fmt.Errorf("embedded: empty directory name: %w", crdt.ErrInvalidConfig)
	}
	return inspectPath(ctx, filepath.Join(dir, FileName), fn)
}

// inspectPath is inspect on the data file at path. A fault or panic on
// the way (the file changed under the check by another program) is
// reported as crdt.ErrCorruptEncoding; the engine is then left open, as
// it may hold its locks, until the process exits.
func inspectPath(ctx context.Context, path string, fn func(*readOnly, *bolt.Tx) error) (err error) {
	defer onDamage(path, &err)()
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		// A directory that is missing or is a file holds no data file.
		return noDataFile(filepath.Dir(path))
	}
	r, err := openChecked(path, DefaultLockTimeout, inspectUnchecked)
	if err != nil {
		return err
	}
	err = r.db.view(func(tx *bolt.Tx) error { return fn(r, tx) })
	r.db.Close() // not after a panic
	return err
}

// openChecked opens the data file at path read-only and checks it: under
// the engine's shared lock, so that no DB writes it meanwhile (the engine
// reads only its checksummed meta pages), the whole file unless unchecked,
// then its format, then a version 2 file's digests or a version 1 file's
// records.
func openChecked(path string, timeout time.Duration, unchecked bool) (r *readOnly, err error) {
	// Open makes the data file complete under another name and links it
	// into place: an empty one is damage, not a new one.
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("embedded: %s is a symbolic link to nothing: %w", path, crdt.ErrMisconfiguredStore)
	case err != nil:
		return nil, fmt.Errorf("embedded: %w: %w", crdt.ErrUnavailable, err)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("embedded: %s is not a regular file (%s): %w", path, st.Mode().Type(), crdt.ErrMisconfiguredStore)
	case st.Size() == 0:
		return nil, fmt.Errorf("embedded: %s is empty (truncated?): %w", path, crdt.ErrCorruptEncoding)
	}
	opts := Options{LockTimeout: timeout}
	bdb, err := openBolt(path, opts, true)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			bdb.Close()
		}
	}()
	r = &readOnly{db: &DB{bolt: bdb, path: path, opts: opts}, size: st.Size(), walk: &fileCheck{}}
	if !unchecked {
		if r.walk, err = checkPath(path); err != nil {
			return nil, checkError(path, err)
		}
	}
	if r.version, err = r.db.checkFormat(); err != nil {
		return nil, err
	}
	switch {
	case unchecked:
	case r.version >= 2:
		if err := r.walk.compareDigests(r.version); err != nil {
			return nil, checkError(path, err)
		}
	default:
		// A format 1 file has no digests to vouch for its entries: check
		// every record's checksum, which covers its key, as the upgrade
		// of a read-write Open does (an entry whose key changed is read
		// under no key it belongs to).
		if err := r.db.bolt.View(checkRecords); err != nil {
			return nil, checkError(path, err)
		}
	}
	return r, nil
}

// inspectUnchecked turns Keys', ReadStats' and Compact's checks off (tests).
var inspectUnchecked bool

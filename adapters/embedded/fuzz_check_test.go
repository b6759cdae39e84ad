package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/counterkit/counterkit/store"
	bolt "go.etcd.io/bbolt"
)

// fuzzStoreFile returns the data file of a small store: siblings, rows
// spread over several pages, point and range tombstones.
func fuzzStoreFile(f *testing.F) []byte {
	f.Helper()
	dir := f.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	var muts []store.Mutation
	for i := range 120 {
		muts = append(muts, store.Mutation{Partition: "p", Op: store.OpPut, Key: []byte(fmt.Sprintf("r%03d", i)),
			Value: bytes.Repeat([]byte{byte(i)}, 20), Timestamp: 100 + int64(i)})
	}
	muts = append(muts,
		store.Mutation{Partition: "p", Op: store.OpDelete, Key: []byte("r007"), Timestamp: 500},
		store.Mutation{Partition: "p", Op: store.OpDeleteRange, Key: []byte("r010"), End: []byte("r020"), Timestamp: 500},
		store.Mutation{Partition: "q", Op: store.OpDeletePartition, Timestamp: 500})
	if err := db.Partitions().Apply(ctx, muts); err != nil {
		f.Fatal(err)
	}
	for i := range 4 {
		if err := db.Siblings().Put(ctx, fmt.Sprintf("k%d", i), "a", []byte("value"), nil); err != nil {
			f.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// resealMetas gives both meta pages of b a valid checksum again, so that
// damage to their fields reaches the file check rather than the checksum.
func resealMetas(b []byte) {
	le := binary.LittleEndian
	ps := 4096
	if len(b) >= pageHeaderSize+12 {
		if p := int(le.Uint32(b[pageHeaderSize+8:])); p >= 1024 && p <= maxPageSize && p&(p-1) == 0 {
			ps = p
		}
	}
	for _, off := range []int{0, ps} {
		if off+pageHeaderSize+64 > len(b) {
			return
		}
		m := b[off+pageHeaderSize:]
		h := fnv.New64a()
		h.Write(m[:56])
		le.PutUint64(m[56:], h.Sum64())
	}
}

// FuzzFileCheck damages a store's file (edits: each 4 bytes of the input
// XOR a byte, at a 24-bit offset modulo the file's size; the meta pages
// resealed) and requires the file check to fail cleanly or to have walked
// exactly what the engine then reads: every data bucket's entries and
// sequence as the walk summed them, with no panic or fault in the engine.
func FuzzFileCheck(f *testing.F) {
	orig := fuzzStoreFile(f)
	f.Add([]byte{})
	le := binary.LittleEndian
	ps := int(le.Uint32(orig[pageHeaderSize+8:]))
	for pg := 2; pg < len(orig)/ps; pg++ {
		off := pg*ps + 10 // a page's element count, lowered
		f.Add([]byte{byte(off), byte(off >> 8), byte(off >> 16), 1})
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, edits []byte) {
		b := bytes.Clone(orig)
		for ; len(edits) >= 4; edits = edits[4:] {
			off := (int(edits[0]) | int(edits[1])<<8 | int(edits[2])<<16) % len(b)
			b[off] ^= edits[3]
		}
		resealMetas(b)
		c, err := checkFile(b, 0)
		if err != nil {
			return
		}
		path := filepath.Join(dir, FileName)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: DefaultLockTimeout})
		if err != nil {
			t.Fatalf("the check passed, the engine refuses the file: %v", err)
		}
		defer db.Close()
		read := map[string]*bucketSum{}
		func() {
			old := debug.SetPanicOnFault(true)
			defer debug.SetPanicOnFault(old)
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("the check passed, the engine panicked: %v", r)
				}
			}()
			err = db.View(func(tx *bolt.Tx) error {
				return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
					s := &bucketSum{seq: b.Sequence()}
					read[string(name)] = s
					return b.ForEach(func(k, v []byte) error {
						if v != nil || b.Bucket(k) == nil {
							s.add(k, v)
						}
						return nil
					})
				})
			})
		}()
		if err != nil {
			t.Fatalf("the check passed, the engine fails: %v", err)
		}
		if len(read) != len(c.sums) {
			t.Fatalf("the engine reads %d buckets, the check walked %d", len(read), len(c.sums))
		}
		for name, s := range read {
			if w := c.sums[name]; w == nil || *w != *s {
				t.Fatalf("bucket %q: the engine reads %+v, the check walked %+v", name, *s, w)
			}
		}
	})
}

// FuzzRecordDecoders feeds arbitrary bytes to the decoders of the
// adapter's own records: none panics, and what one accepts encodes back
// to the same bytes (a range tombstone, a digest record) or passes its
// checksum (a row, a sibling).
func FuzzRecordDecoders(f *testing.F) {
	f.Add([]byte("\x01k"), encodeRange(store.Mutation{Op: store.OpDeleteRange, Key: []byte("a"), End: []byte("b"), Timestamp: 7}, 9))
	f.Add([]byte("\x02pk"), encodeRange(store.Mutation{Op: store.OpDeleteRange, Key: []byte{}, Timestamp: -1}, 0))
	f.Add([]byte("\x01kr"), sealCell([]byte("\x01kr"), 5, []byte("v")))
	f.Add([]byte("\x01k\x00\x00\x00\x00\x00\x00\x00\x01"), sealRecord([]byte("\x01k\x00\x00\x00\x00\x00\x00\x00\x01"), []byte("v")))
	f.Add([]byte{}, encodeDigests(make([]bucketSum, len(dataBuckets)), 3))
	f.Add([]byte{}, encodeDigests(make([]bucketSum, len(dataBuckets)), 0)[:24*len(dataBuckets)])
	f.Fuzz(func(t *testing.T, k, v []byte) {
		if key, rest, err := cutPrefix(k); err == nil && canonicalUvarint(k) {
			if got := append(appendPrefix(nil, string(key)), rest...); !bytes.Equal(got, k) {
				t.Fatalf("cutPrefix(%x) = %x, %x", k, key, rest)
			}
		}
		if r, err := decodeRange(k, v); err == nil {
			if got := encodeRange(r.m, r.arrival); !bytes.Equal(got, v) && canonicalUvarint(v[16:]) {
				t.Fatalf("range %x decodes to %+v, which encodes to %x", v, r, got)
			}
		}
		if ts, val, err := openCell(k, v); err == nil {
			if got := sealCell(k, ts, val); !bytes.Equal(got, v) {
				t.Fatalf("row %x opens to %d %x, sealed %x", v, ts, val, got)
			}
		}
		if val, err := openRecord(k, v); err == nil {
			if got := sealRecord(k, val); !bytes.Equal(got, v) {
				t.Fatalf("sibling %x opens to %x, sealed %x", v, val, got)
			}
		}
		if s, txid, err := decodeDigests(v); err == nil {
			got := encodeDigests(s, txid)
			if len(v) == 24*len(s)+4 {
				// A format 2 record: no transaction.
				got = binary.BigEndian.AppendUint32(got[:24*len(s):24*len(s)], crcUpdate(0, got[:24*len(s)]))
			}
			if !bytes.Equal(got, v) {
				t.Fatalf("digests %x decode to %v %d, encode to %x", v, s, txid, got)
			}
		}
	})
}

// canonicalUvarint reports whether b starts with a uvarint of minimal length.
func canonicalUvarint(b []byte) bool {
	n, w := binary.Uvarint(b)
	return w > 0 && len(binary.AppendUvarint(nil, n)) == w
}

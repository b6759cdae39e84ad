package embedded

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// A store file that keeps no freelist is no damage: the engine rebuilds
// the freelist, and its write-mode open commits a transaction of its own
// to write one, changing no entry. Open must leave the digest record
// naming that transaction, so that Verify passes and the file opens
// again after a Close with no write in between (it failed "the digest
// record was written by transaction 3, the file is at 4").

// noFreelistStore makes a store of one sibling whose file keeps no
// freelist; edit makes the file so.
func noFreelistStore(t *testing.T, edit func(t *testing.T, path string)) string {
	t.Helper()
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Siblings().Put(context.Background(), "k", "a", []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	edit(t, path)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	ps := int(le.Uint32(raw[pageHeaderSize+8:]))
	meta := func(m int) []byte { return raw[m*ps+pageHeaderSize:] }
	newest := meta(0)
	if le.Uint64(meta(1)[48:]) > le.Uint64(newest[48:]) {
		newest = meta(1)
	}
	if fl := le.Uint64(newest[32:]); fl != noFreelist {
		t.Fatalf("the newest meta page names freelist page %d: the edit left a freelist", fl)
	}
	return dir
}

// reopen opens dir three times, with no write, checking each with Verify
// and reading the sibling.
func reopen(t *testing.T, dir string) {
	t.Helper()
	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open: %v", err)
	}
	ro.Close()
	for i := range 3 {
		db, err := Open(dir, Options{})
		if err != nil {
			t.Fatalf("Open %d, no write since the last Close: %v", i+1, err)
		}
		if err := db.Verify(); err != nil {
			t.Errorf("Verify after Open %d: %v", i+1, err)
		}
		if vals, _, err := db.Siblings().Fetch(context.Background(), "k"); err != nil || len(vals) != 1 || string(vals[0]) != "v" {
			t.Errorf("Fetch after Open %d: %q, %v", i+1, vals, err)
		}
		db.Close()
	}
}

// TestOpenFileWrittenWithoutFreelist: the file's last transaction was
// committed by an engine with NoFreelistSync (as etcd writes its files),
// rewriting the digest record.
func TestOpenFileWrittenWithoutFreelist(t *testing.T) {
	dir := noFreelistStore(t, func(t *testing.T, path string) {
		b, err := bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		err = b.Update(func(tx *bolt.Tx) error {
			sums, _, err := decodeDigests(tx.Bucket(bucketMeta).Get(keyDigest))
			if err != nil {
				return err
			}
			return putFormat(tx, sums)
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	reopen(t, dir)
}

// TestOpenFileWithFreelistAbandoned: both meta pages' freelist set to
// none and their checksums sealed again, the edit of the engine's repair
// command `bbolt surgery freelist abandon`.
func TestOpenFileWithFreelistAbandoned(t *testing.T) {
	dir := noFreelistStore(t, func(t *testing.T, path string) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		le := binary.LittleEndian
		ps := int(le.Uint32(raw[pageHeaderSize+8:]))
		for m := range 2 {
			meta := raw[m*ps+pageHeaderSize:]
			le.PutUint64(meta[32:], noFreelist)
			h := fnv.New64a()
			h.Write(meta[:56])
			le.PutUint64(meta[56:], h.Sum64())
		}
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
	})
	reopen(t, dir)
}

package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
)

// TestNewestMetaDamagedWhileOpen: the disk changes under an open
// store, one byte of the newest meta page (the last acknowledged commit's).
// The docs: such damage "is found by a value's checksum when it is read
// or by DB.Verify". The engine falls back to the older meta page without
// a word, so reads lose the last acknowledged write with no error: each
// read must return the write or an error wrapping crdt.ErrCorruptEncoding,
// and Verify must report the damage.
func TestNewestMetaDamagedWhileOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, field := range []struct {
		name string
		off  int
	}{{"checksum", mChecksum}, {"txid", mTxid}, {"magic", mMagic}} {
		t.Run(field.name, func(t *testing.T) {
			dir := t.TempDir()
			db, err := embedded.Open(dir, embedded.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for i := range 5 {
				if err := db.Siblings().Put(ctx, fmt.Sprintf("k%d", i), "a", fmt.Appendf(nil, "v%d", i), nil); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, embedded.FileName)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			l := layoutOf(t, b)
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			off := int64(l.newer*l.ps + field.off)
			if _, err := f.WriteAt([]byte{b[off] ^ 0x01}, off); err != nil {
				t.Fatal(err)
			}
			f.Close()

			vals, _, err := db.Siblings().Fetch(ctx, "k4")
			switch {
			case err != nil && !errors.Is(err, crdt.ErrCorruptEncoding):
				t.Errorf("fetch of the last acknowledged write: %v", err)
			case err == nil && (len(vals) != 1 || string(vals[0]) != "v4"):
				t.Errorf("the newest meta page damaged while open: the last acknowledged write reads %q with no error", vals)
			}
			verr := db.Verify()
			if verr == nil {
				t.Errorf("Verify passes")
			}
			// A write now builds on the older commit and overwrites the damaged page.
			werr := db.Siblings().Put(ctx, "k5", "a", []byte("v5"), nil)
			db.Close()
			db2, oerr := embedded.Open(dir, embedded.Options{})
			if oerr != nil {
				t.Logf("after a write (%v), Open: %v", werr, oerr)
				return
			}
			defer db2.Close()
			vals, _, err = db2.Siblings().Fetch(ctx, "k4")
			t.Logf("after a write (%v), reopened: k4 reads %q, %v; Verify: %v", werr, vals, err, db2.Verify())
			if err == nil && len(vals) == 0 {
				t.Errorf("the acknowledged write of k4 is gone from a file that opens")
			}
		})
	}
}

// TestOlderMetaDamagedWhileOpen: the disk changes under an open store in
// the meta page reads do not use (the commit before the last). Reads are
// right, but the next Open would refuse the file: Verify reports it, and
// the next commit, which writes that page, repairs it.
func TestOlderMetaDamagedWhileOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 5 {
		if err := db.Siblings().Put(ctx, fmt.Sprintf("k%d", i), "a", fmt.Appendf(nil, "v%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, embedded.FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l := layoutOf(t, b)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	off := int64((1-l.newer)*l.ps + mChecksum)
	if _, err := f.WriteAt([]byte{b[off] ^ 0x01}, off); err != nil {
		t.Fatal(err)
	}
	f.Close()

	if vals, _, err := db.Siblings().Fetch(ctx, "k4"); err != nil || len(vals) != 1 || string(vals[0]) != "v4" {
		t.Fatalf("fetch k4: %q, %v", vals, err)
	}
	if err := db.Verify(); !errors.Is(err, crdt.ErrCorruptEncoding) {
		t.Fatalf("Verify with the older meta page damaged: %v, want crdt.ErrCorruptEncoding", err)
	}
	if err := db.Siblings().Put(ctx, "k5", "a", []byte("v5"), nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Verify(); err != nil {
		t.Fatalf("Verify after a commit wrote the damaged page: %v", err)
	}
	db.Close()
	db2, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatalf("Open after the repair: %v", err)
	}
	db2.Close()
}

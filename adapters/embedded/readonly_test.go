package embedded_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// TestReadOnlyChangesNothing: a DB opened ReadOnly reads and verifies a
// store of every format without changing a byte of it (no upgrade, no
// write), refuses every write with ErrReadOnly, shares the directory with
// another read-only DB but not with a writing one, and creates nothing
// where there is no store.
func TestReadOnlyChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, version := range []uint16{1, 2, embedded.FormatVersion} {
		db, dir := openTemp(t, embedded.Options{})
		fill(t, db, "r", 5)
		db.Close()
		if version != embedded.FormatVersion {
			setFormat(t, dir, version)
		}
		path := filepath.Join(dir, embedded.FileName)
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ro, err := embedded.Open(dir, embedded.Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("format %d: %v", version, err)
		}
		intact(t, ro, "r", 5)
		if err := ro.Verify(); err != nil {
			t.Fatalf("format %d: verify: %v", version, err)
		}
		wantErr(t, ro.Siblings().Put(ctx, "key-r0", "z", []byte("v"), nil), embedded.ErrReadOnly)
		wantErr(t, ro.Partitions().Apply(ctx, []store.Mutation{{Partition: "part", Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 1}}), embedded.ErrReadOnly)
		ro2, err := embedded.Open(dir, embedded.Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("format %d: a second read-only DB: %v", version, err)
		}
		_, err = embedded.Open(dir, embedded.Options{LockTimeout: 1})
		wantErr(t, err, embedded.ErrLocked)
		ro2.Close()
		ro.Close()
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Fatalf("format %d: the file changed", version)
		}
	}
	empty := filepath.Join(t.TempDir(), "none")
	_, err := embedded.Open(empty, embedded.Options{ReadOnly: true})
	wantErr(t, err, crdt.ErrNotFound)
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Fatalf("a read-only Open made %s: %v", empty, err)
	}
}

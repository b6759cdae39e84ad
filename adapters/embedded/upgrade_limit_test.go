package embedded_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// One flipped bit in a point tombstone's timestamp: a current-format file is
// refused; a format 1 file (0.1.0, no digests, tombstones without a
// checksum) is upgraded over the damage, which then hides a later write.
// The second half is the limit README.md (Layout and checks) states: if
// it starts failing, the upgrade found such damage and the docs can drop it.
func TestLimitVersion1TombstoneDamage(t *testing.T) {
	ctx := context.Background()
	clock := func() time.Time { return time.Unix(1_700_000_000, 0) }
	const deleted = 0x0000_0102_0304_0506 // µs, a byte pattern to find
	for _, version := range []uint16{embedded.FormatVersion, 1} {
		dir := t.TempDir()
		db, err := embedded.Open(dir, embedded.Options{Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Partitions().Apply(ctx, []store.Mutation{
			{Partition: "p", Op: store.OpPut, Key: []byte("r"), Value: []byte("old"), Timestamp: deleted - 1},
			{Partition: "p", Op: store.OpDelete, Key: []byte("r"), Timestamp: deleted},
		}); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if version == 1 {
			setFormat(t, dir, 1)
		}
		path := filepath.Join(dir, embedded.FileName)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// The live tombstone is the last copy (an earlier one sits on a freed page).
		i := bytes.LastIndex(data, binary.BigEndian.AppendUint64(nil, deleted))
		if i < 0 {
			t.Fatal("tombstone not found in the file")
		}
		data[i+3] ^= 0x40 // the deletion moves 2^46 µs (about 2.2 years) later
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}

		db, err = embedded.Open(dir, embedded.Options{Now: clock})
		if version == embedded.FormatVersion {
			if !errors.Is(err, crdt.ErrCorruptEncoding) {
				t.Errorf("format %d: Open of the damaged file: %v, want crdt.ErrCorruptEncoding", version, err)
			}
			if err == nil {
				db.Close()
			}
			continue
		}
		if err != nil {
			t.Fatalf("format 1: Open: %v (the upgrade found the damage: drop the limit from the docs)", err)
		}
		if err := db.Verify(); err != nil {
			t.Fatalf("format 1: Verify: %v", err)
		}
		if err := db.Partitions().Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("r"), Value: []byte("new"), Timestamp: deleted + 1}}); err != nil {
			t.Fatal(err)
		}
		rows, err := db.Partitions().Snapshot(ctx, "p", 10, store.ReadAny)
		db.Close()
		if err != nil || len(rows) != 0 {
			t.Errorf("format 1: the later write reads %q, %v: the damaged deletion no longer hides it", rows, err)
		}
	}
}

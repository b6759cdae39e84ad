package embedded_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// TestMalformedEntryWhileOpenIsReported damages, while the store is open,
// the size of one stored key or tombstone (the disk changing under the
// process: Open checked the file before). Every read or write that meets
// the entry must fail with crdt.ErrCorruptEncoding rather than pass it
// over: a sibling skipped makes Fetch return fewer siblings, a tombstone
// or range passed over lets a write it shadows land. The failed write
// leaves the stored rows as they were.
func TestMalformedEntryWhileOpenIsReported(t *testing.T) {
	ctx := context.Background()
	le := binary.LittleEndian
	dot1 := binary.BigEndian.AppendUint64(nil, 1)
	for _, c := range []struct {
		name  string
		setup []store.Mutation
		key   []byte // the stored key whose element is damaged
		field int    // the element's field changed by one: 8 key size, 12 value size
		// try is the read or write that meets the entry; it returns
		// whether the store then holds what it must (no row landed).
		try func(*embedded.DB) error
	}{
		{name: "sibling key one byte longer", key: append([]byte("\x01k"), dot1...), field: 8,
			try: func(db *embedded.DB) error { _, _, err := db.Siblings().Fetch(ctx, "k"); return err }},
		{name: "point tombstone one byte shorter", key: []byte("\x01pr"), field: 12,
			setup: []store.Mutation{{Partition: "p", Op: store.OpDelete, Key: []byte("r"), Timestamp: 100}},
			try: func(db *embedded.DB) error {
				return db.Partitions().Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("r"), Value: []byte("v"), Timestamp: 50}})
			}},
		{name: "partition tombstone one byte shorter", key: []byte("\x01d"), field: 12,
			setup: []store.Mutation{{Partition: "d", Op: store.OpDeletePartition, Timestamp: 100}},
			try: func(db *embedded.DB) error {
				return db.Partitions().Apply(ctx, []store.Mutation{{Partition: "d", Op: store.OpPut, Key: []byte("r"), Value: []byte("v"), Timestamp: 50}})
			}},
		{name: "range tombstone key one byte longer", key: append([]byte("\x01q"), dot1...), field: 8,
			setup: []store.Mutation{{Partition: "q", Op: store.OpDeleteRange, Key: []byte("a"), End: []byte("z"), Timestamp: 100}},
			try: func(db *embedded.DB) error {
				return db.Partitions().Apply(ctx, []store.Mutation{{Partition: "q", Op: store.OpPut, Key: []byte("m"), Value: []byte("v"), Timestamp: 50}})
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			db, err := embedded.Open(dir, embedded.Options{TombstoneGrace: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Siblings().Put(ctx, "k", "a", []byte("value"), nil); err != nil {
				t.Fatal(err)
			}
			if c.setup != nil {
				if err := db.Partitions().Apply(ctx, c.setup); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, embedded.FileName)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// The leaf elements (in any page, live or free) whose key is
			// c.key: flags, position relative to the element, key size,
			// value size.
			var elems []int
			for off := bytes.Index(b, c.key); off >= 0; {
				for e := off - 16; e >= 0 && e > off-1<<16; e-- {
					if int(le.Uint32(b[e+4:])) == off-e && int(le.Uint32(b[e+8:])) == len(c.key) {
						elems = append(elems, e)
					}
				}
				next := bytes.Index(b[off+1:], c.key)
				if next < 0 {
					break
				}
				off += 1 + next
			}
			if len(elems) == 0 {
				t.Fatalf("no element holds key %q", c.key)
			}
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, e := range elems {
				v := int(le.Uint32(b[e+c.field:]))
				if c.field == 8 {
					v++
				} else {
					v--
				}
				if _, err := f.WriteAt(binary.LittleEndian.AppendUint32(nil, uint32(v)), int64(e+c.field)); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.try(db); !errors.Is(err, crdt.ErrCorruptEncoding) {
				t.Errorf("got %v, want crdt.ErrCorruptEncoding", err)
			}
			for _, p := range []string{"p", "d", "q"} {
				if rows, err := db.Partitions().Snapshot(ctx, p, 10, store.ReadComplete); err != nil || len(rows) > 0 {
					t.Errorf("partition %q holds %d rows (%v), want none", p, len(rows), err)
				}
			}
			if err := db.Verify(); !errors.Is(err, crdt.ErrCorruptEncoding) {
				t.Errorf("Verify: got %v, want crdt.ErrCorruptEncoding", err)
			}
		})
	}
}

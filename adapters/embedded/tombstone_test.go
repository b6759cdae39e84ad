package embedded_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// TestTombstonesAreKeptForTheGrace: point, range and partition deletions
// shadow late writes until TombstoneGrace has passed since their
// timestamp, and are then collected by a later Apply; with a negative
// grace they are never collected.
func TestTombstonesAreKeptForTheGrace(t *testing.T) {
	t.Parallel()
	for _, grace := range []time.Duration{time.Hour, -1} {
		t.Run(grace.String(), func(t *testing.T) {
			now := time.Unix(1_800_000_000, 0)
			db, _ := openTemp(t, embedded.Options{TombstoneGrace: grace, Now: func() time.Time { return now }})
			p := db.Partitions()
			ctx := context.Background()
			// Grace counts from when a deletion was applied, not from its
			// timestamp: an old timestamp is kept as long.
			ts := now.Add(-365 * 24 * time.Hour).UnixMicro()
			must := func(muts ...store.Mutation) {
				t.Helper()
				if err := p.Apply(ctx, muts); err != nil {
					t.Fatal(err)
				}
			}
			put := func(part, key string, ts int64) store.Mutation {
				return store.Mutation{Partition: part, Op: store.OpPut, Key: []byte(key), Value: []byte("late"), Timestamp: ts}
			}
			must(
				store.Mutation{Partition: "a", Op: store.OpDelete, Key: []byte("k"), Timestamp: ts},
				store.Mutation{Partition: "b", Op: store.OpDeleteRange, Key: []byte("k"), End: []byte("m"), Timestamp: ts},
				store.Mutation{Partition: "c", Op: store.OpDeletePartition, Timestamp: ts},
			)
			late := func() int {
				t.Helper()
				must(put("a", "k", ts-1), put("b", "l", ts-1), put("c", "x", ts-1))
				n := 0
				for _, part := range []string{"a", "b", "c"} {
					rows, err := p.Snapshot(ctx, part, 10, store.ReadComplete)
					if err != nil {
						t.Fatal(err)
					}
					n += len(rows)
				}
				return n
			}
			if n := late(); n != 0 {
				t.Fatalf("%d late writes visible under fresh deletions", n)
			}
			now = now.Add(time.Hour - time.Second)
			must(put("other", "x", ts)) // collects what is due: nothing yet
			if n := late(); n != 0 {
				t.Fatalf("%d late writes visible before the grace passed", n)
			}
			now = now.Add(2 * time.Second)
			must(put("other", "y", ts)) // collects the three deletions (if grace > 0)
			want := 3
			if grace < 0 {
				want = 0
			}
			if n := late(); n != want {
				t.Fatalf("%d late writes visible after the grace, want %d", n, want)
			}
		})
	}
}

// TestFailingWriteLeavesItsGroupAlone: a write that fails inside a group
// commit (here: it must read a damaged row) fails alone; the writes
// committed with it succeed.
func TestFailingWriteLeavesItsGroupAlone(t *testing.T) {
	t.Parallel()
	db, dir := openTemp(t, embedded.Options{})
	ctx := context.Background()
	p := db.Partitions()
	if err := p.Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("bad"), Value: payload("bad"), Timestamp: tsBase}}); err != nil {
		t.Fatal(err)
	}
	// Damage the row in the open file (Open would refuse a damaged file).
	path := filepath.Join(dir, embedded.FileName)
	b, _ := os.ReadFile(path)
	i := bytes.Index(b, payload("bad"))
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{b[i+10] ^ 1}, int64(i+10)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var wg sync.WaitGroup
	errs := make([]error, 64)
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := []byte{'k', byte(w)}
			if w%8 == 0 {
				key = []byte("bad") // must read the damaged row to resolve LWW
			}
			errs[w] = p.Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: key, Value: []byte("v"), Timestamp: tsBase + 1}})
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if w%8 == 0 {
			if !errors.Is(err, crdt.ErrCorruptEncoding) {
				t.Fatalf("writer %d (damaged row): %v", w, err)
			}
		} else if err != nil {
			t.Fatalf("writer %d: %v", w, err)
		}
	}
	n := 0
	p.Scan(ctx, "p", []byte("k"), store.ReadComplete, func(r store.Row) bool { n++; return true })
	if n != 56 {
		t.Fatalf("%d rows written, want 56", n)
	}
	// Writes still work: the failure was the row's, not the file's.
	if err := p.Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("z"), Value: []byte("v"), Timestamp: tsBase}}); err != nil {
		t.Fatal(err)
	}
}

package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/store"
)

// TestEveryOperationAtOnceThenClose: "DB ... is safe for concurrent use" (and so
// its Siblings and Partitions). Every operation at once, under -race:
// puts with tokens, deletes, applies, fetches, snapshots, scans, Verify,
// Backup and WriteBackup; then Close while they still run, after which
// every call is nil or ErrClosed, never a panic or another error; and
// every acknowledged put is in the file after a reopen.
func TestEveryOperationAtOnceThenClose(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := embedded.Open(dir, embedded.Options{PageSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sib, parts := db.Siblings(), db.Partitions()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 100)
	closedOK := func(what string, err error) {
		if err != nil && !errors.Is(err, embedded.ErrClosed) {
			select {
			case errs <- fmt.Errorf("%s: %w", what, err):
			default:
			}
		}
	}
	var mu sync.Mutex
	acked := map[string]int{} // partition row → highest acknowledged timestamp
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("k%d", i%3)
				_, tok, err := sib.Fetch(ctx, key)
				closedOK("fetch", err)
				closedOK("put", sib.Put(ctx, key, "a", []byte(fmt.Sprintf("w%d-%d", w, i)), tok))
				if i%7 == 0 {
					_, tok, err := sib.Fetch(ctx, key)
					closedOK("fetch", err)
					closedOK("delete", sib.Delete(ctx, key, tok))
				}
				row := fmt.Sprintf("r%d", w)
				err = parts.Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte(row), Value: []byte("v"), Timestamp: int64(i)}})
				closedOK("apply", err)
				if err == nil {
					mu.Lock()
					acked[row] = max(acked[row], i)
					mu.Unlock()
				}
				_, err = parts.Snapshot(ctx, "p", 100, store.ReadComplete)
				closedOK("snapshot", err)
				closedOK("scan", parts.Scan(ctx, "p", nil, store.ReadComplete, func(store.Row) bool { return true }))
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			closedOK("verify", db.Verify())
			_, err := db.WriteBackup(ctx, io.Discard)
			closedOK("write backup", err)
			if i < 3 {
				closedOK("backup", db.Backup(ctx, filepath.Join(t.TempDir(), "b")))
			}
		}
	}()
	// Let them run, then close under them.
	for range 30 {
		if err := parts.Apply(ctx, []store.Mutation{{Partition: "q", Op: store.OpPut, Key: []byte("x"), Value: []byte("v"), Timestamp: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	db, err = embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Verify(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Partitions().Snapshot(ctx, "p", 100, store.ReadComplete)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(acked) {
		t.Fatalf("%d rows after reopen, %d acknowledged", len(rows), len(acked))
	}
}

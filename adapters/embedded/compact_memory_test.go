package embedded_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/store"
)

// Compact's memory does not grow with the store: it compares the copy's
// keys with the original's by a digest, and the copy commits every few
// MiB. Over 300,000 partitions its heap grew by about 17 MB; holding the
// keys' list (about 600 bytes a key) or committing the copy every 64 MiB
// (the engine's nodes of every key written since, about 350 bytes a key)
// took 90 to 180 MB. Peak heap is sampled every millisecond.
func TestCompactMemoryDoesNotGrowWithTheStore(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a store of 300,000 keys")
	}
	const keys, limit = 300_000, 48 << 20
	dir := t.TempDir()
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const batch = 400 // within a batch's 32 KiB
	for i := 0; i < keys; i += batch {
		ms := make([]store.Mutation, batch)
		for j := range ms {
			ms[j] = store.Mutation{Partition: fmt.Sprintf("account-%09d", i+j), Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 1}
		}
		if err := db.Partitions().Apply(ctx, ms); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	res, err := embedded.Compact(ctx, dir, filepath.Join(t.TempDir(), "copy"))
	close(done)
	wg.Wait()
	if err != nil || res.Keys != keys {
		t.Fatalf("Compact: %+v, %v; want %d keys", res, err, keys)
	}
	grew := int64(peak) - int64(base.HeapInuse)
	t.Logf("%d keys: heap grew by %d MB at most (%d bytes a key)", keys, grew>>20, grew/keys)
	if grew > limit {
		t.Fatalf("Compact's heap grew by %d MB over %d keys, above %d MB", grew>>20, keys, limit>>20)
	}
}

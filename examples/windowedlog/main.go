// Command windowedlog shows the windowed log (package deltalog) on
// the in-memory store: every update is its own cell keyed by a client-chosen
// time-based id, so a retried update rewrites the same cell; a merge cell
// summarises everything older than the write window, and reads stop at it.
// The program checks the value against the sum of distinct updates and exits
// non-zero if it differs.
//
//	go run ./examples/windowedlog
package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/timeid"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(1))
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	log, err := deltalog.New(memory.NewPartitions(), deltalog.Options{Clock: func() time.Time { return now }})
	if err != nil {
		return err
	}
	const key = "stock:sku-42"
	want, retries, rejected := int64(0), 0, 0
	for i := 0; i < 5000; i++ {
		now = now.Add(time.Second)
		id := timeid.FromParts(now, 1, uint64(i))
		delta := int64(rng.Intn(10) - 3)
		if delta == 0 {
			delta = 1
		}
		if err := log.Add(ctx, key, id, delta); err != nil {
			return err
		}
		want += delta
		if rng.Intn(10) == 0 { // a lost ack: the client sends the same update again
			if err := log.Add(ctx, key, id, delta); err != nil {
				return err
			}
			retries++
		}
		if i%500 == 499 {
			if _, _, err := log.Merge(ctx, key); err != nil {
				return err
			}
		}
	}
	// An update whose id is older than the write window is refused, not counted.
	stale := timeid.FromParts(now.Add(-time.Hour), 1, 999999)
	if err := log.Add(ctx, key, stale, 100); errors.Is(err, crdt.ErrOutsideWindow) {
		rejected++
	} else {
		return fmt.Errorf("stale update: got %v, want ErrOutsideWindow", err)
	}
	r, err := log.Read(ctx, key)
	if err != nil {
		return err
	}
	fmt.Printf("value %d (expected %d); %d retried updates absorbed, %d stale update refused\n", r.Value, want, retries, rejected)
	fmt.Printf("cells read: %d of %d updates; stats: count %d min %d max %d\n",
		r.Cells, 5000, r.Stats.Count, r.Stats.Min, r.Stats.Max)
	if r.Value != want {
		return fmt.Errorf("value %d, want %d", r.Value, want)
	}
	fmt.Println("verified")
	return nil
}

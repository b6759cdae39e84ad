package cassandra

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
)

// stepClock is a clock tests move by hand.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stepClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// TestModelBalanceTombstones: every settled credit of a balance partition
// leaves two row tombstones (its N and T rows) until gc_grace_seconds
// has passed and compaction purged them, and a partition read scans them.
// So on Cassandra a balance partition (an Accounts account, each of a
// Transactions account's row partitions) takes about
// tombstone_failure_threshold / 2 = 50,000 settled credits per
// gc_grace_seconds; past that every read and merge of it fails
// (crdt.ErrUnavailable) until compaction purges them. It never returns a
// wrong balance. One row partition at 100 credits a second, merged every
// 20 seconds (5 with COUNTERKIT_CASES, slower), on the model (which purges
// nothing).
func TestModelBalanceTombstones(t *testing.T) {
	mergeEvery := 20 * time.Second
	if os.Getenv("COUNTERKIT_CASES") != "" {
		mergeEvery = 5 * time.Second
	}
	ctx := context.Background()
	p, _ := modelPartitions(t, Options{})
	c := &stepClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	tx, err := balance.NewTransactions(p, balance.TxnOptions{Options: balance.Options{Clock: c.Now}, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	const rate = 100
	var failed error
	n := 0
	for ; n < 80_000 && failed == nil; n++ {
		c.Add(time.Second / rate)
		if _, err := tx.Apply(ctx, "acct", crdt.TxnID(fmt.Sprint("t-", n)), 1); err != nil {
			t.Fatalf("credit %d: %v", n, err)
		}
		if (n+1)%(rate*int(mergeEvery/time.Second)) != 0 {
			continue
		}
		if _, failed = tx.Merge(ctx, "acct"); failed != nil {
			break
		}
		v, err := tx.Balance(ctx, "acct")
		if failed = err; err == nil && v != int64(n+1) {
			t.Fatalf("after %d credits the balance is %d", n+1, v)
		}
	}
	if !errors.Is(failed, crdt.ErrUnavailable) {
		t.Fatalf("after %d credits: %v, want crdt.ErrUnavailable", n, failed)
	}
	t.Logf("reads failed after %d credits: %v", n, failed)
}

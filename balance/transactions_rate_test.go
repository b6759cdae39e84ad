package balance_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// hotRun credits one account at rate credits a second for d (on a stepping
// clock), merging it every mergeEvery, and returns the most rows a row
// partition held before a merge, and the first error.
func hotRun(partitions, rate int, mergeEvery, d time.Duration) (most int, err error) {
	ctx := context.Background()
	mem := memory.NewPartitions()
	c := newTestClock()
	tx, err := balance.NewTransactions(mem, balance.TxnOptions{Options: balance.Options{Clock: c.Now}, Partitions: partitions})
	if err != nil {
		return 0, err
	}
	step := time.Second / time.Duration(rate)
	last := c.Now()
	for i := 0; time.Duration(i)*step < d; i++ {
		c.Add(step)
		if _, err := tx.Apply(ctx, acct, crdt.TxnID(fmt.Sprint("t-", i)), 1); err != nil {
			return most, err
		}
		if c.Now().Sub(last) < mergeEvery {
			continue
		}
		last = c.Now()
		for _, p := range tx.RowPartitions(acct) {
			n := 0
			if err := mem.Scan(ctx, p, nil, store.ReadAny, func(store.Row) bool { n++; return true }); err != nil {
				return most, err
			}
			most = max(most, n)
		}
		if _, err := tx.Merge(ctx, acct); err != nil {
			return most, err
		}
	}
	return most, nil
}

// A hot account's row partitions stay within what TxnOptions.Partitions
// states: two rows per credit of the last SettleGrace plus two merge
// intervals (at most 700 credits a second a partition with merges every 5
// seconds), so the defaults hold 11,000 credits a second; and past that
// size merges fail (crdt.ErrTooLarge). CI: one partition at 100 credits a
// second; COUNTERKIT_CASES=1 adds one partition at 700 a second, at 1,000
// a second until it fails (about 60,000 credits), and the default
// Partitions at 11,000 a second (1.6 million credits).
func TestTransactionsHotAccountRows(t *testing.T) {
	if testing.Short() {
		t.Skip("sequential, 15,000 credits: the first pass runs it")
	}
	const mergeEvery, d = 5 * time.Second, 150 * time.Second
	grace := time.Minute // the default SettleGrace
	bound := func(rate int) int { return int(2 * float64(rate) * (grace + 2*mergeEvery).Seconds()) }
	runs := []struct{ partitions, rate int }{{1, 100}}
	if os.Getenv("COUNTERKIT_CASES") != "" {
		runs = append(runs, struct{ partitions, rate int }{1, 700}, struct{ partitions, rate int }{balance.DefaultPartitions, 11_000})
	}
	for _, r := range runs {
		most, err := hotRun(r.partitions, r.rate, mergeEvery, d)
		if err != nil {
			t.Fatalf("%d partitions, %d credits/s: %v", r.partitions, r.rate, err)
		}
		perPartition := r.rate / r.partitions
		if most > bound(perPartition) || most > balance.MaxRows {
			t.Fatalf("%d partitions, %d credits/s: a partition held %d rows, more than %d", r.partitions, r.rate, most, min(bound(perPartition), balance.MaxRows))
		}
		t.Logf("%d partitions, %d credits/s: at most %d rows a partition (bound %d)", r.partitions, r.rate, most, bound(perPartition))
	}
	if os.Getenv("COUNTERKIT_CASES") == "" {
		return
	}
	most, err := hotRun(1, 1000, mergeEvery, d)
	if !errors.Is(err, crdt.ErrTooLarge) {
		t.Fatalf("one partition at 1,000 credits/s: %v after %d rows, want crdt.ErrTooLarge", err, most)
	}
}

package balance_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
)

// Transactions.Merge reads every row partition first, then runs steps 4–8
// of each; step 6's MaxMerge check counts from step 4's clock, so with
// every store write taking 150 ms of clock the last partitions merge too.
// (Found by a review: counted from each partition's read, partitions 9–15
// stopped with ErrSlowMerge at every merge.)
func TestTransactionsLatePartitionsMerge(t *testing.T) {
	for _, lat := range []time.Duration{100 * time.Millisecond, 150 * time.Millisecond} {
		c := newTestClock()
		st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
		st.SetHook(func(_ context.Context, call faulty.Call, after bool) error {
			if after && call.Method == faulty.MethodApply {
				c.Add(lat)
			}
			return nil
		})
		tx, err := balance.NewTransactions(st, txnOpts(c))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		never := map[int]int{}
		k := 0
		const rounds = 12
		for round := range rounds {
			for range 200 { // credits in every partition and shard
				if _, err := tx.Apply(ctx, acct, crdt.TxnID(fmt.Sprint("c", k)), 1); err != nil {
					t.Fatal(err)
				}
				k++
			}
			c.Add(5 * time.Second)
			reps, err := tx.Merge(ctx, acct)
			slow := 0
			for i, r := range reps {
				if r.Sum == nil {
					if round >= 2 {
						never[i]++
					}
					slow++
				}
			}
			t.Logf("latency %v round %d: %d of %d partitions wrote no sum; slow=%v", lat, round, slow, len(reps), errors.Is(err, balance.ErrSlowMerge))
			b, err := tx.Balance(ctx, acct)
			if err != nil || b != int64(k) {
				t.Fatalf("balance %d %v want %d", b, err, k)
			}
		}
		stuck := 0
		for i := range 16 {
			if never[i] == rounds-2 {
				stuck++
			}
		}
		t.Logf("latency %v: %d partitions wrote no sum in any of the last %d merges: %v", lat, stuck, rounds-2, never)
		if stuck > 0 {
			t.Errorf("latency %v: %d partitions never merged", lat, stuck)
		}
	}
}

package balance_test

// Retries of Transactions' credits and debits as a user with the defaults
// sends them (README, "A hot account"; SPEC.md 9.4): to several instances
// at once while merges run on each, and hours after the merge that
// recorded them with no merge in between.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store/faulty"
)

// TestTransactionsConcurrentDeliveriesAndMergers: 40 transactions (a
// quarter of them debits), each delivered 4 times at once to 3
// Transactions over a store that loses a fifth of the acknowledgements of
// batches that landed and refuses a tenth, while each of the three merges
// the account in a loop through that store and the clock moves; every
// delivery is retried until answered. Each answer is Applied or
// Duplicate; after clean merges the balance counts each transaction once,
// and a retry of each on a new Transactions, then, an hour and 23 hours
// later (with merges between), is a duplicate.
func TestTransactionsConcurrentDeliveriesAndMergers(t *testing.T) {
	for seed := int64(1); seed <= int64(proptest.Scale(6)); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			ctx := context.Background()
			c := newTestClock()
			mem := memory.NewPartitions()
			policy := faulty.Seeded(seed, faulty.Rates{LoseAck: 0.2, Refuse: 0.1})
			// Each store call yields, so that deliveries and merges
			// overlap even on one core.
			yield := func(context.Context, faulty.Call, bool) error { runtime.Gosched(); return nil }
			st := faulty.NewPartitions(mem, faulty.Options{Policy: policy, Hook: yield})
			var txs []*balance.Transactions
			for range 3 {
				txs = append(txs, newTxns(t, st, c))
			}
			amount := func(i int) int64 {
				if i%4 == 3 {
					return -int64(i + 1)
				}
				return int64(i + 1)
			}
			stop := make(chan struct{})
			var mergers sync.WaitGroup
			for _, tx := range txs {
				mergers.Add(1)
				go func() {
					defer mergers.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						_, _ = tx.Merge(ctx, acct)
						c.Add(time.Second / 3)
					}
				}()
			}
			const txns, deliveries = 40, 4
			want := int64(0)
			var wg sync.WaitGroup
			for i := range txns {
				want += amount(i)
				for d := range deliveries {
					wg.Add(1)
					go func() {
						defer wg.Done()
						tx := txs[(i+d)%len(txs)]
						for try := 0; ; try++ {
							o, err := tx.Apply(ctx, acct, crdt.TxnID(fmt.Sprint("t", i)), amount(i))
							if err == nil {
								if o != balance.Applied && o != balance.Duplicate {
									t.Errorf("t%d/%d: %v", i, d, o)
								}
								return
							}
							if try > 200 {
								t.Errorf("t%d/%d: %v", i, d, err)
								return
							}
						}
					}()
				}
			}
			wg.Wait()
			close(stop)
			mergers.Wait()
			clean := newTxns(t, mem, c)
			for range 6 {
				c.Add(time.Minute)
				mustMerge(t, clean)
			}
			if b := balanceOf(t, clean); b != want {
				t.Fatalf("balance %d, want %d (each transaction once)", b, want)
			}
			for _, d := range []time.Duration{0, time.Hour, 22 * time.Hour} {
				c.Add(d)
				fresh := newTxns(t, mem, c)
				for i := range txns {
					if o, err := fresh.Apply(ctx, acct, crdt.TxnID(fmt.Sprint("t", i)), amount(i)); err != nil || o != balance.Duplicate {
						t.Fatalf("retry of t%d %v later: %v %v; want a duplicate", i, d, o, err)
					}
				}
				mustMerge(t, fresh)
				if b := balanceOf(t, fresh); b != want {
					t.Fatalf("balance %d, want %d", b, want)
				}
			}
		})
	}
}

// TestTransactionsRetryWithIdleMerger: a credit and a debit, merged once;
// no merge runs until the retries, which come from a new Transactions
// from a second to RetryWindow − 1 ms after that merge, for merges at
// every 37 minutes of a day (so at every phase of the record partitions'
// windows): each is a duplicate and the balance counts both once.
func TestTransactionsRetryWithIdleMerger(t *testing.T) {
	ctx := context.Background()
	w := balance.DefaultRetryWindow
	for off := time.Duration(0); off < w+time.Hour; off += 37 * time.Minute {
		for _, gap := range []time.Duration{time.Second, time.Hour, w / 2, w - time.Minute, w - time.Millisecond} {
			t.Run(fmt.Sprint(off, "/", gap), func(t *testing.T) {
				c := newTestClock()
				c.Add(off)
				st := memory.NewPartitions()
				tx := newTxns(t, st, c)
				mustApply(t, tx, "x", 5, balance.Applied)
				mustApply(t, tx, "y", -3, balance.Applied)
				c.Add(time.Second)
				mustMerge(t, tx)
				c.Add(gap)
				fresh := newTxns(t, st, c)
				mustApply(t, fresh, "x", 5, balance.Duplicate)
				mustApply(t, fresh, "y", -3, balance.Duplicate)
				if _, err := fresh.Apply(ctx, acct, "y", 3); !errors.Is(err, crdt.ErrConflictingTransaction) {
					t.Fatalf("the debit's id as a credit: %v; want ErrConflictingTransaction", err)
				}
				mustMerge(t, fresh)
				if b := balanceOf(t, fresh); b != 2 {
					t.Fatalf("balance %d, want 2", b)
				}
			})
		}
	}
}

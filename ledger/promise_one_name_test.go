package ledger_test

// Concurrent deliveries to instances that share one actor name: two
// replicas of a service deployed with the same configuration, or a
// process and its restart overlapping in a rolling deploy.

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestPromiseConcurrentDeliveriesOneActorName: 30 transactions (a third
// of them debits), each delivered 4 times at once to 3 instances that all
// use Actor "svc" (three Ledgers, three Sharded values, three Books, or
// Ledgers and a Book), over a store that loses a fifth of the
// acknowledgements of writes that landed, refuses a tenth, loses some
// writes and holds some in flight; every delivery is retried until it is
// answered. Each answer is Applied or a duplicate, and once the held
// writes land and the instances read again, the account counts each
// transaction once.
func TestPromiseConcurrentDeliveriesOneActorName(t *testing.T) {
	for _, kind := range []string{"ledger", "sharded", "book", "mixed"} {
		for seed := int64(1); seed <= int64(envCases(t, 3)); seed++ {
			t.Run(fmt.Sprint(kind, "/", seed), func(t *testing.T) {
				mem := memory.NewSiblings()
				policy := faulty.Seeded(seed, faulty.Rates{LoseAck: 0.2, Refuse: 0.1, Lose: 0.05, Hold: 0.03})
				// Each store call yields, so that deliveries overlap even
				// on one core.
				yield := func(context.Context, faulty.Call, bool) error { runtime.Gosched(); return nil }
				st := faulty.NewSiblings(mem, faulty.Options{Policy: policy, Hook: yield})
				o := ledger.Options{Actor: "svc", Backoff: ledger.Backoff{Initial: -1}}
				var writers []func(context.Context, crdt.TxnID, int64) (ledger.Result, error)
				var reads []func(context.Context)
				for i := range 3 {
					k := kind
					if k == "mixed" {
						k = []string{"ledger", "book", "ledger"}[i]
					}
					switch k {
					case "ledger":
						l, _ := ledger.New(st, "acct", o)
						writers = append(writers, l.Update)
						reads = append(reads, func(ctx context.Context) { _, _ = l.Find(ctx) })
					case "sharded":
						s, _ := ledger.NewSharded(st, "acct", 4, o)
						writers = append(writers, s.Update)
						reads = append(reads, func(ctx context.Context) { _, _ = s.FindAll(ctx) })
					case "book":
						b, _ := ledger.NewBook(st, ledger.BookOptions{Options: o})
						writers = append(writers, func(ctx context.Context, txn crdt.TxnID, a int64) (ledger.Result, error) {
							r, err := b.Update(ctx, "acct", txn, a)
							return r.Result, err
						})
						reads = append(reads, func(ctx context.Context) { _ = b.LandPending(ctx) })
					}
				}
				const txns, deliveries = 30, 4
				amount := func(i int) int64 {
					if i%3 == 2 {
						return -int64(i + 1)
					}
					return int64(i + 1)
				}
				want := int64(0)
				var wg sync.WaitGroup
				for i := range txns {
					want += amount(i)
					for d := range deliveries {
						wg.Add(1)
						go func() {
							defer wg.Done()
							w := writers[(i+d)%len(writers)]
							for try := 0; ; try++ {
								r, err := w(context.Background(), crdt.TxnID(fmt.Sprint("t", i)), amount(i))
								if err == nil {
									if r.Outcome != tpncounter.Applied && !isDuplicate(r.Outcome) {
										t.Errorf("t%d/%d: %v", i, d, r.Outcome)
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
				st.SetPolicy(nil)
				if err := st.DeliverAll(); err != nil {
					t.Log(err)
				}
				ctx := context.Background()
				for range 3 {
					for _, read := range reads {
						read(ctx)
					}
				}
				var v int64
				var err error
				if kind == "sharded" {
					r, _ := ledger.NewSharded(mem, "acct", 4, ledger.Options{Actor: "reader"})
					v, err = r.Value(ctx)
				} else {
					r, _ := ledger.New(mem, "acct", ledger.Options{Actor: "reader"})
					v, err = r.Value(ctx)
				}
				if err != nil || v != want {
					t.Fatalf("value %d %v, want %d (each transaction once)", v, err, want)
				}
			})
		}
	}
}

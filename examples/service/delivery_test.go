package main

import (
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/store"
)

// stores are the stores the service's promises are checked on: memory,
// and the embedded store the service runs on (a fresh directory, closed
// when the test ends).
var stores = []struct {
	name string
	open func(t *testing.T) store.Siblings
}{
	{"memory", func(*testing.T) store.Siblings { return memory.NewSiblings() }},
	{"embedded", func(t *testing.T) store.Siblings {
		db, err := embedded.Open(t.TempDir(), embedded.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := db.Close(); err != nil {
				t.Error(err)
			}
		})
		return db.Siblings()
	}},
}

// TestConcurrentDeliveries, on memory and on the embedded store: 200
// concurrent requests carrying 40
// transactions, 5 deliveries of each: every request is answered applied or
// as a duplicate (duplicate, duplicate_folded) and the balance is exactly the sum of the 40 distinct amounts.
// With one service each transaction is answered applied exactly once; with
// two services sharing the store (two writers), copies applied by both at
// once still count once.
func TestConcurrentDeliveries(t *testing.T) {
	seed := testSeed(t)
	for _, sc := range stores {
		for _, services := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/services=%d", sc.name, services), func(t *testing.T) {
				r := concurrentDeliveries(t, sc.open(t), services, 40, 5, seed)
				t.Logf("answers %v, balance %d", r.answers, r.balance)
				if r.answers["applied"]+r.answers["duplicate"]+r.answers["duplicate_folded"] != 200 {
					t.Fatalf("answers %v: want 200 applied, duplicate or duplicate_folded", r.answers)
				}
				if r.balance != r.want {
					t.Fatalf("balance %d, want %d, the sum of the 40 distinct amounts", r.balance, r.want)
				}
				if len(r.applied) != 40 {
					t.Fatalf("%d transactions answered applied at least once, want 40", len(r.applied))
				}
				if services == 1 {
					for txn, n := range r.applied {
						if n != 1 {
							t.Fatalf("%s answered applied %d times by one service", txn, n)
						}
					}
				}
			})
		}
	}
}

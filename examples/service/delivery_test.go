package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
)

// TestConcurrentDeliveries: 200 concurrent requests carrying 40
// transactions, 5 deliveries of each: every request is answered applied or
// as a duplicate (duplicate, duplicate_folded) and the balance is exactly the sum of the 40 distinct amounts.
// With one service each transaction is answered applied exactly once; with
// two services sharing the store (two writers), copies applied by both at
// once still count once.
func TestConcurrentDeliveries(t *testing.T) {
	seed := testSeed(t)
	for _, services := range []int{1, 2} {
		t.Run(fmt.Sprintf("services=%d", services), func(t *testing.T) {
			r := concurrentDeliveries(t, memory.NewSiblings(), services, 40, 5, seed)
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

// TestRetryInFlightDuringOtherCredits: a delivery of pay-0 reads pay-0's
// record (none yet) and is held there while another delivery of pay-0
// lands it and 21 other credits follow; then it goes on. It must be
// answered as a duplicate, the balance 121: what the ledger read before
// it queued is no longer the truth when its write comes.
func TestRetryInFlightDuringOtherCredits(t *testing.T) {
	mem := memory.NewSiblings()
	key := ledger.RecordKey(accountKey("hot"), crdt.TxnID("pay-0"))
	parked, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	f := faulty.NewSiblings(mem, faulty.Options{
		Hook: func(ctx context.Context, c faulty.Call, after bool) error {
			if after && c.Method == faulty.MethodFetch && c.Key == key {
				if first.CompareAndSwap(false, true) {
					close(parked)
					<-release
				}
			}
			return nil
		},
	})
	svc := newDefaultService(t, f)
	type answer struct {
		w   writeResponse
		err error
	}
	held := make(chan answer, 1)
	go func() {
		w, err := tryCredit(svc, "hot", "pay-0", 100)
		held <- answer{w, err}
	}()
	<-parked
	if w := credit(t, svc, "hot", "pay-0", 100); w.Outcome != "applied" {
		t.Fatalf("pay-0: %+v", w)
	}
	for i := 1; i <= 21; i++ {
		credit(t, svc, "hot", fmt.Sprintf("pay-%d", i), 1)
	}
	close(release)
	a := <-held
	if a.err != nil {
		t.Fatal(a.err)
	}
	v := stored(t, mem, "hot")
	if !isDuplicate(a.w.Outcome) || v != 121 {
		t.Fatalf("the held delivery of pay-0: outcome %q, balance %d (stored %d); want a duplicate and 121", a.w.Outcome, a.w.Balance, v)
	}
}

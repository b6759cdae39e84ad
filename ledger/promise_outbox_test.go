package ledger_test

// Probes of the outbox of package ledger's "Side effects",
// built as the doc and ExampleResult_outbox describe, under concurrent
// deliveries to three instances over a store that loses acknowledgements
// and holds writes in flight.

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// promiseOutbox is the outbox: entries keyed by transaction id, upserted
// without touching done, run by one consumer.
type promiseOutbox struct {
	mu      sync.Mutex
	entries map[crdt.TxnID]*struct{ done bool }
	ran     map[crdt.TxnID]int
}

func (o *promiseOutbox) upsert(txn crdt.TxnID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.entries[txn] == nil {
		o.entries[txn] = &struct{ done bool }{}
	}
}

// consume runs every entry not done once and marks it done.
func (o *promiseOutbox) consume() {
	o.mu.Lock()
	var todo []crdt.TxnID
	for txn, e := range o.entries {
		if !e.done {
			todo = append(todo, txn)
		}
	}
	o.mu.Unlock()
	for _, txn := range todo {
		o.mu.Lock()
		o.ran[txn]++ // the side effect
		o.entries[txn].done = true
		o.mu.Unlock()
	}
}

func TestPromiseOutboxExactlyOnce(t *testing.T) {
	for seed := int64(1); seed <= int64(envCases(t, 6)); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			ctx := context.Background()
			c := newPromiseClock()
			mem := memory.NewSiblings()
			var mu sync.Mutex
			rng := rand.New(rand.NewSource(seed))
			policy := func(call faulty.Call) faulty.Fault {
				if call.Method != faulty.MethodPut {
					return faulty.Pass
				}
				mu.Lock()
				defer mu.Unlock()
				switch p := rng.Float64(); {
				case p < 0.15:
					return faulty.LoseAck
				case p < 0.2:
					return faulty.Lose
				case p < 0.25:
					return faulty.Refuse
				case p < 0.27:
					return faulty.Hold
				}
				return faulty.Pass
			}
			st := faulty.NewSiblings(mem, faulty.Options{Policy: faulty.Policy(policy)})
			la, _ := ledger.New(st, "wallet", promiseOpts("a", c))
			lb, _ := ledger.New(st, "wallet", promiseOpts("b", c))
			bk, _ := ledger.NewBook(st, ledger.BookOptions{Options: promiseOpts("c", c)})
			writers := []func(crdt.TxnID, int64) (ledger.Result, error){
				func(x crdt.TxnID, a int64) (ledger.Result, error) { return la.Credit(ctx, x, a) },
				func(x crdt.TxnID, a int64) (ledger.Result, error) { return lb.Credit(ctx, x, a) },
				func(x crdt.TxnID, a int64) (ledger.Result, error) {
					r, err := bk.Credit(ctx, "wallet", x, a)
					return r.Result, err
				},
			}
			box := &promiseOutbox{entries: map[crdt.TxnID]*struct{ done bool }{}, ran: map[crdt.TxnID]int{}}
			stop := make(chan struct{})
			consumed := make(chan struct{})
			go func() {
				defer close(consumed)
				for {
					select {
					case <-stop:
						box.consume()
						return
					default:
						box.consume()
						time.Sleep(50 * time.Microsecond)
					}
				}
			}()
			deliver := func(w func(crdt.TxnID, int64) (ledger.Result, error), txn crdt.TxnID, amount int64) {
				var err error
				for try := 0; try < 500; try++ {
					var r ledger.Result
					if r, err = w(txn, amount); err == nil {
						if r.Outcome != tpncounter.Superseded {
							box.upsert(txn)
						}
						return
					}
				}
				t.Errorf("%s: no answer in 500 tries, the last: %v", txn, err)
			}
			const txns, deliveries = 40, 5
			var wg sync.WaitGroup
			for i := range txns {
				for d := range deliveries {
					wg.Add(1)
					go func() {
						defer wg.Done()
						deliver(writers[(i+d)%3], crdt.TxnID(fmt.Sprint("order-", i)), int64(i+1))
					}()
				}
			}
			wg.Wait()
			st.SetPolicy(nil)
			_ = st.DeliverAll()
			// Land what the instances hold, as a service's landing loop
			// does within a second (examples/service -land-every). Left
			// unlanded for RetireAfter while another writer's pass retires
			// the holder, a copy can come back and count twice: SPEC.md
			// 6.11 Limits, "Retirement of a writer whose write is in
			// doubt" (seen in this probe before this step was added).
			land := func() {
				for range 3 {
					_, _ = la.Find(ctx)
					_, _ = lb.Find(ctx)
					_ = bk.LandPending(ctx)
				}
			}
			land()
			// A day of retries later: every retry is a Duplicate.
			c.Add(23*time.Hour + 59*time.Minute)
			for i := range txns {
				deliver(writers[i%3], crdt.TxnID(fmt.Sprint("order-", i)), int64(i+1))
			}
			close(stop)
			<-consumed
			for i := range txns {
				if n := box.ran[crdt.TxnID(fmt.Sprint("order-", i))]; n != 1 {
					t.Errorf("order-%d: side effect ran %d times, want 1", i, n)
				}
			}
			land()
			reader, _ := ledger.New(mem, "wallet", promiseOpts("reader", c))
			if v, err := reader.Value(ctx); err != nil || v != txns*(txns+1)/2 {
				t.Fatalf("value %d %v, want %d", v, err, txns*(txns+1)/2)
			}
		})
	}
}

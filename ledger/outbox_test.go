package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
)

// outbox is the package documentation's outbox ("Side effects"): entries
// keyed by transaction id, upserted by every delivery answered without an
// error, sent by one consumer. deleteSent is the broken variant that marks
// an entry done by deleting it.
type outbox struct {
	mu         sync.Mutex
	receipt    map[crdt.TxnID]string
	done       map[crdt.TxnID]bool
	sent       map[crdt.TxnID]int
	deleteSent bool
}

func newOutbox(deleteSent bool) *outbox {
	return &outbox{receipt: map[crdt.TxnID]string{}, done: map[crdt.TxnID]bool{}, sent: map[crdt.TxnID]int{}, deleteSent: deleteSent}
}

func (o *outbox) upsert(txn crdt.TxnID, receipt string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.receipt[txn] = receipt // leaves done alone
}

func (o *outbox) consume() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for txn := range o.receipt {
		if o.done[txn] {
			continue
		}
		o.sent[txn]++
		if o.deleteSent {
			delete(o.receipt, txn)
		} else {
			o.done[txn] = true
		}
	}
}

// The outbox the package documentation describes runs each side effect
// once when the consumer runs between two deliveries' answers; the variant
// that deletes sent entries runs it twice (the check can fail). Then, with
// every transaction delivered to two of three ledgers at once through lost
// acknowledgements and lost and refused writes (no stale reads: with them
// the value meets the limit TestLimitBothRecordsMineThenStaleForget
// shows, about one run in 25), each caller
// retrying on another ledger after an error, and the consumer polling, each
// receipt is sent exactly once and the value counts each transaction once.
func TestOutboxRunsEachEffectOnce(t *testing.T) {
	ctx := context.Background()
	for _, deleteSent := range []bool{false, true} {
		st := memory.NewSiblings()
		a, err := ledger.New(st, "wallet", ledger.Options{Actor: "a"})
		require.NoError(t, err)
		b, err := ledger.New(st, "wallet", ledger.Options{Actor: "b"})
		require.NoError(t, err)
		ob := newOutbox(deleteSent)
		for _, l := range []*ledger.Ledger{a, b} {
			_, err := l.Credit(ctx, "order-1", 100)
			require.NoError(t, err)
			ob.upsert("order-1", "receipt")
			ob.consume()
		}
		want := 1
		if deleteSent {
			want = 2
		}
		require.Equal(t, want, ob.sent["order-1"], "deleteSent %v", deleteSent)
	}

	seed := doubtSeed(t)
	t.Logf("seed %d; replay: COUNTERKIT_SEED=%d go test ./ledger -run '^TestOutboxRunsEachEffectOnce$'", seed, seed)
	inner := memory.NewSiblings()
	rates := faulty.Seeded(seed, faulty.Rates{Refuse: 0.05, LoseAck: 0.1, Lose: 0.05})
	var mu sync.Mutex
	faults := true
	st := faulty.NewSiblings(inner, faulty.Options{RecordWrites: true, Policy: ledger.FreshRecords(func(c faulty.Call) faulty.Fault {
		mu.Lock()
		defer mu.Unlock()
		if !faults {
			return faulty.Pass
		}
		return rates(c)
	})})
	ls := make([]*ledger.Ledger, 3)
	for i := range ls {
		l, err := ledger.New(st, "wallet", ledger.Options{Actor: crdt.ActorID(fmt.Sprint("app-", i)), Backoff: ledger.Backoff{Initial: -1}})
		require.NoError(t, err)
		ls[i] = l
	}
	ob := newOutbox(false)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			ob.consume()
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Microsecond):
			}
		}
	}()
	const n = 150
	var want int64
	var retries atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		txn, amount := crdt.TxnID(fmt.Sprint("order-", i)), int64(i%7+1)
		want += amount
		first := i % 3
		for k, at := range []int{first, (first + 1 + i%2) % 3} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewSource(seed + int64(2*i+k)))
				for try := 0; ; try++ {
					_, err := ls[at].Credit(ctx, txn, amount)
					if err == nil {
						ob.upsert(txn, fmt.Sprint("receipt ", txn))
						return
					}
					if !errors.Is(err, crdt.ErrUnavailable) && !errors.Is(err, crdt.ErrAmbiguousWrite) || try == 200 {
						errs <- fmt.Errorf("%s: %w", txn, err)
						return
					}
					retries.Add(1)
					at = rng.Intn(len(ls))
				}
			}()
		}
	}
	wg.Wait()
	close(stop)
	<-stopped
	ob.consume()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	t.Logf("%d calls failed and were retried on another ledger", retries.Load())
	require.Positive(t, retries.Load(), "the faults reached the callers")
	for i := range n {
		require.Equal(t, 1, ob.sent[crdt.TxnID(fmt.Sprint("order-", i))], "order-%d sent once", i)
	}
	mu.Lock()
	faults = false
	mu.Unlock()
	for range 3 { // copies in doubt or watched settle as running ledgers' reads and writes settle them
		for _, l := range ls {
			_, err := l.Find(ctx)
			require.NoError(t, err)
		}
	}
	r, err := ledger.New(inner, "wallet", ledger.Options{Actor: "reader"})
	require.NoError(t, err)
	v, err := r.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, want, v, "each transaction counted once")
}

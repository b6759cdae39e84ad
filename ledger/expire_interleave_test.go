package ledger_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// steppedStore makes each of ExpireRecords' store calls wait for a step.
type steppedStore struct {
	*memory.Siblings
	step chan struct{}
	done chan struct{}
}

func (g *steppedStore) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	<-g.step
	defer func() { g.done <- struct{}{} }()
	return g.Siblings.Fetch(ctx, key)
}

func (g *steppedStore) Delete(ctx context.Context, key string, tok store.Token) error {
	<-g.step
	defer func() { g.done <- struct{}{} }()
	return g.Siblings.Delete(ctx, key, tok)
}

// expireCase: setup stores what the sweep finds and returns the record key
// it sweeps and the sweep's clock; call is the writer's call, racing the
// sweep; want checks the outcome and the store after both.
type expireCase struct {
	name  string
	setup func(t *testing.T, st *memory.Siblings, c *promiseClock) (key string, clock func() time.Time)
	call  func(t *testing.T, st store.Siblings, c *promiseClock) tpncounter.Outcome
	want  func(st *memory.Siblings, key string, call time.Time, o tpncounter.Outcome) error
}

// creditAndForget credits x (100) on a new ledger of actor a, then 100
// other transactions, so that only x's record recognises a retry.
func creditAndForget(t *testing.T, st store.Siblings, opts ledger.Options, c *promiseClock, x crdt.TxnID) {
	t.Helper()
	ctx := context.Background()
	l, err := ledger.New(st, "acct", opts)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := l.Credit(ctx, x, 100); err != nil || r.Outcome != tpncounter.Applied {
		t.Fatalf("%s: %v %v", x, r.Outcome, err)
	}
	for i := range 100 {
		if _, err := l.Credit(ctx, crdt.TxnID(fmt.Sprint("t:", c.Now().UnixNano()+int64(i+1))), 1); err != nil {
			t.Fatal(err)
		}
	}
}

// recordSince: key holds a record of txn made at or after since.
func recordSince(st *memory.Siblings, key string, txn crdt.TxnID, since time.Time) error {
	sibs, _, err := st.Fetch(context.Background(), key)
	if err != nil {
		return err
	}
	for _, b := range sibs {
		var r ledger.Record
		if err := r.UnmarshalBinary(b); err != nil {
			return err
		}
		if r.Txn == txn && !r.At.Before(since) {
			return nil
		}
	}
	return fmt.Errorf("no record of %s made since %v among %d siblings", txn, since, len(sibs))
}

// stampedOpts are promiseOpts with TxnTime: "t:<Unix ns>" carries a time.
func stampedOpts(a crdt.ActorID, c *promiseClock) ledger.Options {
	o := promiseOpts(a, c)
	o.Counter.TxnTime = func(x crdt.TxnID) (time.Time, bool) {
		var ns int64
		if _, err := fmt.Sscanf(string(x), "t:%d", &ns); err != nil || ns <= 0 {
			return time.Time{}, false
		}
		return time.Unix(0, ns), true
	}
	return o
}

// TestExpireRecordsEveryInterleavingWithAWriter runs ExpireRecords (with
// the defaults) on one record key at every pair of points of a ledger
// call's store calls: before its first, between any two, after its last.
// Past the window, the call applies the transaction again and its new
// record survives the sweep that read the dead one (the delete takes the
// read's token), also beside a dead record of another transaction (a hash
// collision); inside the window, untimed or timed with a time FutureSkew
// ahead, with the sweep's clock 58 minutes ahead of the writers', the
// retry is recognised.
func TestExpireRecordsEveryInterleavingWithAWriter(t *testing.T) {
	pay0 := ledger.RecordKey("acct", "pay-0")
	retry := func(opts func(crdt.ActorID, *promiseClock) ledger.Options, x *crdt.TxnID) func(*testing.T, store.Siblings, *promiseClock) tpncounter.Outcome {
		return func(t *testing.T, st store.Siblings, c *promiseClock) tpncounter.Outcome {
			l, err := ledger.New(st, "acct", opts("svc-b", c))
			if err != nil {
				t.Fatal(err)
			}
			r, err := l.Credit(context.Background(), *x, 100)
			if err != nil {
				t.Fatal(err)
			}
			return r.Outcome
		}
	}
	untimed, stamped := crdt.TxnID("pay-0"), crdt.TxnID("")
	recordedNow := func(st *memory.Siblings, key string, call time.Time, o tpncounter.Outcome) error {
		if o != tpncounter.Applied {
			return fmt.Errorf("outcome %v, want applied", o)
		}
		return recordSince(st, key, "pay-0", call)
	}
	recognised := func(st *memory.Siblings, key string, call time.Time, o tpncounter.Outcome) error {
		if !isDuplicate(o) {
			return fmt.Errorf("outcome %v, want a duplicate", o)
		}
		return nil
	}
	cases := []expireCase{{
		name: "past the window",
		setup: func(t *testing.T, st *memory.Siblings, c *promiseClock) (string, func() time.Time) {
			creditAndForget(t, st, promiseOpts("svc", c), c, untimed)
			c.Add(ledger.DefaultExpireAfter + time.Second)
			return pay0, c.Now
		},
		call: retry(promiseOpts, &untimed),
		want: recordedNow,
	}, {
		name: "a dead record of another transaction",
		setup: func(t *testing.T, st *memory.Siblings, c *promiseClock) (string, func() time.Time) {
			b, err := (ledger.Record{Txn: "other", Amount: 5, Writer: "x", At: c.Now(), Version: 1}).MarshalBinary()
			if err == nil {
				err = st.Put(context.Background(), pay0, "x", b, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			c.Add(ledger.DefaultExpireAfter + time.Second)
			return pay0, c.Now
		},
		call: retry(promiseOpts, &untimed),
		want: recordedNow,
	}, {
		name: "inside the window",
		setup: func(t *testing.T, st *memory.Siblings, c *promiseClock) (string, func() time.Time) {
			creditAndForget(t, st, promiseOpts("svc", c), c, untimed)
			c.Add(ledger.DefaultRetryWindow - time.Nanosecond)
			return pay0, func() time.Time { return c.Now().Add(58 * time.Minute) }
		},
		call: retry(promiseOpts, &untimed),
		want: recognised,
	}, {
		name: "timed, inside the window",
		setup: func(t *testing.T, st *memory.Siblings, c *promiseClock) (string, func() time.Time) {
			at := c.Now().Add(time.Minute) // FutureSkew ahead
			stamped = crdt.TxnID(fmt.Sprint("t:", at.UnixNano()))
			creditAndForget(t, st, stampedOpts("svc", c), c, stamped)
			c.ns.Store(at.Add(ledger.DefaultRetryWindow).UnixNano())
			return ledger.RecordKey("acct", stamped), func() time.Time { return c.Now().Add(58 * time.Minute) }
		},
		call: retry(stampedOpts, &stamped),
		want: recognised,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := 0 // the call's store calls
			{
				st, c := memory.NewSiblings(), newPromiseClock()
				tc.setup(t, st, c)
				tc.call(t, faulty.NewSiblings(st, faulty.Options{Hook: func(_ context.Context, _ faulty.Call, after bool) error {
					if !after {
						n++
					}
					return nil
				}}), c)
			}
			for i := 0; i <= n; i++ {
				for j := i; j <= n; j++ {
					st, c := memory.NewSiblings(), newPromiseClock()
					key, clock := tc.setup(t, st, c)
					g := &steppedStore{Siblings: st, step: make(chan struct{}), done: make(chan struct{})}
					finished := make(chan struct{})
					var res ledger.ExpireResult
					var err error
					go func() {
						defer close(finished)
						res, err = ledger.ExpireRecords(context.Background(), g, []string{key}, ledger.ExpireOptions{Clock: clock})
					}()
					step := func() {
						select {
						case g.step <- struct{}{}:
							<-g.done
						case <-finished:
						}
					}
					k := 0
					at := func(pos int) {
						if pos == i {
							step()
						}
						if pos == j {
							step()
						}
					}
					callAt := c.Now()
					o := tc.call(t, faulty.NewSiblings(st, faulty.Options{Hook: func(_ context.Context, _ faulty.Call, after bool) error {
						if !after {
							at(k)
							k++
						}
						return nil
					}}), c)
					for ; k <= n; k++ {
						at(k)
					}
					step()
					step()
					<-finished
					if err != nil {
						t.Fatal(err)
					}
					if werr := tc.want(st, key, callAt, o); werr != nil {
						t.Errorf("sweep's read and delete before the call's store calls %d and %d of %d (%+v): %v", i+1, j+1, n, res, werr)
					}
				}
			}
		})
	}
}

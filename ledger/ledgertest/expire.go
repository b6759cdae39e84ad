package ledgertest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// SweepStore is a store ledger.ExpireRecords sweeps: one that deletes
// siblings.
type SweepStore interface {
	store.Siblings
	store.SiblingDeleter
}

// testExpireInterleavings runs ExpireInterleavings on a store that
// deletes siblings and requires every placement to pass.
func testExpireInterleavings(t *testing.T, s store.Siblings, key string) {
	st, ok := s.(SweepStore)
	if !ok {
		t.Skip("the store deletes no siblings (store.SiblingDeleter): records expire by a TTL")
	}
	for _, f := range ExpireInterleavings(t, st, key, nil) {
		t.Error(f)
	}
}

// expireClock is the writers' clock of one placement.
type expireClock struct{ ns atomic.Int64 }

func (c *expireClock) Now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *expireClock) Add(d time.Duration) { c.ns.Add(int64(d)) }

// expireOpts are a ledger's defaults with the clock c, a short history
// (three credits forget a transaction, so that only its record
// recognises a retry) and, when timed, ids "t:<Unix ns>" that carry a
// time.
func expireOpts(actor crdt.ActorID, c *expireClock, timed bool) ledger.Options {
	o := ledger.Options{Actor: actor, Clock: c.Now}
	o.Counter.HistoryLength = 1
	if timed {
		o.Counter.TxnTime = func(x crdt.TxnID) (time.Time, bool) {
			var ns int64
			if _, err := fmt.Sscanf(string(x), "t:%d", &ns); err != nil || ns <= 0 {
				return time.Time{}, false
			}
			return time.Unix(0, ns), true
		}
	}
	return o
}

// expireCase: setup stores what the sweep finds under acct and returns
// the transaction the racing retry carries and the sweep's clock; want
// checks the retry's outcome and the record key after both.
type expireCase struct {
	name  string
	timed bool
	setup func(t *testing.T, st store.Siblings, acct string, c *expireClock) (txn crdt.TxnID, sweepClock func() time.Time)
	want  func(st store.Siblings, key string, txn crdt.TxnID, call time.Time, o tpncounter.Outcome) error
}

// creditAndForget credits txn (100) on a new ledger of acct, then three
// other transactions, after which the counter no longer holds txn.
func creditAndForget(t *testing.T, st store.Siblings, acct string, c *expireClock, timed bool, txn crdt.TxnID) {
	t.Helper()
	ctx := ctxFor(t)
	l, err := ledger.New(st, acct, expireOpts("svc", c, timed))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := l.Credit(ctx, txn, 100); err != nil || r.Outcome != tpncounter.Applied {
		t.Fatalf("%s: %+v %v", txn, r, err)
	}
	for i := range 3 {
		if _, err := l.Credit(ctx, crdt.TxnID(fmt.Sprint("t:", c.Now().UnixNano()+int64(i+1))), 1); err != nil {
			t.Fatal(err)
		}
	}
}

// retry credits txn (100) again on a new ledger of acct. It retires no
// one, so that its store calls come in one order: a retirement of "svc",
// which its records date past the window, reads records concurrently.
func retry(t *testing.T, st store.Siblings, acct string, c *expireClock, timed bool, txn crdt.TxnID) tpncounter.Outcome {
	t.Helper()
	o := expireOpts("svc-b", c, timed)
	o.RetireAfter = -1
	l, err := ledger.New(st, acct, o)
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Credit(ctxFor(t), txn, 100)
	if err != nil {
		t.Fatal(err)
	}
	return r.Outcome
}

// recordSince: key holds a record of txn made at or after since.
func recordSince(st store.Siblings, key string, txn crdt.TxnID, since time.Time) error {
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

func appliedAndRecorded(st store.Siblings, key string, txn crdt.TxnID, call time.Time, o tpncounter.Outcome) error {
	if o != tpncounter.Applied {
		return fmt.Errorf("outcome %v, want applied", o)
	}
	return recordSince(st, key, txn, call)
}

func recognised(_ store.Siblings, _ string, _ crdt.TxnID, _ time.Time, o tpncounter.Outcome) error {
	if o != tpncounter.Duplicate && o != tpncounter.DuplicateFolded {
		return fmt.Errorf("outcome %v, want a duplicate", o)
	}
	return nil
}

var expireCases = []expireCase{{
	// The retry is applied again and its new record, written between the
	// sweep's read of the dead one and its delete, survives.
	name: "past the window",
	setup: func(t *testing.T, st store.Siblings, acct string, c *expireClock) (crdt.TxnID, func() time.Time) {
		creditAndForget(t, st, acct, c, false, "pay-0")
		c.Add(ledger.DefaultExpireAfter + time.Second)
		return "pay-0", c.Now
	},
	want: appliedAndRecorded,
}, {
	// The same beside a dead record of another transaction under the key
	// (a hash collision).
	name: "a dead record of another transaction",
	setup: func(t *testing.T, st store.Siblings, acct string, c *expireClock) (crdt.TxnID, func() time.Time) {
		b, err := (ledger.Record{Txn: "other", Amount: 5, Writer: "x", At: c.Now(), Version: 1}).MarshalBinary()
		if err == nil {
			err = st.Put(ctxFor(t), ledger.RecordKey(acct, "pay-0"), "x", b, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		c.Add(ledger.DefaultExpireAfter + time.Second)
		return "pay-0", c.Now
	},
	want: appliedAndRecorded,
}, {
	// The sweep's clock is 58 minutes ahead of the writers' at the
	// window's last nanosecond: the record stays and answers the retry.
	name: "inside the window",
	setup: func(t *testing.T, st store.Siblings, acct string, c *expireClock) (crdt.TxnID, func() time.Time) {
		creditAndForget(t, st, acct, c, false, "pay-0")
		c.Add(ledger.DefaultRetryWindow - time.Nanosecond)
		return "pay-0", func() time.Time { return c.Now().Add(58 * time.Minute) }
	},
	want: recognised,
}, {
	// The same for a timed transaction whose time is FutureSkew ahead.
	name:  "timed, inside the window",
	timed: true,
	setup: func(t *testing.T, st store.Siblings, acct string, c *expireClock) (crdt.TxnID, func() time.Time) {
		at := c.Now().Add(ledger.DefaultFutureSkew)
		x := crdt.TxnID(fmt.Sprint("t:", at.UnixNano()))
		creditAndForget(t, st, acct, c, true, x)
		c.ns.Store(at.Add(ledger.DefaultRetryWindow).UnixNano())
		return x, func() time.Time { return c.Now().Add(58 * time.Minute) }
	},
	want: recognised,
}}

// steppedSweep makes each of the sweep's store calls wait for a step.
type steppedSweep struct {
	SweepStore
	step, done chan struct{}
}

func (g *steppedSweep) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	<-g.step
	defer func() { g.done <- struct{}{} }()
	return g.SweepStore.Fetch(ctx, key)
}

func (g *steppedSweep) Delete(ctx context.Context, key string, tok store.Token) error {
	<-g.step
	defer func() { g.done <- struct{}{} }()
	return g.SweepStore.Delete(ctx, key, tok)
}

// steppedBatch is a steppedSweep of a store that deletes in batches.
type steppedBatch struct{ *steppedSweep }

func (g steppedBatch) DeleteBatch(ctx context.Context, keys []string, tokens []store.Token) error {
	<-g.step
	defer func() { g.done <- struct{}{} }()
	return g.SweepStore.(store.SiblingBatchDeleter).DeleteBatch(ctx, keys, tokens)
}

// ExpireInterleavings runs ledger.ExpireRecords (with the defaults) on a
// transaction's record key of st with its read and its delete (a batch
// of one on a store.SiblingBatchDeleter) placed at
// every pair of points of a ledger retry's store calls on st: before the
// first, between two, after the last. Past the window, the retry is
// applied again and its new record survives the sweep that read the dead
// one (the delete takes the read's token), also beside a dead record of
// another transaction; inside the window, untimed or timed FutureSkew
// ahead, with the sweep's clock 58 minutes ahead of the writers', the
// retry is recognised, and a control shows that it is the record that
// recognises it. Each placement uses an account of its own, under
// prefix. sweep, when not nil, wraps the store the sweep calls (a test
// gives a broken one to show that the checks fail). It returns the
// placements whose check failed.
func ExpireInterleavings(t *testing.T, st SweepStore, prefix string, sweep func(SweepStore) SweepStore) []string {
	t.Helper()
	if sweep == nil {
		sweep = func(s SweepStore) SweepStore { return s }
	}
	var failed []string
	runs := 0
	account := func() string { runs++; return fmt.Sprintf("%s-%d", prefix, runs) }
	newClock := func() *expireClock {
		c := &expireClock{}
		c.ns.Store(time.Date(2031, 3, 1, 9, 0, 0, 0, time.UTC).UnixNano())
		return c
	}
	for _, tc := range expireCases {
		// The retry's store calls, counted once.
		n := 0
		{
			acct, c := account(), newClock()
			txn, _ := tc.setup(t, st, acct, c)
			retry(t, faulty.NewSiblings(st, faulty.Options{Hook: func(_ context.Context, _ faulty.Call, after bool) error {
				if !after {
					n++
				}
				return nil
			}}), acct, c, tc.timed, txn)
		}
		if n < 2 {
			t.Fatalf("%s: the retry made %d store calls", tc.name, n)
		}
		for i := 0; i <= n; i++ {
			for j := i; j <= n; j++ {
				acct, c := account(), newClock()
				txn, clock := tc.setup(t, st, acct, c)
				key := ledger.RecordKey(acct, txn)
				g := &steppedSweep{SweepStore: sweep(st), step: make(chan struct{}), done: make(chan struct{})}
				var swept SweepStore = g
				if _, ok := g.SweepStore.(store.SiblingBatchDeleter); ok {
					swept = steppedBatch{g}
				}
				finished := make(chan struct{})
				var res ledger.ExpireResult
				var err error
				go func() {
					defer close(finished)
					res, err = ledger.ExpireRecords(context.Background(), swept, []string{key}, ledger.ExpireOptions{Clock: clock})
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
				o := retry(t, faulty.NewSiblings(st, faulty.Options{Hook: func(_ context.Context, _ faulty.Call, after bool) error {
					if !after {
						at(k)
						k++
					}
					return nil
				}}), acct, c, tc.timed, txn)
				for ; k <= n; k++ {
					at(k)
				}
				step()
				step()
				<-finished
				if err != nil {
					t.Fatal(err)
				}
				if werr := tc.want(st, key, txn, callAt, o); werr != nil {
					failed = append(failed, fmt.Sprintf("%s: the sweep's read and delete before the retry's store calls %d and %d of %d (%+v): %v", tc.name, i+1, j+1, n, res, werr))
				}
			}
		}
		if tc.want(nil, "", "", time.Time{}, tpncounter.Duplicate) == nil {
			// Control: with the record deleted, the retry counts again.
			acct, c := account(), newClock()
			txn, _ := tc.setup(t, st, acct, c)
			key := ledger.RecordKey(acct, txn)
			_, tok, err := st.Fetch(ctxFor(t), key)
			if err == nil {
				err = st.Delete(ctxFor(t), key, tok)
			}
			if err != nil {
				t.Fatal(err)
			}
			if o := retry(t, st, acct, c, tc.timed, txn); tc.want(st, key, txn, c.Now(), o) == nil {
				t.Fatalf("%s: the retry is %v without its record: the record is not what recognises it", tc.name, o)
			}
		}
	}
	return failed
}

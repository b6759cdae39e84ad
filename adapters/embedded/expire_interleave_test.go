package embedded_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// sweepStore is what ledger.ExpireRecords takes.
type sweepStore interface {
	store.Siblings
	store.SiblingDeleter
}

// expireClock is a settable clock shared by the writers of one run.
type expireClock struct{ ns atomic.Int64 }

func newExpireClock() *expireClock {
	c := &expireClock{}
	c.ns.Store(time.Date(2031, 3, 1, 9, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *expireClock) Now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *expireClock) Add(d time.Duration) { c.ns.Add(int64(d)) }

// expireLedgerOpts keep one transaction of each writer in the counter and
// one folded, so that three more credits leave only a transaction's record
// to recognise its retry.
func expireLedgerOpts(actor crdt.ActorID, c *expireClock) ledger.Options {
	return ledger.Options{Actor: actor, Clock: c.Now, Counter: tpncounter.Options{HistoryLength: 1, FoldedLength: 1}}
}

// steppedSweep makes each of ExpireRecords' store calls wait for a step.
type steppedSweep struct {
	sweepStore
	step chan struct{}
	done chan struct{}
}

func (g *steppedSweep) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	<-g.step
	defer func() { g.done <- struct{}{} }()
	return g.sweepStore.Fetch(ctx, key)
}

func (g *steppedSweep) Delete(ctx context.Context, key string, tok store.Token) error {
	<-g.step
	defer func() { g.done <- struct{}{} }()
	return g.sweepStore.Delete(ctx, key, tok)
}

// freshTokenDelete is a broken store: its Delete ignores the token it is
// given and deletes whatever a new Fetch finds, a record written since the
// sweep's read included.
type freshTokenDelete struct{ sweepStore }

func (s freshTokenDelete) Delete(ctx context.Context, key string, _ store.Token) error {
	_, tok, err := s.sweepStore.Fetch(ctx, key)
	if err != nil {
		return err
	}
	return s.sweepStore.Delete(ctx, key, tok)
}

// embeddedExpireCase: setup credits on account acct of st and returns the
// record key the sweep reads and the sweep's clock; retry is the racing
// ledger call's transaction; want checks its outcome and the record key
// after both.
type embeddedExpireCase struct {
	name  string
	setup func(t *testing.T, st store.Siblings, acct string, c *expireClock) (key string, txn crdt.TxnID, clock func() time.Time)
	want  func(st store.Siblings, key string, txn crdt.TxnID, call time.Time, o tpncounter.Outcome) error
}

// creditThenOthers credits txn (100) on a new ledger of "svc", then three
// other transactions.
func creditThenOthers(t *testing.T, st store.Siblings, acct string, c *expireClock, txn crdt.TxnID) {
	t.Helper()
	ctx := context.Background()
	l, err := ledger.New(st, acct, expireLedgerOpts("svc", c))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := l.Credit(ctx, txn, 100); err != nil || r.Outcome != tpncounter.Applied {
		t.Fatalf("%s: %+v %v", txn, r, err)
	}
	for i := range 3 {
		if _, err := l.Credit(ctx, crdt.TxnID(fmt.Sprint("other-", i)), 1); err != nil {
			t.Fatal(err)
		}
	}
}

// retryOn retries txn (100) on a new ledger of "svc-b" of acct.
func retryOn(t *testing.T, st store.Siblings, acct string, c *expireClock, txn crdt.TxnID) tpncounter.Outcome {
	t.Helper()
	l, err := ledger.New(st, acct, expireLedgerOpts("svc-b", c))
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Credit(context.Background(), txn, 100)
	if err != nil {
		t.Fatal(err)
	}
	return r.Outcome
}

// recordMadeSince: key holds a record of txn made at or after since.
func recordMadeSince(st store.Siblings, key string, txn crdt.TxnID, since time.Time) error {
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

func isDup(o tpncounter.Outcome) bool {
	return o == tpncounter.Duplicate || o == tpncounter.DuplicateFolded
}

var embeddedExpireCases = []embeddedExpireCase{{
	// The retry is applied again and its new record, written between the
	// sweep's read of the dead one and its delete, survives.
	name: "past the window",
	setup: func(t *testing.T, st store.Siblings, acct string, c *expireClock) (string, crdt.TxnID, func() time.Time) {
		creditThenOthers(t, st, acct, c, "pay-0")
		c.Add(ledger.DefaultExpireAfter + time.Second)
		return ledger.RecordKey(acct, "pay-0"), "pay-0", c.Now
	},
	want: func(st store.Siblings, key string, txn crdt.TxnID, call time.Time, o tpncounter.Outcome) error {
		if o != tpncounter.Applied {
			return fmt.Errorf("outcome %v, want applied", o)
		}
		return recordMadeSince(st, key, txn, call)
	},
}, {
	// The sweep's clock is 58 minutes ahead of the writers' at the
	// window's last nanosecond: the record stays and answers the retry.
	name: "inside the window",
	setup: func(t *testing.T, st store.Siblings, acct string, c *expireClock) (string, crdt.TxnID, func() time.Time) {
		creditThenOthers(t, st, acct, c, "pay-0")
		c.Add(ledger.DefaultRetryWindow - time.Nanosecond)
		return ledger.RecordKey(acct, "pay-0"), "pay-0", func() time.Time { return c.Now().Add(58 * time.Minute) }
	},
	want: func(st store.Siblings, key string, txn crdt.TxnID, call time.Time, o tpncounter.Outcome) error {
		if !isDup(o) {
			return fmt.Errorf("outcome %v, want a duplicate", o)
		}
		return nil
	},
}}

// sweepEveryInterleaving runs, for each pair of points of the retry's
// store calls on db (before its first, between two, after its last),
// ExpireRecords over the case's record key with its read at the first
// point and its delete at the second, through wrap(db's store). Each run
// uses an account of its own, named for the test. It returns the runs whose want failed.
func sweepEveryInterleaving(t *testing.T, db *embedded.DB, tc embeddedExpireCase, wrap func(sweepStore) sweepStore) []string {
	t.Helper()
	st := db.Siblings()
	runs := 0
	account := func() string { runs++; return fmt.Sprintf("%s-%d", t.Name(), runs) }
	n := 0 // the retry's store calls
	{
		c := newExpireClock()
		acct := account()
		_, txn, _ := tc.setup(t, st, acct, c)
		retryOn(t, faulty.NewSiblings(st, faulty.Options{Hook: func(_ context.Context, _ faulty.Call, after bool) error {
			if !after {
				n++
			}
			return nil
		}}), acct, c, txn)
	}
	if n < 2 {
		t.Fatalf("the retry made %d store calls", n)
	}
	var failed []string
	for i := 0; i <= n; i++ {
		for j := i; j <= n; j++ {
			c := newExpireClock()
			acct := account()
			key, txn, clock := tc.setup(t, st, acct, c)
			g := &steppedSweep{sweepStore: wrap(st), step: make(chan struct{}), done: make(chan struct{})}
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
			o := retryOn(t, faulty.NewSiblings(st, faulty.Options{Hook: func(_ context.Context, _ faulty.Call, after bool) error {
				if !after {
					at(k)
					k++
				}
				return nil
			}}), acct, c, txn)
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
				failed = append(failed, fmt.Sprintf("sweep's read and delete before the retry's store calls %d and %d of %d (%+v): %v", i+1, j+1, n, res, werr))
			}
		}
	}
	return failed
}

// TestExpireRecordsEveryInterleavingOnTheEmbeddedStore runs ExpireRecords
// (with the defaults) on the embedded store at every pair of points of a
// ledger retry's store calls on the same store. Past the window the retry
// is applied again and its new record survives the sweep that read the
// dead one, because the delete takes the read's token; inside the window
// (the sweep's clock 58 minutes ahead) the record answers the retry.
//
// The checks can fail: with a Delete that takes a fresh token instead of
// the read's, some interleaving past the window deletes the new record;
// with the record deleted, the retry inside the window is applied again.
func TestExpireRecordsEveryInterleavingOnTheEmbeddedStore(t *testing.T) {
	db, _ := openTemp(t, embedded.Options{})
	asIs := func(s sweepStore) sweepStore { return s }
	for _, tc := range embeddedExpireCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range sweepEveryInterleaving(t, db, tc, asIs) {
				t.Error(f)
			}
		})
	}
	t.Run("a delete with a fresh token", func(t *testing.T) {
		broken := func(s sweepStore) sweepStore { return freshTokenDelete{s} }
		if f := sweepEveryInterleaving(t, db, embeddedExpireCases[0], broken); len(f) == 0 {
			t.Fatal("every interleaving passed with a Delete that ignores its token")
		} else {
			t.Logf("%d interleavings caught, the first: %s", len(f), f[0])
		}
	})
	t.Run("inside the window, the record deleted", func(t *testing.T) {
		ctx := context.Background()
		st := db.Siblings()
		c := newExpireClock()
		key, txn, _ := embeddedExpireCases[1].setup(t, st, "control", c)
		_, tok, err := st.Fetch(ctx, key)
		if err == nil {
			err = st.Delete(ctx, key, tok)
		}
		if err != nil {
			t.Fatal(err)
		}
		o := retryOn(t, st, "control", c, txn)
		if embeddedExpireCases[1].want(st, key, txn, c.Now(), o) == nil {
			t.Fatalf("the retry is %v without its record: the record is not what recognises it", o)
		}
	})
}

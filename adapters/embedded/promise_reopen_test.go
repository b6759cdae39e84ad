package embedded_test

// Retries after a process restart on the embedded store (the file closed
// and opened again), with the defaults but for a clock the test moves:
// README's first lines, on each driver that keeps a retry window.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
	"github.com/counterkit/counterkit/tpncounter"
)

// reopenClock is a clock the test moves, safe for concurrent use.
type reopenClock struct{ ns atomic.Int64 }

func (c *reopenClock) Now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *reopenClock) Add(d time.Duration) { c.ns.Add(int64(d)) }
func (c *reopenClock) Set(t time.Time)     { c.ns.Store(t.UnixNano()) }

// reopenAccount is account "acct" as one kind of ledger writes it.
type reopenAccount struct {
	update func(ctx context.Context, txn crdt.TxnID, a int64) (tpncounter.Outcome, error)
	value  func(ctx context.Context) (int64, error)
}

// openReopenAccount opens "acct" of st as kind ("ledger", "sharded" with
// n = 8, or "book") for actor, with the defaults, clock c and TxnTime
// reading version 1 UUID ids.
func openReopenAccount(t *testing.T, kind string, st store.Siblings, actor crdt.ActorID, c *reopenClock) reopenAccount {
	o := ledger.Options{Actor: actor, Clock: c.Now}
	o.Counter.TxnTime = tpncounter.TimeUUID
	switch kind {
	case "ledger":
		l, err := ledger.New(st, "acct", o)
		if err != nil {
			t.Fatal(err)
		}
		return reopenAccount{func(ctx context.Context, txn crdt.TxnID, a int64) (tpncounter.Outcome, error) {
			r, err := l.Update(ctx, txn, a)
			return r.Outcome, err
		}, l.Value}
	case "sharded":
		s, err := ledger.NewSharded(st, "acct", 8, o)
		if err != nil {
			t.Fatal(err)
		}
		return reopenAccount{func(ctx context.Context, txn crdt.TxnID, a int64) (tpncounter.Outcome, error) {
			r, err := s.Update(ctx, txn, a)
			return r.Outcome, err
		}, s.Value}
	case "book":
		b, err := ledger.NewBook(st, ledger.BookOptions{Options: o})
		if err != nil {
			t.Fatal(err)
		}
		return reopenAccount{func(ctx context.Context, txn crdt.TxnID, a int64) (tpncounter.Outcome, error) {
			r, err := b.Update(ctx, "acct", txn, a)
			return r.Outcome, err
		}, func(ctx context.Context) (int64, error) { return b.Value(ctx, "acct") }}
	}
	panic(kind)
}

// TestLedgerRetriesAfterReopen: a credit and a debit (timed ids) land on
// instance a; 200 other credits from a and b follow over 23 hours; the
// file is closed and opened again; at RetryWindow − 1 ns after the landing
// the retries on a restarted a, on b and on a new actor are duplicates and
// the value counts both once; past the window the debit's retry is
// refused with crdt.ErrOutsideWindow, or answered a duplicate while a
// counter still holds it (package ledger, "The guarantee").
func TestLedgerRetriesAfterReopen(t *testing.T) {
	for _, kind := range []string{"ledger", "sharded", "book"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			db, err := embedded.Open(dir, embedded.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c := &reopenClock{}
			c.Set(time.Date(2031, 3, 1, 9, 0, 0, 0, time.UTC))
			var n atomic.Uint64
			id := func() crdt.TxnID { return crdt.TxnID(timeid.FromParts(c.Now(), 1, n.Add(1)).String()) }
			a := openReopenAccount(t, kind, db.Siblings(), "a", c)
			x, y := id(), id()
			if o, err := a.update(ctx, x, 1000); err != nil || o != tpncounter.Applied {
				t.Fatal(o, err)
			}
			if o, err := a.update(ctx, y, -300); err != nil || o != tpncounter.Applied {
				t.Fatal(o, err)
			}
			landed := c.Now()
			want := int64(700)
			b := openReopenAccount(t, kind, db.Siblings(), "b", c)
			const others = 200
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < others; i += 8 {
						l := a
						if i%2 == 1 {
							l = b
						}
						if _, err := l.update(ctx, id(), 1); err != nil {
							t.Error(err)
							return
						}
						c.Add((ledger.DefaultRetryWindow - time.Hour) / others)
					}
				}()
			}
			wg.Wait()
			want += others
			// A process restart: the file closed and opened again.
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db, err = embedded.Open(dir, embedded.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			c.Set(landed.Add(ledger.DefaultRetryWindow - time.Nanosecond))
			for _, actor := range []crdt.ActorID{"a", "b", "z"} {
				l := openReopenAccount(t, kind, db.Siblings(), actor, c)
				for _, tc := range []struct {
					txn crdt.TxnID
					a   int64
				}{{x, 1000}, {y, -300}} {
					o, err := l.update(ctx, tc.txn, tc.a)
					if err != nil || (o != tpncounter.Duplicate && o != tpncounter.DuplicateFolded) {
						t.Fatalf("retry on %s: %v %v", actor, o, err)
					}
				}
				if v, err := l.value(ctx); err != nil || v != want {
					t.Fatalf("value %d %v want %d", v, err, want)
				}
			}
			c.Set(landed.Add(ledger.DefaultRetryWindow + time.Second))
			for _, actor := range []crdt.ActorID{"a", "y"} {
				l := openReopenAccount(t, kind, db.Siblings(), actor, c)
				o, err := l.update(ctx, y, -300)
				if !errors.Is(err, crdt.ErrOutsideWindow) && (err != nil || o != tpncounter.Duplicate && o != tpncounter.DuplicateFolded) {
					t.Fatalf("a timed debit retried past the window on %s: %v %v; want ErrOutsideWindow (or a duplicate while a counter holds it)", actor, o, err)
				}
			}
		})
	}
}

// TestAccountAndTransactionsRetriesAfterReopen: a credit and a debit on a
// bounded Account and on a balance.Transactions account (merged), 100
// other credits of each over 23 hours (Transactions merged every tenth),
// the file closed and opened again; RetryWindow − 1 s after the first
// merge, the retries on restarted and new Accounts and on a new
// Transactions are duplicates, and both values count each once.
func TestAccountAndTransactionsRetriesAfterReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := &reopenClock{}
	c.Set(time.Date(2031, 3, 1, 9, 0, 0, 0, time.UTC))
	bopen := func(db *embedded.DB, actor crdt.ActorID) *bounded.Account {
		a, err := bounded.Open(db.Siblings(), "acct", bounded.AccountOptions{Actor: actor, Clock: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	topen := func(db *embedded.DB) *balance.Transactions {
		tx, err := balance.NewTransactions(db.Partitions(), balance.TxnOptions{Options: balance.Options{Clock: c.Now}})
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	a := bopen(db, "a")
	tx := topen(db)
	if _, err := a.Credit(ctx, "x", 1000); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Debit(ctx, "y", 300); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Apply(ctx, "hot", "x", 1000); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Apply(ctx, "hot", "y", -300); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Second)
	if _, err := tx.Merge(ctx, "hot"); err != nil {
		t.Fatal(err)
	}
	landed := c.Now()
	for i := range 100 {
		if _, err := a.Credit(ctx, crdt.TxnID(fmt.Sprint("o-", i)), 1); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Apply(ctx, "hot", crdt.TxnID(fmt.Sprint("o-", i)), 1); err != nil {
			t.Fatal(err)
		}
		c.Add((bounded.DefaultRetryWindow - time.Hour) / 100)
		if i%10 == 0 {
			if _, err := tx.Merge(ctx, "hot"); err != nil {
				t.Fatal(err)
			}
		}
	}
	db.Close()
	db, err = embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c.Set(landed.Add(bounded.DefaultRetryWindow - time.Second))
	for _, actor := range []crdt.ActorID{"a", "b"} {
		acc := bopen(db, actor)
		for _, tc := range []struct {
			txn string
			a   int64
		}{{"x", 1000}, {"y", -300}} {
			var r bounded.Result
			var err error
			if tc.a > 0 {
				r, err = acc.Credit(ctx, crdt.TxnID(tc.txn), tc.a)
			} else {
				r, err = acc.Debit(ctx, crdt.TxnID(tc.txn), -tc.a)
			}
			if err != nil || r.Outcome != bounded.Duplicate || r.Value != 800 {
				t.Fatalf("bounded retry on %s: %+v %v", actor, r, err)
			}
		}
	}
	tx2 := topen(db)
	if _, err := tx2.Merge(ctx, "hot"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		txn string
		a   int64
	}{{"x", 1000}, {"y", -300}} {
		o, err := tx2.Apply(ctx, "hot", crdt.TxnID(tc.txn), tc.a)
		if err != nil || o != balance.Duplicate {
			t.Fatalf("txn retry: %v %v", o, err)
		}
	}
	if b, err := tx2.Balance(ctx, "hot"); err != nil || b != 800 {
		t.Fatalf("balance %d %v", b, err)
	}
}

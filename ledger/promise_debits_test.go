package ledger_test

// Debits retried as credits are (README, first lines; package doc, "The
// guarantee"), on each kind of ledger a user opens with the defaults:
// New, NewSharded and a Book's account, timed and untimed.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/timeid"
	"github.com/counterkit/counterkit/tpncounter"
)

// promiseAccount is one account as a kind of ledger writes it.
type promiseAccount struct {
	update func(ctx context.Context, txn crdt.TxnID, amount int64) (ledger.Result, error)
	value  func(ctx context.Context) (int64, error)
}

// openPromiseAccount opens account "acct" of st as kind ("ledger",
// "sharded" with n = 8, or "book") for actor, with the defaults, the clock
// c and, when timed, TxnTime reading version 1 UUID ids.
func openPromiseAccount(t *testing.T, kind string, st *memory.Siblings, actor crdt.ActorID, c *promiseClock, timed bool) promiseAccount {
	t.Helper()
	o := promiseOpts(actor, c)
	if timed {
		o.Counter.TxnTime = tpncounter.TimeUUID
	}
	switch kind {
	case "ledger":
		l, err := ledger.New(st, "acct", o)
		if err != nil {
			t.Fatal(err)
		}
		return promiseAccount{l.Update, l.Value}
	case "sharded":
		s, err := ledger.NewSharded(st, "acct", 8, o)
		if err != nil {
			t.Fatal(err)
		}
		return promiseAccount{s.Update, s.Value}
	case "book":
		b, err := ledger.NewBook(st, ledger.BookOptions{Options: o})
		if err != nil {
			t.Fatal(err)
		}
		return promiseAccount{
			func(ctx context.Context, txn crdt.TxnID, amount int64) (ledger.Result, error) {
				r, err := b.Update(ctx, "acct", txn, amount)
				return r.Result, err
			},
			func(ctx context.Context) (int64, error) { return b.Value(ctx, "acct") },
		}
	}
	t.Fatalf("kind %q", kind)
	return promiseAccount{}
}

// TestPromiseDebitRetriesOnEveryKind: a credit and a debit land on
// instance a at t0; 3,000 other credits and debits (1,000 with -short)
// from a and b follow over the window; at t0 + RetryWindow − 1 ns the retries of both, on a,
// on b, on a restart of a and on a new actor, are duplicates and the value
// counts each once; the debit's id sent as a credit is refused
// (crdt.ErrConflictingTransaction). Past the window a timed debit's retry
// is refused with crdt.ErrOutsideWindow (or, while a counter still holds
// it, a duplicate), on every instance.
func TestPromiseDebitRetriesOnEveryKind(t *testing.T) {
	for _, kind := range []string{"ledger", "sharded", "book"} {
		for _, timed := range []bool{false, true} {
			t.Run(fmt.Sprint(kind, "/timed=", timed), func(t *testing.T) {
				ctx := context.Background()
				c := newPromiseClock()
				st := memory.NewSiblings()
				n := uint64(0)
				id := func(name string) crdt.TxnID {
					if timed {
						n++
						return crdt.TxnID(timeid.FromParts(c.Now(), 1, n).String())
					}
					return crdt.TxnID(name)
				}
				open := func(actor crdt.ActorID) promiseAccount {
					return openPromiseAccount(t, kind, st, actor, c, timed)
				}
				a, b := open("a"), open("b")
				credit, debit := id("credit"), id("debit")
				if r, err := a.update(ctx, credit, 1000); err != nil || r.Outcome != tpncounter.Applied {
					t.Fatalf("credit: %+v %v", r, err)
				}
				if r, err := a.update(ctx, debit, -300); err != nil || r.Outcome != tpncounter.Applied {
					t.Fatalf("debit: %+v %v", r, err)
				}
				landed := c.Now()
				others := 3000
				if testing.Short() {
					others = 1000
				}
				step := (ledger.DefaultRetryWindow - time.Minute) / time.Duration(others)
				want := int64(700)
				for i := range others {
					w, amount := a, int64(1)
					if i%2 == 1 {
						w = b
					}
					if i%3 == 0 {
						amount = -1
					}
					if _, err := w.update(ctx, id(fmt.Sprint("o-", i)), amount); err != nil {
						t.Fatalf("o-%d: %v", i, err)
					}
					want += amount
					c.Add(step)
				}
				c.ns.Store(landed.Add(ledger.DefaultRetryWindow - time.Nanosecond).UnixNano())
				for i, x := range []promiseAccount{a, b, open("a"), open("z")} {
					for _, call := range []struct {
						txn    crdt.TxnID
						amount int64
					}{{debit, -300}, {credit, 1000}} {
						r, err := x.update(ctx, call.txn, call.amount)
						if err != nil || !isDuplicate(r.Outcome) {
							t.Fatalf("instance %d: retry of %d at the window's last moment: %+v %v; want a duplicate", i, call.amount, r, err)
						}
					}
					if _, err := x.update(ctx, debit, 300); !errors.Is(err, crdt.ErrConflictingTransaction) {
						t.Fatalf("instance %d: the debit's id as a credit: %v; want ErrConflictingTransaction", i, err)
					}
					if v, err := x.value(ctx); err != nil || v != want {
						t.Fatalf("instance %d: value %d %v, want %d", i, v, err, want)
					}
				}
				if !timed {
					return
				}
				c.ns.Store(landed.Add(ledger.DefaultRetryWindow + time.Second).UnixNano())
				for i, x := range []promiseAccount{a, b, open("y")} {
					r, err := x.update(ctx, debit, -300)
					if !errors.Is(err, crdt.ErrOutsideWindow) && (err != nil || !isDuplicate(r.Outcome)) {
						t.Fatalf("instance %d: a timed debit retried past the window: %+v %v; want ErrOutsideWindow", i, r, err)
					}
				}
				if v, err := a.value(ctx); err != nil || v != want {
					t.Fatalf("value %d %v, want %d", v, err, want)
				}
			})
		}
	}
}

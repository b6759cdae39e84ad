package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// ExpireOptions set how long a sweep keeps records (After, at least the
// longest RetryWindow plus clock skew), the clock it compares with, and
// how many keys it lists at a time (Page): here a sweep two hours after
// three credits, with records kept for one hour past a one-hour window,
// lists the three record keys two at a time and deletes two, keeping the
// newest credit's, which dates the writer (Dating) while its entry is live.
func ExampleExpireOptions() {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st := memory.NewSiblings()
	l, _ := ledger.New(st, "acct", ledger.Options{Actor: "svc", Clock: clock, RetryWindow: time.Hour})
	for _, txn := range []crdt.TxnID{"pay-1", "pay-2", "pay-3"} {
		_, _ = l.Credit(ctx, txn, 10)
	}

	opts := ledger.ExpireOptions{After: 2 * time.Hour, Clock: clock, Page: 2}
	res, err := ledger.ExpireAllRecords(ctx, st, opts)
	fmt.Printf("at once: %+v %v\n", res, err)
	now = now.Add(2*time.Hour + time.Second)
	res, err = ledger.ExpireAllRecords(ctx, st, opts)
	fmt.Printf("two hours later: %+v %v\n", res, err)
	// Output:
	// at once: {Deleted:0 Kept:3 Dating:0 Empty:0 Damaged:0} <nil>
	// two hours later: {Deleted:2 Kept:0 Dating:1 Empty:0 Damaged:0} <nil>
}

// An ExpireResult counts each key a sweep was given once: deleted (every
// record under it expired), kept (one may still answer a retry), dating
// (expired, but the newest credit or debit of a live writer: none here,
// as "old" is not svc's newest), empty, or damaged (kept, and its error
// joined into the sweep's).
func ExampleExpireResult() {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st := memory.NewSiblings()
	l, _ := ledger.New(st, "acct", ledger.Options{Actor: "svc", Clock: clock})
	_, _ = l.Credit(ctx, "old", 10)
	now = now.Add(ledger.DefaultExpireAfter + time.Second)
	_, _ = l.Credit(ctx, "new", 10)
	_ = st.Put(ctx, ledger.RecordKey("acct", "bad"), "x", []byte("not a record"), nil)

	keys := []string{
		ledger.RecordKey("acct", "old"), ledger.RecordKey("acct", "new"),
		ledger.RecordKey("acct", "never"), ledger.RecordKey("acct", "bad"),
	}
	res, err := ledger.ExpireRecords(ctx, st, keys, ledger.ExpireOptions{Clock: clock})
	fmt.Printf("%+v\n", res)
	fmt.Println(errors.Is(err, crdt.ErrCorruptEncoding))
	// Output:
	// {Deleted:1 Kept:1 Dating:0 Empty:1 Damaged:1}
	// true
}

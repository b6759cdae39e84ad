package ledger_test

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// TestExpireAllRecordsBesideConcurrentWriters: writer "old" credits 6
// transactions on each of 3 accounts and goes idle. 26 hours later two
// Books of one open ledger each (every call on another account evicts
// the one before) deliver the same 12 new transactions per account, each
// at once on both, their clock moving a second per call, and land what
// they hold (LandPending, as a service that stops does), while sweeps
// (pages of 1 to 3, the sweep's clock 58 minutes ahead) run on. The
// Books retire "old", whose records the sweeps delete meanwhile (those
// that date "old" once it is retired, by the last sweep at the latest).
// Each transaction counts once, every account's key stays, and once every
// delivery is done a sweep deletes nothing: it keeps the 36 new records,
// and those that a retirement of "old" made again for its transactions
// whose records a sweep had deleted before the retirement read them.
func TestExpireAllRecordsBesideConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	const accounts, old, fresh = 3, 6, 12
	st := memory.NewSiblings()
	c := newPromiseClock()
	opts := func(actor crdt.ActorID) ledger.Options {
		o := forgetful(actor, c)
		o.RetireAfter = time.Hour
		return o
	}
	acct := func(i int) string { return fmt.Sprint("acct-", i) }
	for a := range accounts {
		l, err := ledger.New(st, acct(a), opts("old"))
		if err != nil {
			t.Fatal(err)
		}
		for i := range old {
			if _, err := l.Credit(ctx, crdt.TxnID(fmt.Sprint("old-", i)), 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.Add(26 * time.Hour)

	books := make([]*ledger.Book, 2)
	for i := range books {
		b, err := ledger.NewBook(st, ledger.BookOptions{Options: opts(crdt.ActorID(fmt.Sprint("book-", i))), MaxOpen: 1})
		if err != nil {
			t.Fatal(err)
		}
		books[i] = b
	}
	done := make(chan struct{})
	var sweeps sync.WaitGroup
	var swept ledger.ExpireResult
	sweeps.Add(1)
	go func() {
		defer sweeps.Done()
		for n, last := 0, false; !last; n++ {
			// The sweep that starts once every delivery is done is the
			// last: it reads the states after the Books retired "old",
			// so it deletes the records that dated "old" before.
			select {
			case <-done:
				last = true
			default:
			}
			res, err := ledger.ExpireAllRecords(ctx, st, ledger.ExpireOptions{Page: 1 + n%3, Clock: func() time.Time { return c.Now().Add(58 * time.Minute) }})
			if err != nil {
				t.Error(err)
				return
			}
			swept.Deleted += res.Deleted
		}
	}()
	var writers sync.WaitGroup
	for _, b := range books {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := range fresh {
				for a := range accounts {
					c.Add(time.Second)
					if _, err := b.Credit(ctx, acct(a), crdt.TxnID(fmt.Sprint("new-", i)), 1); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	writers.Wait()
	// As a service that stops: a Book may hold a take-out of a copy that
	// met the other's, which its next write on the key would carry.
	for _, b := range books {
		if err := b.LandPending(ctx); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	sweeps.Wait()
	if swept.Deleted != accounts*old {
		t.Fatalf("the sweeps deleted %d records, want the %d old ones", swept.Deleted, accounts*old)
	}
	res, err := ledger.ExpireAllRecords(ctx, st, ledger.ExpireOptions{Clock: func() time.Time { return c.Now().Add(58 * time.Minute) }})
	if err != nil || res.Deleted != 0 || res.Empty != 0 || res.Damaged != 0 || res.Kept < accounts*fresh || res.Kept > accounts*(fresh+old) {
		t.Fatalf("a sweep after the deliveries: %+v %v", res, err)
	}
	for a := range accounts {
		l, err := ledger.New(st, acct(a), opts("check"))
		if err != nil {
			t.Fatal(err)
		}
		if v, err := l.Value(ctx); err != nil || v != old+fresh {
			t.Fatalf("%s: value %d %v, want %d", acct(a), v, err, old+fresh)
		}
		// A retry of each new transaction, by a writer that saw none of
		// them, is a duplicate.
		for i := range fresh {
			if r, err := l.Credit(ctx, crdt.TxnID(fmt.Sprint("new-", i)), 1); err != nil || !isDuplicate(r.Outcome) {
				t.Fatalf("%s: retry of new-%d: %+v %v", acct(a), i, r, err)
			}
		}
		f, err := l.Find(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, live := maps.Collect(f.LiveActors())["old"]; live {
			t.Errorf("%s: the idle writer was not retired", acct(a))
		}
		if v := f.Value(); v != old+fresh {
			t.Fatalf("%s: value %d after the retries", acct(a), v)
		}
	}
}

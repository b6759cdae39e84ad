package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// expireFixture: pay-0 credited at t0 on a ledger with the defaults, then
// 100 other credits, so that the counter no longer holds pay-0 and only
// its record answers a retry.
func expireFixture(t *testing.T) (*memory.Siblings, *promiseClock, []string, time.Time) {
	t.Helper()
	ctx := context.Background()
	c := newPromiseClock()
	st := memory.NewSiblings()
	l, err := ledger.New(st, "acct", promiseOpts("svc", c))
	if err != nil {
		t.Fatal(err)
	}
	t0 := c.Now()
	if _, err := l.Credit(ctx, "pay-0", 100); err != nil {
		t.Fatal(err)
	}
	keys := []string{ledger.RecordKey("acct", "pay-0")}
	for i := range 100 {
		txn := crdt.TxnID(fmt.Sprint("o-", i))
		if _, err := l.Credit(ctx, txn, 1); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, ledger.RecordKey("acct", txn))
	}
	if s, _ := l.Value(ctx); s != 200 {
		t.Fatalf("value %d", s)
	}
	return st, c, keys, t0
}

// retryPay0 retries pay-0 on a new ledger of another actor and returns its
// outcome and the value.
func retryPay0(t *testing.T, st store.Siblings, c *promiseClock) (tpncounter.Outcome, int64) {
	t.Helper()
	l, err := ledger.New(st, "acct", promiseOpts("svc-b", c))
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Credit(context.Background(), "pay-0", 100)
	if err != nil {
		t.Fatal(err)
	}
	return r.Outcome, r.Value
}

// TestExpireRecordsKeepsTheWindow: ExpireRecords with the defaults, run at
// any moment inside the retry window (up to its last nanosecond), deletes
// no record a retry needs: pay-0's retry is a duplicate. At
// DefaultExpireAfter past the record it deletes it, and the retry, past
// the window, is applied again, as an untimed retry past it is anyway.
func TestExpireRecordsKeepsTheWindow(t *testing.T) {
	ctx := context.Background()
	for _, at := range []time.Duration{time.Second, time.Hour, ledger.DefaultRetryWindow - time.Nanosecond} {
		t.Run(at.String(), func(t *testing.T) {
			st, c, keys, t0 := expireFixture(t)
			c.ns.Store(t0.Add(at).UnixNano())
			res, err := ledger.ExpireRecords(ctx, st, keys, ledger.ExpireOptions{Clock: c.Now})
			if err != nil || res.Deleted != 0 || res.Kept != len(keys) {
				t.Fatalf("expire at t0+%v: %+v %v, want every record kept", at, res, err)
			}
			if o, v := retryPay0(t, st, c); !isDuplicate(o) || v != 200 {
				t.Fatalf("retry at t0+%v after expiring: %v, value %d; want a duplicate, 200", at, o, v)
			}
		})
	}
	t.Run("edge", func(t *testing.T) {
		st, c, keys, t0 := expireFixture(t)
		// pay-0's record was made at t0: kept at exactly After, deleted a
		// nanosecond later.
		c.ns.Store(t0.Add(ledger.DefaultExpireAfter).UnixNano())
		if res, err := ledger.ExpireRecords(ctx, st, keys[:1], ledger.ExpireOptions{Clock: c.Now}); err != nil || res.Kept != 1 {
			t.Fatalf("at After: %+v %v, want kept", res, err)
		}
		c.Add(time.Nanosecond)
		if res, err := ledger.ExpireRecords(ctx, st, keys[:1], ledger.ExpireOptions{Clock: c.Now}); err != nil || res.Deleted != 1 {
			t.Fatalf("after After: %+v %v, want deleted", res, err)
		}
		if n := st.Count(keys[0]); n != 0 {
			t.Fatalf("%d siblings left", n)
		}
		if o, v := retryPay0(t, st, c); o != tpncounter.Applied || v != 300 {
			t.Fatalf("retry past the window: %v %d, want applied again (untimed)", o, v)
		}
	})
}

// TestExpireRecordsBelowTheWindowCountsTwice: the check above can fail.
// With After shorter than the RetryWindow (which ExpireOptions.After
// forbids in words), the retry inside the window counts again.
func TestExpireRecordsBelowTheWindowCountsTwice(t *testing.T) {
	st, c, keys, t0 := expireFixture(t)
	c.ns.Store(t0.Add(2 * time.Hour).UnixNano())
	res, err := ledger.ExpireRecords(context.Background(), st, keys, ledger.ExpireOptions{After: time.Hour, Clock: c.Now})
	if err != nil || res.Deleted != len(keys)-1 || res.Dating != 1 { // o-99 dates svc
		t.Fatalf("%+v %v", res, err)
	}
	if o, v := retryPay0(t, st, c); o != tpncounter.Applied || v != 300 {
		t.Fatalf("retry after records deleted inside the window: %v %d; want it counted again", o, v)
	}
}

// racingStore writes a new record under a key right after ExpireRecords
// reads it, as a ledger's record Put landing between the read and the
// delete would.
type racingStore struct {
	*memory.Siblings
	key string
	rec []byte
}

func (s *racingStore) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	sibs, tok, err := s.Siblings.Fetch(ctx, key)
	if key == s.key {
		if err := s.Siblings.Put(ctx, key, "w", s.rec, nil); err != nil {
			return nil, nil, err
		}
	}
	return sibs, tok, err
}

// TestExpireRecordsSparesARecordWrittenMeanwhile: the delete removes only
// the siblings the read returned.
func TestExpireRecordsSparesARecordWrittenMeanwhile(t *testing.T) {
	st, c, keys, t0 := expireFixture(t)
	fresh, err := (ledger.Record{Txn: "pay-0", Amount: 100, Writer: "svc-c", At: t0.Add(48 * time.Hour), Version: 1}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	c.ns.Store(t0.Add(48 * time.Hour).UnixNano())
	rs := &racingStore{Siblings: st, key: keys[0], rec: fresh}
	res, err := ledger.ExpireRecords(context.Background(), rs, keys, ledger.ExpireOptions{Clock: c.Now})
	if err != nil || res.Deleted != len(keys)-1 || res.Dating != 1 { // o-99 dates svc
		t.Fatalf("%+v %v", res, err)
	}
	sibs, _, err := st.Fetch(context.Background(), keys[0])
	if err != nil || len(sibs) != 1 || string(sibs[0]) != string(fresh) {
		t.Fatalf("after the race: %d siblings %v; want the record written meanwhile", len(sibs), err)
	}
}

// TestExpireRecordsBadInput: a key that is not a record's is refused
// before anything is read or deleted; a negative After is refused; a
// damaged sibling keeps its key, and the other keys are expired.
func TestExpireRecordsBadInput(t *testing.T) {
	ctx := context.Background()
	st, c, keys, t0 := expireFixture(t)
	c.ns.Store(t0.Add(48 * time.Hour).UnixNano())
	opts := ledger.ExpireOptions{Clock: c.Now}
	if _, err := ledger.ExpireRecords(ctx, st, append(keys[1:], "acct"), opts); !errors.Is(err, crdt.ErrInvalidKey) {
		t.Fatalf("the account's key among records: %v", err)
	}
	if _, err := ledger.ExpireRecords(ctx, st, keys, ledger.ExpireOptions{After: -1}); !errors.Is(err, crdt.ErrInvalidConfig) {
		t.Fatalf("negative After: %v", err)
	}
	for _, k := range keys {
		if st.Count(k) != 1 {
			t.Fatalf("a refused call changed %q", k)
		}
	}
	if err := st.Put(ctx, keys[0], "x", []byte("not a record"), nil); err != nil {
		t.Fatal(err)
	}
	res, err := ledger.ExpireRecords(ctx, st, append(keys, ledger.RecordKey("acct", "never")), opts)
	if !errors.Is(err, crdt.ErrCorruptEncoding) || res.Damaged != 1 || res.Deleted != len(keys)-2 || res.Dating != 1 || res.Empty != 1 {
		t.Fatalf("a damaged sibling: %+v %v", res, err)
	}
	if st.Count(keys[0]) != 2 {
		t.Fatalf("the damaged key changed: %d siblings", st.Count(keys[0]))
	}
}

// ExampleExpireRecords deletes the records of transactions past every
// retry window: on a store without a TTL they are otherwise kept for good.
// It keeps the record of the newest credit of a writer whose entry is
// live, which dates that writer for retirement once it has left.
func ExampleExpireRecords() {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st := memory.NewSiblings()
	l, _ := ledger.New(st, "acct", ledger.Options{Actor: "svc", Clock: clock})
	l.Credit(ctx, "pay-1", 100)
	l.Credit(ctx, "pay-2", 100)
	keys := []string{ledger.RecordKey("acct", "pay-1"), ledger.RecordKey("acct", "pay-2")}

	res, _ := ledger.ExpireRecords(ctx, st, keys, ledger.ExpireOptions{Clock: clock})
	fmt.Printf("at once: %d kept, %d deleted\n", res.Kept, res.Deleted)
	now = now.Add(ledger.DefaultExpireAfter + time.Second)
	res, _ = ledger.ExpireRecords(ctx, st, keys, ledger.ExpireOptions{Clock: clock})
	fmt.Printf("a day and an hour later: %d kept, %d deleted, %d dating svc\n", res.Kept, res.Deleted, res.Dating)
	// Output:
	// at once: 2 kept, 0 deleted
	// a day and an hour later: 0 kept, 1 deleted, 1 dating svc
}

package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
)

// newTTLStore is a records store whose values vanish ttl after their
// Put, by clock (ttlStore), and that says so (store.Expiring) unless
// silent: as a Cassandra DB with SiblingsTTL does.
func newTTLStore(ttl time.Duration, clock func() time.Time) *ttlStore {
	return &ttlStore{Siblings: memory.NewSiblings(), now: clock, ttl: ttl, written: map[string]time.Time{}}
}

// TestNewRefusesExpiringStores: a store whose values expire holds no
// accounts (ledger, Sharded, Book, bounded share the rule through
// store.CheckKeeps), and a records store must keep records at least
// RetryWindow plus FutureSkew; a silent TTL, or none, is accepted.
func TestNewRefusesExpiringStores(t *testing.T) {
	now := time.Now
	day := ledger.DefaultRetryWindow
	timed := ledger.Options{Actor: "a"}
	timed.Counter.TxnTime = func(crdt.TxnID) (time.Time, bool) { return time.Time{}, false }
	for _, tc := range []struct {
		name    string
		st      store.Siblings
		opts    ledger.Options
		refused bool
	}{
		{"accounts in a TTL store", newTTLStore(48*time.Hour, now), ledger.Options{Actor: "a"}, true},
		{"records a nanosecond short", memory.NewSiblings(), ledger.Options{Actor: "a", Records: newTTLStore(day-time.Nanosecond, now)}, true},
		{"records for the window exactly", memory.NewSiblings(), ledger.Options{Actor: "a", Records: newTTLStore(day, now)}, false},
		{"timed records without FutureSkew", memory.NewSiblings(), func() ledger.Options { o := timed; o.Records = newTTLStore(day, now); return o }(), true},
		{"timed records with FutureSkew", memory.NewSiblings(), func() ledger.Options {
			o := timed
			o.Records = newTTLStore(day+ledger.DefaultFutureSkew, now)
			return o
		}(), false},
		{"records for DefaultExpireAfter", memory.NewSiblings(), ledger.Options{Actor: "a", Records: newTTLStore(ledger.DefaultExpireAfter, now)}, false},
		{"a 2-day window, records for a day", memory.NewSiblings(), ledger.Options{Actor: "a", RetryWindow: 2 * day, Records: newTTLStore(ledger.DefaultExpireAfter, now)}, true},
		// RetryWindow plus a FutureSkew near the largest Duration passes
		// it: records expiring after a second are still too short.
		{"timed records with an unbounded FutureSkew", memory.NewSiblings(), func() ledger.Options {
			o := timed
			o.Counter.FutureSkew = math.MaxInt64 - time.Hour
			o.Records = newTTLStore(time.Second, now)
			return o
		}(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ledger.New(tc.st, "acct", tc.opts)
			_, serr := ledger.NewSharded(tc.st, "hot", 4, tc.opts)
			_, berr := ledger.NewBook(tc.st, ledger.BookOptions{Options: tc.opts})
			for i, err := range []error{err, serr, berr} {
				if tc.refused != errors.Is(err, crdt.ErrInvalidConfig) || !tc.refused && err != nil {
					t.Fatalf("constructor %d: %v, want refused %v", i, err, tc.refused)
				}
			}
		})
	}
}

// TestRecordsTTLKeepsTheWindow: with records in a store that expires them
// RetryWindow after their Put, a retry the counter no longer holds is a
// duplicate up to the window's last nanosecond, and counts again after.
// A store expiring them a minute sooner, without saying so, lets the
// retry in the window's last minute count twice: the check can fail.
func TestRecordsTTLKeepsTheWindow(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		ttl    time.Duration
		silent bool
		at     time.Duration
		dup    bool
	}{
		{ledger.DefaultRetryWindow, false, time.Hour, true},
		{ledger.DefaultRetryWindow, false, ledger.DefaultRetryWindow - time.Nanosecond, true},
		{ledger.DefaultRetryWindow, false, ledger.DefaultRetryWindow + time.Minute, false},
		{ledger.DefaultRetryWindow - time.Minute, true, ledger.DefaultRetryWindow - time.Nanosecond, false},
	} {
		t.Run(fmt.Sprintf("ttl=%v/silent=%v/at=%v", tc.ttl, tc.silent, tc.at), func(t *testing.T) {
			c := newPromiseClock()
			recs := newTTLStore(tc.ttl, c.Now)
			recs.silent = tc.silent
			st := memory.NewSiblings()
			opts := promiseOpts("svc", c)
			opts.Records = recs
			l, err := ledger.New(st, "acct", opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Credit(ctx, "pay-0", 100); err != nil {
				t.Fatal(err)
			}
			for i := range 100 {
				if _, err := l.Credit(ctx, crdt.TxnID(fmt.Sprint("o-", i)), 1); err != nil {
					t.Fatal(err)
				}
			}
			c.Add(tc.at)
			opts.Actor = "svc-b"
			b, err := ledger.New(st, "acct", opts)
			if err != nil {
				t.Fatal(err)
			}
			r, err := b.Credit(ctx, "pay-0", 100)
			if err != nil {
				t.Fatal(err)
			}
			if isDuplicate(r.Outcome) != tc.dup || r.Value != 200+cond(tc.dup, int64(0), 100) {
				t.Fatalf("retry of pay-0 %v after it: %v, value %d; want duplicate %v", tc.at, r.Outcome, r.Value, tc.dup)
			}
		})
	}
}

func cond[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

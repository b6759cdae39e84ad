package riak_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/ledger/ledgertest"
	"github.com/counterkit/counterkit/store/faulty"
)

// stepClock is a settable clock shared by every ledger of a test.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stepClock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// TestRetirementRecordsDoNotPileUp: the default options on Riak (a
// created bucket type, max_siblings 100).
//
//  1. Writer E ("a-e", a long-lived Ledger) credits x; its Put is held in
//     the network (ambiguous). The application retries x on writer D
//     ("b-d"), which applies and records it. E's held Put lands later and
//     E's next read learns it: both entries hold x, E's copy (smaller id)
//     counts. D is then scaled down (stops).
//  2. E keeps writing, every 30 minutes (so never idle for RetireAfter,
//     and x stays in its history for hours).
//  3. F, a Book with MaxOpen 1 that serves this account and others (so the
//     account's Ledger is reopened for each of F's writes), credits the
//     account once a minute, starting an hour after D stopped.
//
// Every reopened Ledger runs a retirement pass at its first write, dates D
// by x's record naming D (an hour old), and its retirement of D declines
// (E holds x). Each pass must find the record naming E it or an earlier
// pass made and not put it again: when every pass put it (a new sibling
// each time), Riak refused the 101st (too_many_siblings), the record was
// owed, and every later write of F to the account failed
// crdt.ErrUnavailable for good.
func TestRetirementRecordsDoNotPileUp(t *testing.T) {
	srv, cl := fakeCluster(t)
	s := newStore(t, cl, riak.Options{})
	key := uniqueKey("acct")
	clk := &stepClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	opts := func(a crdt.ActorID) ledger.Options { return ledger.Options{Actor: a, Clock: clk.now} }

	// E's store holds its account Puts of the first call in flight.
	fe := faulty.NewSiblings(s, faulty.Options{})
	fe.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.Hold, faulty.Hold, faulty.Hold, faulty.Hold), faulty.MethodPut),
		func(k string) bool { return k == key }))
	e, err := ledger.New(fe, key, opts("a-e"))
	require.NoError(t, err)
	d, err := ledger.New(s, key, opts("b-d"))
	require.NoError(t, err)

	_, err = e.Credit(ctx, "x", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "E's write is held")
	// The application retries x on D.
	r, err := d.Credit(ctx, "x", 5)
	require.NoError(t, err)
	t.Logf("retry on D: %v", r.Outcome)
	require.NoError(t, fe.DeliverAll()) // E's held Puts land late
	fe.SetPolicy(nil)
	v, err := e.Value(ctx) // E learns its write landed
	require.NoError(t, err)
	require.Equal(t, int64(5), v)

	f, err := ledger.NewBook(s, ledger.BookOptions{Options: opts("c-f"), MaxOpen: 1})
	require.NoError(t, err)

	clk.add(61 * time.Minute)
	want := int64(5)
	var firstFail error
	failedAt := -1
	for i := 0; i < 300; i++ {
		if i%30 == 0 {
			_, err := e.Credit(ctx, crdt.TxnID(fmt.Sprintf("e-%d", i)), 1)
			require.NoError(t, err, "E's write %d", i)
			want++
		}
		_, err := f.Credit(ctx, key, crdt.TxnID(fmt.Sprintf("f-%d", i)), 1)
		if err != nil {
			if firstFail == nil {
				firstFail, failedAt = err, i
			}
		} else {
			want++
		}
		// Another account, so that F's Book drops this account's Ledger.
		_, err = f.Credit(ctx, fmt.Sprintf("%s-other-%d", key, i%7), crdt.TxnID(fmt.Sprintf("o-%d", i)), 1)
		require.NoError(t, err)
		clk.add(time.Minute)
	}
	t.Logf("E wrote %d times; F's first failure at write %d: %v", 10, failedAt, firstFail)

	// Days later (the window long past, D long retired or retirable), F
	// still cannot write to the account.
	clk.add(48 * time.Hour)
	for i := 0; i < 3; i++ {
		_, err := e.Credit(ctx, crdt.TxnID(fmt.Sprintf("e-late-%d", i)), 1)
		require.NoError(t, err)
		want++
	}
	_, err = f.Credit(ctx, key, "f-late", 1)
	if err == nil {
		want++
	}
	got, verr := e.Value(ctx)
	require.NoError(t, verr)
	t.Logf("value %d (want %d); F's late write: %v", got, want, err)
	n, _ := srv.Siblings(fakeType, testBucket, ledger.RecordKey(key, "x"))
	st, ferr := e.Find(ctx)
	require.NoError(t, ferr)
	live := 0
	for range st.LiveActors() {
		live++
	}
	t.Logf("x's record key holds %d siblings; live actors in the account: %d; F's Book: %+v", n, live, f.Stats())
	f2, _ := ledger.NewBook(s, ledger.BookOptions{Options: opts("c-f"), MaxOpen: 1})
	_, err2 := f2.Credit(ctx, key, "f-after-restart", 1)
	t.Logf("F restarted (new Book): %v", err2)
	require.Nil(t, firstFail, "F's writes to the account started failing at write %d and never recovered", failedAt)
	require.NoError(t, err, "F's write to the account two days later")
	require.Equal(t, want, got)
	require.LessOrEqual(t, n, 3, "siblings of x's record key")
}

// TestRetirementRecordRaceEnumerated: every scenario of the retirement
// record race (ledgertest.RetirementRecordRace, three writers too) on the
// test double, through the adapter with its default options; conformance
// runs the two-writer scenarios on every target.
func TestRetirementRecordRaceEnumerated(t *testing.T) {
	if testing.Short() {
		t.Skip("2,585 schedules: about 15 s; run without -short")
	}
	_, cl := fakeCluster(t)
	ledgertest.RetirementRecordRace(t, newStore(t, cl, riak.Options{}), uniqueKey("race"))
}

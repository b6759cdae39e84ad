// Package ledgertest is the ledger's behaviour suite, which every
// store.Siblings runs through package conformance (memory, the embedded
// store, Riak and its test double, Cassandra and its model). The store's
// own contract is store/storetest's.
//
// Each behaviour is its own subtest with a fresh store and a fresh key. The
// suite assumes only what store.Siblings documents: in particular it never
// depends on the order of siblings, and it simulates ambiguous writes by
// wrapping the store rather than by asking the backend to fail.
package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/kitrun"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
	"github.com/counterkit/counterkit/tpncounter"
)

// Run runs every conformance subtest. newStore returns a fresh store for one
// subtest (it may register cleanup with t.Cleanup, or call t.Skip when its
// backend is not configured).
func Run(t *testing.T, newStore func(t *testing.T) store.Siblings) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s store.Siblings, key string)
	}{
		{"AbsentKey", testAbsentKey},
		{"ContextCanceled", testContextCanceled},
		{"LedgerCreditDebit", testLedgerBasics},
		{"LedgerHistoryExample", testHistoryExample},
		{"LedgerLateRetryRecognisedThenRefused", testTimedLateRetry},
		{"RetryWindowBoundaryDefaults", testRetryWindowBoundary},
		{"RestartsStayBounded", testRestartsStayBounded},
		{"ConcurrentLedgersExact", testConcurrentLedgers},
		{"AmbiguousWriteRetry", testAmbiguousRetry},
		{"RefusedWriteRetry", testRefusedRetry},
		{"RetirementRecordRace", testRetirementRecordRace},
		{"ExpireRecordsEveryInterleaving", testExpireInterleavings},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			tc.fn(t, s, freshKey(t))
		})
	}
}

// freshKey returns a key unique to this run, so a persistent backend never
// sees state left by an earlier run.
func freshKey(t *testing.T) string {
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	return fmt.Sprintf("ledgertest-%s-%d-%d", name, time.Now().UnixNano(), rand.Int63())
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func testAbsentKey(t *testing.T, s store.Siblings, key string) {
	l := newLedger(t, s, key, "reader")
	v, err := l.Value(ctxFor(t))
	require.NoError(t, err)
	require.Zero(t, v)
	ok, err := l.HasTransaction(ctxFor(t), "never")
	require.NoError(t, err)
	require.False(t, ok)
}

func testContextCanceled(t *testing.T, s store.Siblings, key string) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l := newLedger(t, s, key, "a")
	_, err := l.Credit(ctx, "t1", 1)
	require.ErrorIs(t, err, context.Canceled)
	v, err := l.Value(ctxFor(t))
	require.NoError(t, err)
	require.Zero(t, v, "a canceled credit did not land")
}

func newLedger(t *testing.T, s store.Siblings, key string, actor crdt.ActorID, opts ...func(*ledger.Options)) *ledger.Ledger {
	t.Helper()
	o := ledger.Options{Actor: actor}
	for _, f := range opts {
		f(&o)
	}
	l, err := ledger.New(s, key, o)
	require.NoError(t, err)
	return l
}

func testLedgerBasics(t *testing.T, s store.Siblings, key string) {
	ctx := ctxFor(t)
	l := newLedger(t, s, key, "a")
	r, err := l.Credit(ctx, "c1", 100)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, r.Outcome)
	require.True(t, r.Landed)
	r, err = l.Debit(ctx, "d1", 30)
	require.NoError(t, err)
	require.Equal(t, int64(70), r.Value)
	r, err = l.Credit(ctx, "c1", 100)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, r.Outcome)
	_, err = l.Credit(ctx, "c1", 99)
	require.ErrorIs(t, err, crdt.ErrConflictingTransaction)
	_, err = l.Credit(ctx, "d1", 30)
	require.ErrorIs(t, err, crdt.ErrConflictingTransaction, "a debit id reused as a credit")
	// Another actor sees the same state.
	other := newLedger(t, s, key, "b")
	v, err := other.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(70), v)
	r, err = other.Update(ctx, "d1", -30)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, r.Outcome)
	ok, err := other.HasTransaction(ctx, "c1")
	require.NoError(t, err)
	require.True(t, ok)
}

// testHistoryExample: six credits with a history length of 3; the oldest
// fold into the actor's total and Find writes the folded state back.
func testHistoryExample(t *testing.T, s store.Siblings, key string) {
	ctx := ctxFor(t)
	hl3 := func(o *ledger.Options) { o.Counter.HistoryLength = 3 }
	l := newLedger(t, s, key, "player_2", hl3)
	for i := 1; i <= 6; i++ {
		_, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("txn%d", i)), 10)
		require.NoError(t, err)
	}
	has := func(l *ledger.Ledger, txn crdt.TxnID) bool {
		ok, err := l.HasTransaction(ctx, txn)
		require.NoError(t, err)
		return ok
	}
	v, err := l.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(60), v)
	require.Equal(t, []bool{false, false, true}, []bool{has(l, "txn1"), has(l, "txn2"), has(l, "txn3")})
	// Find folds the writer's own history (a Ledger compacts only the entry
	// it writes, its incarnation of the actor).
	c, err := l.Find(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(60), c.Value())
	require.Equal(t, []bool{false, true, true, true}, []bool{has(l, "txn3"), has(l, "txn4"), has(l, "txn5"), has(l, "txn6")})
	other := newLedger(t, s, key, "player_2", hl3)
	c, err = other.Find(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(60), c.Value(), "another incarnation's Find changes no value")
}

// testTimedLateRetry: a retry after the transaction left every actor's
// history is recognised through its record, by another ledger too, for as
// long as the retry window lasts; once the window has passed, a timed
// transaction (a version 1 UUID id) is refused with crdt.ErrOutsideWindow
// rather than counted twice. The value counts it once throughout.
func testTimedLateRetry(t *testing.T, s store.Siblings, key string) {
	ctx := ctxFor(t)
	start := time.Now().Add(-time.Hour)
	var now atomic.Int64
	now.Store(start.Add(time.Minute).UnixNano())
	timed := func(o *ledger.Options) {
		o.Counter = tpncounter.Options{HistoryLength: 1, FoldedLength: 1, TxnTime: tpncounter.TimeUUID, FutureSkew: time.Minute}
		o.RetryWindow = 2 * time.Hour
		o.Clock = func() time.Time { return time.Unix(0, now.Load()) }
	}
	txn := func(i int) crdt.TxnID {
		return crdt.TxnID(timeid.New(start.Add(time.Duration(i) * time.Second)).String())
	}
	l := newLedger(t, s, key, "a", timed)
	first := txn(0)
	_, err := l.Credit(ctx, first, 100)
	require.NoError(t, err)
	for i := 1; i <= 3; i++ {
		_, err := l.Credit(ctx, txn(i), 1)
		require.NoError(t, err)
	}
	other := newLedger(t, s, key, "b", timed)
	r, err := other.Credit(ctx, first, 100)
	require.NoError(t, err, "a late retry on another ledger")
	require.Equal(t, tpncounter.Duplicate, r.Outcome)
	r, err = l.Credit(ctx, first, 100)
	require.NoError(t, err, "a late retry on the same ledger")
	require.Equal(t, tpncounter.Duplicate, r.Outcome)
	require.Equal(t, int64(103), r.Value)

	now.Add(int64(3 * time.Hour)) // past the retry window
	_, err = other.Credit(ctx, first, 100)
	require.ErrorIs(t, err, crdt.ErrOutsideWindow, "a retry after the window")
	_, err = other.Credit(ctx, txn(5), 1)
	require.ErrorIs(t, err, crdt.ErrOutsideWindow, "a new transaction older than the window")
	fresh := crdt.TxnID(timeid.New(time.Unix(0, now.Load())).String())
	r, err = other.Credit(ctx, fresh, 1)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, r.Outcome)
	v, err := other.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(104), v, "100 once, not twice, and four credits of 1")
	_, err = other.Credit(ctx, "not-a-time-uuid", 1)
	require.ErrorIs(t, err, crdt.ErrInvalidTxnID)
}

// testConcurrentLedgers runs several ledgers (actors) at once over
// overlapping transaction ids; every id is counted exactly once. Every actor
// submits every id at some point of the run, so the history is longer than
// the run: a resend after the id left every history is outside the window
// (see package tpncounter) and is not what this subtest checks.
func testConcurrentLedgers(t *testing.T, s store.Siblings, key string) {
	ctx := ctxFor(t)
	const actors, txns = 4, 25
	amount := func(i int) int64 {
		if i%3 == 0 {
			return -int64(i + 1)
		}
		return int64(i + 1)
	}
	ledgers := make([]*ledger.Ledger, actors)
	for a := range ledgers {
		ledgers[a] = newLedger(t, s, key, crdt.ActorID(fmt.Sprintf("actor-%d", a)), func(o *ledger.Options) { o.Counter.HistoryLength = 2 * txns })
	}
	require.NoError(t, kitrun.Parallel(actors, func(a int) error {
		for _, i := range rand.New(rand.NewSource(int64(a))).Perm(txns) {
			if _, err := ledgers[a].Update(ctx, crdt.TxnID(fmt.Sprintf("txn-%d", i)), amount(i)); err != nil {
				return fmt.Errorf("actor %d txn %d: %w", a, i, err)
			}
		}
		return nil
	}))
	var want int64
	for i := 0; i < txns; i++ {
		want += amount(i)
	}
	for a := 0; a < actors; a++ {
		c, err := newLedger(t, s, key, crdt.ActorID(fmt.Sprintf("actor-%d", a)), func(o *ledger.Options) { o.Counter.HistoryLength = 2 * txns }).Find(ctx)
		require.NoError(t, err)
		require.Equal(t, want, c.Value(), "after actor %d's Find", a)
	}
	sibs, _, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	require.Len(t, sibs, 1, "sequential Finds collapse the siblings")
}

// putFault wraps s so that its next Put gets fault f.
func putFault(s store.Siblings, f faulty.Fault) *faulty.Siblings {
	return faulty.NewSiblings(s, faulty.Options{Policy: counterCalls(faulty.Only(faulty.Script(f), faulty.MethodPut))})
}

func testAmbiguousRetry(t *testing.T, s store.Siblings, key string) {
	ctx := ctxFor(t)
	for i, fault := range []faulty.Fault{faulty.LoseAck, faulty.Lose} {
		l := newLedger(t, putFault(s, fault), key, "a")
		r, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("t-%s", fault)), 10)
		require.NoError(t, err, fault)
		require.Equal(t, tpncounter.Applied, r.Outcome, fault)
		require.True(t, r.Landed, fault)
		require.Equal(t, 2, r.Attempts, fault)
		require.Equal(t, int64(10*(i+1)), r.Value, "%s: the retried credit counts once", fault)
		require.False(t, l.Pending())
	}
	// Retries exhausted: the error says the outcome is unknown.
	l := newLedger(t, s, key, "b", func(o *ledger.Options) { o.RetryCount = 1 })
	lossy := faulty.NewSiblings(s, faulty.Options{Policy: counterCalls(faulty.Only(func(faulty.Call) faulty.Fault { return faulty.Lose }, faulty.MethodPut))})
	l2 := newLedger(t, lossy, key, "c", func(o *ledger.Options) { o.RetryCount = 2 })
	r, err := l2.Credit(ctx, "t-never-acked", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.False(t, r.Landed)
	require.Equal(t, 3, r.Attempts)
	require.True(t, l2.Pending())
	// The client retries on another ledger: it lands once.
	r, err = l.Credit(ctx, "t-never-acked", 5)
	require.NoError(t, err)
	require.True(t, r.Landed)
	require.Equal(t, int64(25), r.Value)
	// When c's pending write finally lands, the duplicate is counted once.
	lossy.SetPolicy(nil) // the network heals
	c, err := l2.Find(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(25), c.Value())
	require.False(t, l2.Pending())
}

func testRefusedRetry(t *testing.T, s store.Siblings, key string) {
	ctx := ctxFor(t)
	l := newLedger(t, putFault(s, faulty.Refuse), key, "a")
	r, err := l.Credit(ctx, "t1", 7)
	require.NoError(t, err)
	require.Equal(t, 2, r.Attempts)
	require.Equal(t, int64(7), r.Value)
	require.False(t, errors.Is(err, crdt.ErrUnavailable))
}

// counterCalls confines p to the ledger's own keys: the calls on
// transaction records (ledger.IsRecordKey) pass untouched.
func counterCalls(p faulty.Policy) faulty.Policy {
	return faulty.Keys(p, func(k string) bool { return !ledger.IsRecordKey(k) })
}

// testRetryWindowBoundary is the ledger's retry window at its boundary,
// with the defaults (only Actor and Clock set; untimed ids): x is credited
// by writer "origin" and y by a Book ("booker", MaxOpen 1) at t0; then
// 1,200 credits of 1 (× COUNTERKIT_CASES) from many writers at once,
// spread over the window's first 23 hours in 8 phases: two long-lived
// ledgers each driven by two goroutines (group commit), a ledger restarted
// every phase (a new incarnation), and the Book alternating between the
// account and another one (an eviction at every switch). "origin" never
// writes again, so it is retired (RetireAfter, 1 h) long before the
// retries. At t0 + RetryWindow − 1 ns, x and y are retried on every kind
// of writer: each must be a duplicate and the value exact (SPEC.md 6.11).
func testRetryWindowBoundary(t *testing.T, st store.Siblings, key string) {
	credits := proptest.Scale(1200)
	ctx := context.Background()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var ns atomic.Int64
	ns.Store(t0.UnixNano())
	clock := func() time.Time { return time.Unix(0, ns.Load()) }
	set := func(d time.Duration) { ns.Store(t0.Add(d).UnixNano()) }
	newLedger := func(actor crdt.ActorID) *ledger.Ledger {
		l, err := ledger.New(st, key, ledger.Options{Actor: actor, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	other := key + "-other"
	book, err := ledger.NewBook(st, ledger.BookOptions{Options: ledger.Options{Actor: "booker", Clock: clock}, MaxOpen: 1})
	if err != nil {
		t.Fatal(err)
	}
	isDup := func(o tpncounter.Outcome) bool { return o == tpncounter.Duplicate || o == tpncounter.DuplicateFolded }

	origin := newLedger("origin")
	if r, err := origin.Credit(ctx, "x", 1000); err != nil || r.Outcome != tpncounter.Applied {
		t.Fatalf("x: %+v %v", r, err)
	}
	originWriter := origin.Writer()
	if r, err := book.Credit(ctx, key, "y", 500); err != nil || r.Outcome != tpncounter.Applied {
		t.Fatalf("y: %+v %v", r, err)
	}
	want := int64(1500)
	stable := []*ledger.Ledger{newLedger("s0"), newLedger("s1")}
	const phases = 8
	last := ledger.DefaultRetryWindow - time.Hour
	per := max(credits/phases/6, 1)
	for p := 0; p < phases; p++ {
		set(last * time.Duration(p) / (phases - 1))
		restarted := newLedger("r") // a restart: a new incarnation every phase
		var wg sync.WaitGroup
		errs := make(chan error, 6)
		run := func(g int, credit func(i int) (tpncounter.Outcome, error)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < per; i++ {
					o, err := credit(i)
					if err != nil || o != tpncounter.Applied {
						errs <- fmt.Errorf("phase %d, goroutine %d, credit %d: %v %v", p, g, i, o, err)
						return
					}
				}
			}()
		}
		id := func(g, i int) crdt.TxnID { return crdt.TxnID(fmt.Sprintf("p%d-g%d-%d", p, g, i)) }
		for g := 0; g < 4; g++ {
			l := stable[g%2]
			run(g, func(i int) (tpncounter.Outcome, error) {
				r, err := l.Credit(ctx, id(g, i), 1)
				return r.Outcome, err
			})
		}
		run(4, func(i int) (tpncounter.Outcome, error) {
			r, err := restarted.Credit(ctx, id(4, i), 1)
			return r.Outcome, err
		})
		run(5, func(i int) (tpncounter.Outcome, error) {
			// The other account first: the Book (MaxOpen 1) evicts key's
			// ledger, and reopens it for the credit that counts.
			if _, err := book.Credit(ctx, other, id(5, i), 1); err != nil {
				return 0, err
			}
			r, err := book.Credit(ctx, key, id(5, i), 1)
			return r.Outcome, err
		})
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		want += int64(6 * per)
	}
	c, err := newLedger("reader").Find(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Value() != want {
		t.Fatalf("value %d before the retries, want %d", c.Value(), want)
	}
	_, stillLive := maps.Collect(c.LiveActors())[originWriter]
	t.Logf("%d credits from %d writers over %v; origin %s live: %v; state: %+v; book: %+v", 6*per*phases+2, phases+4, last, originWriter, stillLive, c.Stats(), book.Stats())

	set(ledger.DefaultRetryWindow - time.Nanosecond) // the last moment inside the window
	var evictions atomic.Int64                       // ids of the eviction credits (the clock stays put)
	for _, w := range []struct {
		name  string
		retry func(txn crdt.TxnID, amount int64) (ledger.Result, error)
	}{
		{"a fresh ledger", func(txn crdt.TxnID, amount int64) (ledger.Result, error) {
			return newLedger("fresh").Credit(ctx, txn, amount)
		}},
		{"origin restarted", func(txn crdt.TxnID, amount int64) (ledger.Result, error) {
			return newLedger("origin").Credit(ctx, txn, amount)
		}},
		{"the original origin ledger", func(txn crdt.TxnID, amount int64) (ledger.Result, error) {
			return origin.Credit(ctx, txn, amount)
		}},
		{"a long-lived writer", func(txn crdt.TxnID, amount int64) (ledger.Result, error) {
			return stable[0].Credit(ctx, txn, amount)
		}},
		{"the Book after an eviction", func(txn crdt.TxnID, amount int64) (ledger.Result, error) {
			if _, err := book.Credit(ctx, other, crdt.TxnID(fmt.Sprint("evict-", txn, evictions.Add(1))), 1); err != nil {
				return ledger.Result{}, err
			}
			r, err := book.Credit(ctx, key, txn, amount)
			return r.Result, err
		}},
	} {
		for _, tx := range []struct {
			txn    crdt.TxnID
			amount int64
		}{{"x", 1000}, {"y", 500}} {
			r, err := w.retry(tx.txn, tx.amount)
			if err != nil {
				t.Fatalf("retry of %s on %s at RetryWindow − 1 ns: %v", tx.txn, w.name, err)
			}
			if !isDup(r.Outcome) || r.Value != want {
				t.Errorf("retry of %s on %s at RetryWindow − 1 ns: outcome %v, value %d; want a duplicate and %d", tx.txn, w.name, r.Outcome, r.Value, want)
			}
		}
	}
	if now := clock(); !now.Equal(t0.Add(ledger.DefaultRetryWindow - time.Nanosecond)) {
		t.Fatalf("the clock moved during the retries: %v", now)
	}
	v, err := newLedger("auditor").Value(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v != want {
		t.Fatalf("value %d after the retries, want %d", v, want)
	}
}

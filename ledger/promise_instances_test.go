package ledger_test

// Probes of retries from other instances (Ledgers,
// Books, Sharded accounts on one store), restarts and evictions, lost
// acknowledgements and cancelled contexts, all with the defaults.

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestPromiseContextCancelledAfterPutLanded: the caller's context ends
// while the account's Put is on the wire; the Put lands and the store
// answers with the context's error (as a network client does). The
// caller must be told the write may have landed (crdt.ErrAmbiguousWrite,
// package doc "Basics"), and a retry, on this ledger or another, counts
// it once.
func TestPromiseContextCancelledAfterPutLanded(t *testing.T) {
	for _, where := range []string{"account put", "record put"} {
		t.Run(where, func(t *testing.T) {
			mem := memory.NewSiblings()
			var cancel context.CancelFunc
			armed := true
			var mu sync.Mutex
			hook := func(ctx context.Context, c faulty.Call, after bool) error {
				mu.Lock()
				defer mu.Unlock()
				if !armed || c.Method != faulty.MethodPut || !after {
					return nil
				}
				if (where == "record put") != ledger.IsRecordKey(c.Key) {
					return nil
				}
				armed = false
				cancel()
				return context.Canceled
			}
			st := faulty.NewSiblings(mem, faulty.Options{Hook: hook})
			l, err := ledger.New(st, "acct", ledger.Options{Actor: "svc"})
			if err != nil {
				t.Fatal(err)
			}
			var ctx context.Context
			ctx, cancel = context.WithCancel(context.Background())
			defer cancel()
			r, err := l.Credit(ctx, "pay-1", 100)
			if err == nil {
				t.Fatalf("credit with its context cancelled mid-put: %+v, no error", r)
			}
			if !errors.Is(err, crdt.ErrAmbiguousWrite) {
				t.Errorf("credit whose put landed, context cancelled: %v; want an error wrapping crdt.ErrAmbiguousWrite", err)
			}
			bg := context.Background()
			other, err := ledger.New(mem, "acct", ledger.Options{Actor: "svc-b"})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range []*ledger.Ledger{other, l, other} {
				r, err := x.Credit(bg, "pay-1", 100)
				if err != nil || r.Value != 100 {
					t.Fatalf("retry on %s: %+v %v; want value 100", x.Writer(), r, err)
				}
			}
		})
	}
}

// TestPromiseConcurrentDeliveriesLostAcks: 40 transactions, each
// delivered 5 times at once to 3 instances (two Ledgers and a Book) over
// a store that loses a fifth of the acknowledgements of writes that
// landed and refuses a tenth; every delivery is retried until it gets an
// answer without error. Every answer must be Applied or a duplicate, and
// the account count each transaction exactly once, but for what SPEC.md
// 6.11 states of a give-up that names a late copy (giveUpLimit, which
// logs it).
func TestPromiseConcurrentDeliveriesLostAcks(t *testing.T) {
	seeds := int64(envCases(t, 4))
	for seed := int64(1); seed <= 2*seeds; seed++ {
		holds := seed > seeds
		t.Run(fmt.Sprint(seed, "/holds=", holds), func(t *testing.T) {
			mem := memory.NewSiblings()
			puts := &landedPuts{Siblings: mem}
			var mu sync.Mutex
			rng := rand.New(rand.NewSource(seed))
			policy := func(c faulty.Call) faulty.Fault {
				if c.Method != faulty.MethodPut {
					return faulty.Pass
				}
				mu.Lock()
				defer mu.Unlock()
				switch p := rng.Float64(); {
				case p < 0.2:
					return faulty.LoseAck
				case p < 0.3:
					return faulty.Refuse
				case p < 0.35:
					return faulty.Lose
				case p < 0.38 && holds:
					return faulty.Hold
				}
				return faulty.Pass
			}
			// Each store call yields, so that deliveries overlap and
			// group commits form even on one core.
			yield := func(context.Context, faulty.Call, bool) error { runtime.Gosched(); return nil }
			st := faulty.NewSiblings(puts, faulty.Options{Policy: faulty.Policy(policy), Hook: yield})
			opts := func(a crdt.ActorID) ledger.Options {
				return ledger.Options{Actor: a, Backoff: ledger.Backoff{Initial: -1}}
			}
			la, _ := ledger.New(st, "acct", opts("a"))
			lb, _ := ledger.New(st, "acct", opts("b"))
			book, _ := ledger.NewBook(st, ledger.BookOptions{Options: opts("c")})
			writers := []func(context.Context, crdt.TxnID, int64) (ledger.Result, error){
				la.Credit, lb.Credit,
				func(ctx context.Context, txn crdt.TxnID, a int64) (ledger.Result, error) {
					r, err := book.Credit(ctx, "acct", txn, a)
					return r.Result, err
				},
			}
			const txns, deliveries = 40, 5
			want := int64(0)
			var wg sync.WaitGroup
			var bad sync.Map
			for i := range txns {
				amount := int64(i + 1)
				want += amount
				for d := range deliveries {
					wg.Add(1)
					go func() {
						defer wg.Done()
						w := writers[(i+d)%len(writers)]
						for try := 0; ; try++ {
							r, err := w(context.Background(), crdt.TxnID(fmt.Sprint("t", i)), amount)
							if err == nil {
								if r.Outcome != tpncounter.Applied && !isDuplicate(r.Outcome) {
									bad.Store(fmt.Sprint("t", i, "/", d), r.Outcome.String())
								}
								return
							}
							if try > 200 {
								bad.Store(fmt.Sprint("t", i, "/", d), err.Error())
								return
							}
						}
					}()
				}
			}
			wg.Wait()
			bad.Range(func(k, v any) bool { t.Errorf("%v: %v", k, v); return true })
			t.Logf("faults: %v", st.Counts())
			// Land everything, then read on a clean instance.
			st.SetPolicy(nil)
			if err := st.DeliverAll(); err != nil {
				t.Log(err)
			}
			ctx := context.Background()
			for i := 0; i < 3; i++ {
				_, _ = la.Find(ctx)
				_, _ = lb.Find(ctx)
				_ = book.LandPending(ctx)
			}
			reader, _ := ledger.New(mem, "acct", ledger.Options{Actor: "reader"})
			v, err := reader.Value(ctx)
			if err != nil || v != want && !giveUpLimit(t, mem, puts, v-want) {
				t.Fatalf("value %d %v, want %d (each transaction once)", v, err, want)
			}
			// And a retry of each now is a duplicate, from a new instance.
			for i := range txns {
				r, err := reader.Credit(ctx, crdt.TxnID(fmt.Sprint("t", i)), int64(i+1))
				if err != nil || !isDuplicate(r.Outcome) {
					t.Fatalf("late retry of t%d: %+v %v", i, r, err)
				}
			}
		})
	}
}

// TestPromiseBookEvictionAndForgetting: a Book with the defaults
// (MaxOpen 1024, remembering 16,384 dropped keys) credits k0, then 20,000
// other accounts, so that k0's ledger is evicted and forgotten; the retry
// of k0's credit, on that Book, on a new Book of the same actor (a
// restart) and on a Book of another actor, is a duplicate.
func TestPromiseBookEvictionAndForgetting(t *testing.T) {
	ctx := context.Background()
	c := newPromiseClock()
	st := memory.NewSiblings()
	b, err := ledger.NewBook(st, ledger.BookOptions{Options: promiseOpts("svc", c)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Credit(ctx, "k0", "pay-0", 100); err != nil {
		t.Fatal(err)
	}
	const others = 20000
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1 + w; i <= others; i += 16 {
				if _, err := b.Credit(ctx, "k"+strconv.Itoa(i), crdt.TxnID("pay-"+strconv.Itoa(i)), 1); err != nil {
					t.Error(err)
					return
				}
				c.Add(4 * time.Second) // 20,000 × 4 s ≈ 22 h
			}
		}()
	}
	wg.Wait()
	if s := b.Stats(); s.Evicted < others-1024 {
		t.Fatalf("stats %+v: k0 was not evicted", s)
	}
	restarted, _ := ledger.NewBook(st, ledger.BookOptions{Options: promiseOpts("svc", c)})
	other, _ := ledger.NewBook(st, ledger.BookOptions{Options: promiseOpts("svc-2", c)})
	for i, x := range []*ledger.Book{b, restarted, other} {
		r, err := x.Credit(ctx, "k0", "pay-0", 100)
		if err != nil || !isDuplicate(r.Outcome) || r.Value != 100 {
			t.Fatalf("retry %d of pay-0 on k0: %+v %v", i, r, err)
		}
	}
	// Another credit of k0 retires its first writers, idle for 22 hours:
	// the counter forgets pay-0, and its record still answers the retry.
	if _, err := other.Credit(ctx, "k0", "pay-new", 1); err != nil {
		t.Fatal(err)
	}
	if s, err := other.Find(ctx, "k0"); err != nil || s.Status("pay-0") != tpncounter.Unknown {
		t.Fatalf("k0 after a credit retiring its idle writers: status of pay-0 %v %v, want forgotten", s.Status("pay-0"), err)
	}
	if r, err := restarted.Credit(ctx, "k0", "pay-0", 100); err != nil || !isDuplicate(r.Outcome) || r.Value != 101 {
		t.Fatalf("retry of pay-0 after its writers retired: %+v %v", r, err)
	}
}

// TestPromiseBookReopenedManyTimes: one account evicted from a Book and
// reopened many times (MaxOpen at its default, 1,100 other accounts
// between two credits of it) over a day: it stays writable, the retry of
// its first credit is a duplicate, and its state holds few entries.
func TestPromiseBookReopenedManyTimes(t *testing.T) {
	testsize.SkipSequential(t)
	ctx := context.Background()
	c := newPromiseClock()
	st := memory.NewSiblings()
	b, _ := ledger.NewBook(st, ledger.BookOptions{Options: promiseOpts("svc", c)})
	if _, err := b.Credit(ctx, "hot", "h-0", 100); err != nil {
		t.Fatal(err)
	}
	want := int64(100)
	for round := 1; round <= 20; round++ {
		for i := range 1100 {
			if _, err := b.Credit(ctx, fmt.Sprint("cold-", i), crdt.TxnID(fmt.Sprint("c", round, "-", i)), 1); err != nil {
				t.Fatal(err)
			}
		}
		c.Add(time.Hour)
		if _, err := b.Credit(ctx, "hot", crdt.TxnID(fmt.Sprint("h-", round)), 1); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		want++
	}
	r, err := b.Credit(ctx, "hot", "h-0", 100)
	if err != nil || !isDuplicate(r.Outcome) || r.Value != want {
		t.Fatalf("retry of h-0: %+v %v, want duplicate %d", r, err, want)
	}
	cnt, err := b.Find(ctx, "hot")
	if err != nil {
		t.Fatal(err)
	}
	if s := cnt.Stats(); s.Actors != 1 || s.Retired != 0 {
		t.Errorf("hot account after 20 evictions: %+v; want the Book's one incarnation continued", s)
	}
}

// TestPromiseShardedRetriesOnOtherInstances: a Sharded account (the
// defaults, n = 8) credited by instance a; 10,000 other credits spread over
// 23 h 59 m from a and b; the retry on a, on b, on a restart of a and on a
// new Sharded of a third actor is a duplicate, and the value exact.
func TestPromiseShardedRetriesOnOtherInstances(t *testing.T) {
	ctx := context.Background()
	c := newPromiseClock()
	st := memory.NewSiblings()
	open := func(a crdt.ActorID) *ledger.Sharded {
		s, err := ledger.NewSharded(st, "hot", 8, promiseOpts(a, c))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := open("a"), open("b")
	if _, err := a.Credit(ctx, "pay-0", 100); err != nil {
		t.Fatal(err)
	}
	credit := func(ctx context.Context, txn crdt.TxnID, amount int64) (tpncounter.Outcome, error) {
		s := a
		if ledger.ShardOf(txn, 2) == 1 {
			s = b
		}
		r, err := s.Credit(ctx, txn, amount)
		return r.Outcome, err
	}
	creditMany(t, c, 10000, 23*time.Hour+58*time.Minute, "o-", credit)
	c.Add(time.Minute)
	want := int64(100 + 10000)
	for _, s := range []*ledger.Sharded{a, b, open("a"), open("z")} {
		r, err := s.Credit(ctx, "pay-0", 100)
		if err != nil || !isDuplicate(r.Outcome) {
			t.Fatalf("retry on %s: %+v %v", s.Writer("pay-0"), r, err)
		}
	}
	v, err := open("reader").Value(ctx)
	if err != nil || v != want {
		t.Fatalf("value %d %v, want %d", v, err, want)
	}
}

package ledger_test

// Probes of "a retried credit never counts twice", as a
// new user who changes no option reads it (README, first lines; package
// doc, "The guarantee"). Every ledger here uses the defaults but for a
// clock the test moves (Options.Clock), so that a retry seconds to almost
// a day later runs in milliseconds. TestPromiseChecksCatchBrokenVariants
// (promise_mutants_test.go, -tags counterkit_mutants) shows each of these
// tests failing against a broken variant of the ledger.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// promiseClock is a clock the test moves, safe for concurrent use.
type promiseClock struct{ ns atomic.Int64 }

func newPromiseClock() *promiseClock {
	c := &promiseClock{}
	c.ns.Store(time.Date(2031, 3, 1, 9, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *promiseClock) Now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *promiseClock) Add(d time.Duration) { c.ns.Add(int64(d)) }

// promiseOpts are the defaults, with the clock c.
func promiseOpts(actor crdt.ActorID, c *promiseClock) ledger.Options {
	return ledger.Options{Actor: actor, Clock: c.Now}
}

// isDuplicate reports whether o is an answer that recognised a retry.
func isDuplicate(o tpncounter.Outcome) bool {
	return o == tpncounter.Duplicate || o == tpncounter.DuplicateFolded
}

// creditMany credits n transactions of 1, named prefix0..prefix{n-1},
// from 16 goroutines at once through credit, moving the clock by span/n
// per credit so that the credits spread over span.
func creditMany(t *testing.T, c *promiseClock, n int, span time.Duration, prefix string,
	credit func(ctx context.Context, txn crdt.TxnID, amount int64) (tpncounter.Outcome, error)) {
	t.Helper()
	ctx := context.Background()
	step := span / time.Duration(n)
	var wg sync.WaitGroup
	var failed atomic.Int64
	const workers = 16
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				o, err := credit(ctx, crdt.TxnID(prefix+strconv.Itoa(i)), 1)
				if err != nil || o != tpncounter.Applied {
					if failed.Add(1) < 5 {
						t.Errorf("%s%d: %v %v", prefix, i, o, err)
					}
				}
				c.Add(step)
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.FailNow()
	}
}

func ledgerCredit(l *ledger.Ledger) func(context.Context, crdt.TxnID, int64) (tpncounter.Outcome, error) {
	return func(ctx context.Context, txn crdt.TxnID, a int64) (tpncounter.Outcome, error) {
		r, err := l.Credit(ctx, txn, a)
		return r.Outcome, err
	}
}

// TestPromiseRetryAfterManyCreditsAndTime: pay-0 credited once, then
// 10,000 other credits (2,000 with -short) on the same account by the
// same writer, spread over the delay; the retry of pay-0, 1 s, 1 h or 23 h 59 m after the first, on
// the writer itself, on a restart of it (a new Ledger of its actor), and
// on another instance (another actor), is a duplicate, and the value
// counts pay-0 once.
func TestPromiseRetryAfterManyCreditsAndTime(t *testing.T) {
	for _, delay := range []time.Duration{time.Second, time.Hour, 23*time.Hour + 59*time.Minute} {
		t.Run(delay.String(), func(t *testing.T) {
			ctx := context.Background()
			c := newPromiseClock()
			st := memory.NewSiblings()
			a, err := ledger.New(st, "acct", promiseOpts("svc-a", c))
			if err != nil {
				t.Fatal(err)
			}
			if r, err := a.Credit(ctx, "pay-0", 100); err != nil || r.Outcome != tpncounter.Applied {
				t.Fatalf("pay-0: %+v %v", r, err)
			}
			others := 10000
			if testing.Short() {
				others = 2000
			}
			creditMany(t, c, others, delay-time.Second, "o-", ledgerCredit(a))
			c.Add(time.Second)
			want := int64(100 + others)
			restarted, err := ledger.New(st, "acct", promiseOpts("svc-a", c))
			if err != nil {
				t.Fatal(err)
			}
			other, err := ledger.New(st, "acct", promiseOpts("svc-b", c))
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range []struct {
				name string
				l    *ledger.Ledger
			}{{"same", a}, {"restarted", restarted}, {"other", other}} {
				r, err := l.l.Credit(ctx, "pay-0", 100)
				if err != nil || !isDuplicate(r.Outcome) || r.Value != want {
					t.Fatalf("retry on %s ledger after %v: %+v %v; want a duplicate, value %d", l.name, delay, r, err, want)
				}
			}
			if v, err := other.Value(ctx); err != nil || v != want {
				t.Fatalf("value %d %v, want %d", v, err, want)
			}
		})
	}
}

// TestPromiseRetryAcrossDayOfWriters: the credit lands at t0; for almost
// a day, writers come and go (a restart every 20 minutes, each crediting
// 50 transactions), so that the first writer is retired and folded by
// others' passes; the retry at t0 + 23h59m, on a fresh instance, is a
// duplicate.
func TestPromiseRetryAcrossDayOfWriters(t *testing.T) {
	ctx := context.Background()
	c := newPromiseClock()
	st := memory.NewSiblings()
	first, err := ledger.New(st, "acct", promiseOpts("svc", c))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Credit(ctx, "pay-0", 100); err != nil {
		t.Fatal(err)
	}
	total := int64(100)
	start := c.Now()
	for i := 0; c.Now().Sub(start) < 23*time.Hour+40*time.Minute; i++ {
		l, err := ledger.New(st, "acct", promiseOpts(crdt.ActorID(fmt.Sprint("svc-", i%3)), c))
		if err != nil {
			t.Fatal(err)
		}
		creditMany(t, c, 50, 20*time.Minute, fmt.Sprintf("r%d-", i), ledgerCredit(l))
		total += 50
	}
	c.Add(start.Add(23*time.Hour+59*time.Minute).Sub(c.Now()) - 0)
	late, err := ledger.New(st, "acct", promiseOpts("svc-late", c))
	if err != nil {
		t.Fatal(err)
	}
	r, err := late.Credit(ctx, "pay-0", 100)
	if err != nil || !isDuplicate(r.Outcome) || r.Value != total {
		t.Fatalf("retry at +23h59m: %+v %v; want a duplicate, value %d", r, err, total)
	}
}

// promiseCountingStore counts Puts and Fetches.
type promiseCountingStore struct {
	store.Siblings
	puts, fetches atomic.Int64
}

func (s *promiseCountingStore) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	s.fetches.Add(1)
	return s.Siblings.Fetch(ctx, key)
}

func (s *promiseCountingStore) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	s.puts.Add(1)
	return s.Siblings.Put(ctx, key, actor, value, token)
}

// TestPromiseBadInputChangesNothing: invalid ids and amounts on a
// Ledger, a Book and a Sharded: an error wrapping the crdt sentinel, and no
// store call at all (README, "Bad input changes nothing").
func TestPromiseBadInputChangesNothing(t *testing.T) {
	ctx := context.Background()
	st := &promiseCountingStore{Siblings: memory.NewSiblings()}
	l, err := ledger.New(st, "acct", ledger.Options{Actor: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ledger.NewBook(st, ledger.BookOptions{Options: ledger.Options{Actor: "svc"}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ledger.NewSharded(st, "hot", 4, ledger.Options{Actor: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'x'
	}
	cases := []struct {
		txn    crdt.TxnID
		amount int64
		want   error
	}{
		{"", 1, crdt.ErrInvalidTxnID},
		{crdt.TxnID(long), 1, crdt.ErrInvalidTxnID},
		{"bad\xff", 1, crdt.ErrInvalidTxnID},
		{"ok", 0, crdt.ErrInvalidAmount},
		{"ok", -5, crdt.ErrInvalidAmount},
		{"ok", -1 << 63, crdt.ErrInvalidAmount},
	}
	for _, tc := range cases {
		ops := map[string]func() error{
			"ledger credit": func() error { _, err := l.Credit(ctx, tc.txn, tc.amount); return err },
			"ledger debit":  func() error { _, err := l.Debit(ctx, tc.txn, tc.amount); return err },
			"book credit":   func() error { _, err := b.Credit(ctx, "acct", tc.txn, tc.amount); return err },
			"book debit":    func() error { _, err := b.Debit(ctx, "acct", tc.txn, tc.amount); return err },
			"shard credit":  func() error { _, err := s.Credit(ctx, tc.txn, tc.amount); return err },
			"shard debit":   func() error { _, err := s.Debit(ctx, tc.txn, tc.amount); return err },
		}
		for name, op := range ops {
			err := op()
			if !errors.Is(err, tc.want) {
				t.Errorf("%s(%q, %d): %v, want %v", name, tc.txn, tc.amount, err, tc.want)
			}
		}
	}
	if _, err := b.Credit(ctx, "", "ok", 1); !errors.Is(err, crdt.ErrInvalidKey) {
		t.Errorf("book credit of key \"\": %v", err)
	}
	if p, f := st.puts.Load(), st.fetches.Load(); p != 0 || f != 0 {
		t.Fatalf("bad input made %d puts and %d fetches, want none", p, f)
	}
}

// TestPromiseOverdraw: the ledger has no floor (README: a debit may
// take a balance below zero); a debit that cannot fit in int64 is refused
// with crdt.ErrOverflow and changes nothing stored.
func TestPromiseOverdraw(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	l, err := ledger.New(st, "acct", ledger.Options{Actor: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Credit(ctx, "c1", 10); err != nil {
		t.Fatal(err)
	}
	r, err := l.Debit(ctx, "d1", 25)
	if err != nil || r.Value != -15 {
		t.Fatalf("overdraw: %+v %v, want value -15", r, err)
	}
	before, _, _ := st.Fetch(ctx, "acct")
	_, err = l.Debit(ctx, "d3", 1<<63-1)
	if !errors.Is(err, crdt.ErrOverflow) {
		t.Fatalf("debit past the int64 N total: %v, want ErrOverflow", err)
	}
	after, _, _ := st.Fetch(ctx, "acct")
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatal("a refused debit changed the stored key")
	}
	// a retry of d1 is still a duplicate
	if r, err := l.Debit(ctx, "d1", 25); err != nil || !isDuplicate(r.Outcome) {
		t.Fatalf("retry of d1: %+v %v", r, err)
	}
}

// TestPromiseCreditCostFlat: README, "an increment costs one write": a
// ledger credit is five store calls (fetch the key, fetch the record, put
// the key, fetch the record, put it) whatever the history, and a retry the
// key still holds costs one. Measured on a fresh account and after 10,000
// credits and 200 restarts (one every 5 minutes), outside retirement passes.
func TestPromiseCreditCostFlat(t *testing.T) {
	ctx := context.Background()
	c := newPromiseClock()
	mem := memory.NewSiblings()
	st := &promiseCountingStore{Siblings: mem}
	measure := func(name string, l *ledger.Ledger, txn crdt.TxnID, wantOutcome func(tpncounter.Outcome) bool, want int64) {
		t.Helper()
		p0, f0 := st.puts.Load(), st.fetches.Load()
		r, err := l.Credit(ctx, txn, 1)
		if err != nil || !wantOutcome(r.Outcome) {
			t.Fatalf("%s: %+v %v", name, r, err)
		}
		calls := st.puts.Load() - p0 + st.fetches.Load() - f0
		t.Logf("%s: %d store calls", name, calls)
		if want > 0 && calls != want {
			t.Errorf("%s: %d store calls, want %d", name, calls, want)
		}
	}
	applied := func(o tpncounter.Outcome) bool { return o == tpncounter.Applied }
	l, _ := ledger.New(st, "acct", promiseOpts("svc", c))
	measure("first credit", l, "first", applied, 5)
	c.Add(time.Second)
	measure("second credit", l, "second", applied, 5)
	measure("retry held", l, "second", isDuplicate, 1)
	creditMany(t, c, 10000, time.Minute, "o-", ledgerCredit(l))
	for i := range 200 {
		r, _ := ledger.New(st, "acct", promiseOpts("svc", c))
		if _, err := r.Credit(ctx, crdt.TxnID(fmt.Sprint("restart-", i)), 1); err != nil {
			t.Fatalf("restart %d: %v", i, err)
		}
		c.Add(5 * time.Minute)
	}
	l2, _ := ledger.New(st, "acct", promiseOpts("svc", c))
	// A new instance's first write makes a retirement pass, which reads
	// and writes the records of idle writers (README: "a write that
	// retires idle writers also reads and writes their records").
	measure("credit of a new instance", l2, "after", applied, 0)
	c.Add(time.Second)
	measure("next credit", l2, "after-2", applied, 5)
	measure("retry held", l2, "after-2", isDuplicate, 1)
	measure("retry of a folded transaction", l2, "o-5", isDuplicate, 2)
	cnt, err := l2.Find(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cnt.MarshalBinary()
	t.Logf("after 200 restarts: %+v, %d bytes", cnt.Stats(), len(b))
}

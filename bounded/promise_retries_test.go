package bounded_test

// Retries of an Account's credits and debits as a user with the defaults
// sends them (package doc, "Account"): on other accounts, on a restart,
// near the end of RetryWindow, and delivered to several accounts at once.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store/faulty"
)

// TestRetriesOnEveryAccountAtTheWindowsEnd: a credit and a debit land on
// account a; the debit's retry on b, which holds no rights, is a
// duplicate (not a refusal, which would tell the caller the debit did not
// happen); 2,000 other credits (× COUNTERKIT_CASES) from a and b follow
// over the window; at RetryWindow − 1 ns after the landing the retries of
// both, on a, on b, on a restart of a and on a new actor, are duplicates
// and the value counts each once.
func TestRetriesOnEveryAccountAtTheWindowsEnd(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	var mu sync.Mutex
	now := time.Unix(1_900_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	set := func(t time.Time) { mu.Lock(); now = t; mu.Unlock() }
	open := func(actor crdt.ActorID) *bounded.Account {
		a, err := bounded.Open(st, "acct", bounded.AccountOptions{Actor: actor, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a, b := open("a"), open("b")
	if _, err := a.Credit(ctx, "credit", 1000); err != nil {
		t.Fatal(err)
	}
	if r, err := a.Debit(ctx, "debit", 300); err != nil || r.Outcome != bounded.Applied {
		t.Fatalf("debit: %+v %v", r, err)
	}
	landed := clock()
	if r, err := b.Debit(ctx, "debit", 300); err != nil || r.Outcome != bounded.Duplicate || r.Value != 700 {
		t.Fatalf("the debit's retry on an account without rights: %+v %v; want a duplicate", r, err)
	}
	want := int64(700)
	others := proptest.Scale(2000)
	step := (bounded.DefaultRetryWindow - time.Minute) / time.Duration(others)
	for i := range others {
		w := a
		if i%2 == 1 {
			w = b
		}
		if _, err := w.Credit(ctx, crdt.TxnID(fmt.Sprint("o-", i)), 1); err != nil {
			t.Fatal(err)
		}
		want++
		set(clock().Add(step))
	}
	set(landed.Add(bounded.DefaultRetryWindow - time.Nanosecond))
	for i, x := range []*bounded.Account{a, b, open("a"), open("z")} {
		r, err := x.Debit(ctx, "debit", 300)
		if err != nil || r.Outcome != bounded.Duplicate || r.Value != want {
			t.Errorf("account %d: the debit's retry: %+v %v; want a duplicate, value %d", i, r, err, want)
		}
		r, err = x.Credit(ctx, "credit", 1000)
		if err != nil || r.Outcome != bounded.Duplicate || r.Value != want {
			t.Errorf("account %d: the credit's retry: %+v %v; want a duplicate, value %d", i, r, err, want)
		}
	}
}

// TestConcurrentDeliveriesCountOnce: 30 credits, or 30 debits of funded
// accounts, each delivered 4 times at once to 3 accounts (three actors,
// or one actor name for all three) over a store that loses a fifth of the
// acknowledgements of writes that landed, refuses a tenth and loses some
// writes; each delivery is retried on its account until answered. Every
// answer is Applied or Duplicate, and once the faults stop and the
// accounts sync, the value counts each transaction once (a copy held
// twice is taken back by its larger holder, package doc).
func TestConcurrentDeliveriesCountOnce(t *testing.T) {
	for _, debits := range []bool{false, true} {
		for _, oneName := range []bool{false, true} {
			for seed := int64(1); seed <= int64(proptest.Scale(4)); seed++ {
				t.Run(fmt.Sprintf("debits=%v/one-name=%v/%d", debits, oneName, seed), func(t *testing.T) {
					concurrentDeliveries(t, seed, debits, oneName)
				})
			}
		}
	}
}

func concurrentDeliveries(t *testing.T, seed int64, debits, oneName bool) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	// Each store call yields, so that deliveries overlap even on one core.
	yield := func(context.Context, faulty.Call, bool) error { runtime.Gosched(); return nil }
	st := faulty.NewSiblings(mem, faulty.Options{Hook: yield})
	var accounts []*bounded.Account
	want := int64(0)
	for _, actor := range []crdt.ActorID{"a", "b", "c"} {
		if oneName {
			actor = "svc"
		}
		x, err := bounded.Open(st, "acct", bounded.AccountOptions{Actor: actor, Backoff: bounded.Backoff{Initial: -1}})
		if err != nil {
			t.Fatal(err)
		}
		if debits {
			if _, err := x.Credit(ctx, crdt.TxnID("fund-"+string(x.Writer())), 1000); err != nil {
				t.Fatal(err)
			}
			want += 1000
		}
		accounts = append(accounts, x)
	}
	st.SetPolicy(faulty.Seeded(seed, faulty.Rates{LoseAck: 0.2, Refuse: 0.1, Lose: 0.05}))
	const txns, deliveries = 30, 4
	var wg sync.WaitGroup
	for i := range txns {
		amount := int64(i + 1)
		if debits {
			want -= amount
		} else {
			want += amount
		}
		for d := range deliveries {
			wg.Add(1)
			go func() {
				defer wg.Done()
				x := accounts[(i+d)%len(accounts)]
				txn := crdt.TxnID(fmt.Sprint("t", i))
				for try := 0; ; try++ {
					var r bounded.Result
					var err error
					if debits {
						r, err = x.Debit(ctx, txn, amount)
					} else {
						r, err = x.Credit(ctx, txn, amount)
					}
					if err == nil {
						if r.Outcome != bounded.Applied && r.Outcome != bounded.Duplicate {
							t.Errorf("%s/%d: %v", txn, d, r.Outcome)
						}
						return
					}
					if try > 200 || !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, crdt.ErrUnavailable) {
						t.Errorf("%s/%d: %v", txn, d, err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	st.SetPolicy(nil)
	if err := st.DeliverAll(); err != nil {
		t.Log(err)
	}
	for range 4 {
		for _, x := range accounts {
			if _, err := x.Sync(ctx); err != nil {
				t.Log(err)
			}
		}
	}
	reader, err := bounded.Open(mem, "acct", bounded.AccountOptions{Actor: "reader"})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := reader.Value(ctx); err != nil || v != want {
		t.Fatalf("value %d %v, want %d (each transaction once)", v, err, want)
	}
}

package bounded_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// BenchmarkDebitVsLedgerCredit compares, in one run, a bounded debit within
// the account's own rights with a ledger credit: one writer, the in-memory
// store, a fresh transaction id each time. The ledger keeps its default
// history of 10; the account runs with its default window of 64 and with
// 10.
func BenchmarkDebitVsLedgerCredit(b *testing.B) {
	ctx := context.Background()
	ids := make([]crdt.TxnID, 1<<16)
	for i := range ids {
		ids[i] = crdt.TxnID(fmt.Sprintf("txn-%08d", i))
	}
	b.Run("ledger.Credit", func(b *testing.B) {
		l, err := ledger.New(memory.NewSiblings(), "k", ledger.Options{Actor: "w"})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if _, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("%s-%d", ids[i%len(ids)], i)), 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, window := range []int{bounded.DefaultWindow, 10} {
		b.Run(fmt.Sprintf("bounded.Debit/window=%d", window), func(b *testing.B) {
			a, err := bounded.Open(memory.NewSiblings(), "k", bounded.AccountOptions{Actor: "w", Counter: bounded.Options{Window: window}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := a.Credit(ctx, "funds", 1<<60); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if _, err := a.Debit(ctx, crdt.TxnID(fmt.Sprintf("%s-%d", ids[i%len(ids)], i)), 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkShortfall runs a workload where actors run short: 8 accounts on
// one in-memory store, credits of 4 spread evenly over them, debits of 4
// spread unevenly (account i takes a share proportional to 2^-i, so account
// 0 takes about half). Each iteration is one credit and one debit. A
// refused debit is retried with the same id at its account's next turn;
// meanwhile the credits of other accounts are the writes that grant its
// request. Reported: the share of debits that needed a transfer (refused at
// least once), the attempts and the time spent in attempts per such debit
// against a debit within rights, and how many other operations ran before
// it succeeded.
func BenchmarkShortfall(b *testing.B) {
	ctx := context.Background()
	st := memory.NewSiblings()
	const n = 8
	accounts := make([]*bounded.Account, n)
	for i := range accounts {
		a, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: crdt.ActorID(fmt.Sprintf("w%d", i))})
		if err != nil {
			b.Fatal(err)
		}
		accounts[i] = a
		if _, err := a.Credit(ctx, crdt.TxnID(fmt.Sprintf("seed-%d", i)), 16); err != nil {
			b.Fatal(err)
		}
	}
	type waiting struct {
		txn      crdt.TxnID
		attempts int
		spent    time.Duration
		since    int
	}
	pending := make([]*waiting, n)
	var (
		debits, needy, needyAttempts, waited int
		within, needySpent                   time.Duration
	)
	rng := rand.New(rand.NewSource(1))
	pick := func() int { // P(i) ∝ 2^-i
		x := rng.Float64() * (2 - 2/float64(int(1)<<n))
		for i := range n {
			w := 1 / float64(int(1)<<i)
			if x < w {
				return i
			}
			x -= w
		}
		return n - 1
	}
	b.ReportAllocs()
	b.ResetTimer()
	for k := range b.N {
		if _, err := accounts[k%n].Credit(ctx, crdt.TxnID(fmt.Sprintf("c%d", k)), 4); err != nil {
			b.Fatal(err)
		}
		i := pick()
		w := pending[i]
		if w == nil {
			w = &waiting{txn: crdt.TxnID(fmt.Sprintf("d%d", k)), since: k}
		}
		start := time.Now()
		_, err := accounts[i].Debit(ctx, w.txn, 4)
		d := time.Since(start)
		w.attempts++
		w.spent += d
		switch {
		case err == nil && w.attempts == 1:
			debits++
			within += d
			pending[i] = nil
		case err == nil:
			debits++
			needy++
			needyAttempts += w.attempts
			needySpent += w.spent
			waited += 2 * (k - w.since) // credits and debits run meanwhile
			pending[i] = nil
		case errors.Is(err, crdt.ErrInsufficientRights):
			pending[i] = w
		default:
			b.Fatal(err)
		}
	}
	if debits > 0 {
		b.ReportMetric(float64(needy)/float64(debits), "needed-transfer/debit")
	}
	if within > 0 && debits > needy {
		b.ReportMetric(float64(within.Nanoseconds())/float64(debits-needy), "ns/debit-within")
	}
	if needy > 0 {
		b.ReportMetric(float64(needyAttempts)/float64(needy), "attempts/needy-debit")
		b.ReportMetric(float64(needySpent.Nanoseconds())/float64(needy), "ns/needy-debit")
		b.ReportMetric(float64(waited)/float64(needy), "ops-waited/needy-debit")
	}
}

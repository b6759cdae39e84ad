package bounded_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/bounded/boundedtest"
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

// BenchmarkShortfall runs the workload where actors run short
// (boundedtest.BenchmarkShortfall: 8 accounts, debits spread unevenly) on
// the in-memory store. The adapters run the same workload on their stores.
func BenchmarkShortfall(b *testing.B) {
	boundedtest.BenchmarkShortfall(b, memory.NewSiblings())
}

// BenchmarkTransfer times a Transfer of 1 to a recipient the actor has
// already given to, when its entry gives to 1 and to 4,000 recipients,
// and reports the second against the first in the same run (x-vs-one): a
// transfer checks the totals of the recipients it changes, not of every
// recipient of the entry; what is left grows with the entry (its
// encoding).
//
//	taskset -c 1 go test -run '^$' -bench BenchmarkTransfer ./bounded
func BenchmarkTransfer(b *testing.B) {
	var one float64
	for _, n := range []int{1, 4000} {
		b.Run(fmt.Sprintf("recipients=%d", n), func(b *testing.B) {
			c, err := bounded.New(bounded.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Apply("a", "t1", 1<<40); err != nil {
				b.Fatal(err)
			}
			to := func(i int) crdt.ActorID { return crdt.ActorID(fmt.Sprintf("b%05d", i)) }
			for i := range n {
				if err := c.Transfer("a", to(i), 1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := c.Transfer("a", to(n-1), 1); err != nil {
					b.Fatal(err)
				}
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if n == 1 {
				one = ns
			} else if one > 0 {
				b.ReportMetric(ns/one, "x-vs-one")
			}
		})
	}
}

package ledger_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// BenchmarkBook measures credits over the in-memory store from 4
// goroutines per CPU (b.RunParallel), each credit a new transaction on a
// key drawn in turn:
//
//   - "ledger/keys=1": one plain Ledger, the baseline for the Book's own
//     cost (a lookup and two short critical sections per operation);
//   - "book/keys=1": every credit on one key of a Book, which serialises
//     them all;
//   - "book/keys=1000": spread over 1,000 keys, all open (MaxOpen 1024), so
//     credits on different keys run concurrently;
//   - "book/keys=1000/maxopen=100": the same keys through a Book that keeps
//     100: most credits re-open their key (opens/op), a new incarnation
//     each time, so every key's state gains an actor entry per re-open and
//     the cost grows with b.N; it shows what an undersized MaxOpen costs.
//
// Every key is first given HistoryLength + FoldedLength credits, so its
// state is at its steady size. Compare ratios between sub-benchmarks of one
// run.
func BenchmarkBook(b *testing.B) {
	ctx := context.Background()
	warm := 2 * tpncounter.DefaultHistoryLength
	type credit func(key string, txn crdt.TxnID) error
	bench := func(b *testing.B, keys []string, c credit, opened func() uint64) {
		before := opened()
		var next atomic.Int64
		b.SetParallelism(4)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				n := next.Add(1)
				// A step of 7919 (prime) visits the keys in a scattered order.
				key := keys[int(n*7919)%len(keys)]
				if err := c(key, crdt.TxnID("t-"+strconv.FormatInt(n, 10))); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "txns/s")
		b.ReportMetric(float64(opened()-before)/float64(b.N), "opens/op")
	}

	b.Run("ledger/keys=1", func(b *testing.B) {
		l, err := ledger.New(memory.NewSiblings(), "acct/0", ledger.Options{Actor: "svc"})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < warm; i++ {
			if _, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("warm-%d", i)), 1); err != nil {
				b.Fatal(err)
			}
		}
		bench(b, []string{"acct/0"}, func(_ string, txn crdt.TxnID) error {
			_, err := l.Credit(ctx, txn, 1)
			return err
		}, func() uint64 { return 0 })
	})
	for _, tc := range []struct {
		name          string
		keys, maxOpen int
	}{{"book/keys=1", 1, 1024}, {"book/keys=1000", 1000, 1024}, {"book/keys=1000/maxopen=100", 1000, 100}} {
		b.Run(tc.name, func(b *testing.B) {
			book, err := ledger.NewBook(memory.NewSiblings(), ledger.BookOptions{MaxOpen: tc.maxOpen, Options: ledger.Options{Actor: "svc"}})
			if err != nil {
				b.Fatal(err)
			}
			keys := make([]string, tc.keys)
			for k := range keys {
				keys[k] = fmt.Sprintf("acct/%d", k)
				for i := 0; i < warm; i++ {
					if _, err := book.Credit(ctx, keys[k], crdt.TxnID(fmt.Sprintf("warm-%d", i)), 1); err != nil {
						b.Fatal(err)
					}
				}
			}
			bench(b, keys, func(key string, txn crdt.TxnID) error {
				_, err := book.Credit(ctx, key, txn, 1)
				return err
			}, func() uint64 { return book.Stats().Opened })
		})
	}
}

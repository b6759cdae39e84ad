package ledger_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// BenchmarkLedger measures a Ledger over the in-memory store on one
// goroutine: "idempotent" resends transactions that are already stored (the
// duplicate path: fetch, decode, check), "credit" writes new ones (fetch,
// decode, merge, apply, encode, put). Run with -cpu 1 for the one-core
// figure.
func BenchmarkLedger(b *testing.B) {
	ctx := context.Background()
	setup := func(b *testing.B) (*ledger.Ledger, []crdt.TxnID) {
		l, err := ledger.New(memory.NewSiblings(), "k", ledger.Options{Actor: "a"})
		if err != nil {
			b.Fatal(err)
		}
		ids := make([]crdt.TxnID, 10)
		for i := range ids {
			ids[i] = crdt.TxnID(fmt.Sprintf("txn-%d", i))
			if _, err := l.Credit(ctx, ids[i], 1); err != nil {
				b.Fatal(err)
			}
		}
		return l, ids
	}
	b.Run("idempotent", func(b *testing.B) {
		l, ids := setup(b)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := l.Credit(ctx, ids[i%len(ids)], 1); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "txns/s")
	})
	b.Run("credit", func(b *testing.B) {
		l, _ := setup(b)
		ids := make([]crdt.TxnID, b.N)
		for i := range ids {
			ids[i] = crdt.TxnID(fmt.Sprintf("new-%d", i))
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := l.Credit(ctx, ids[i], 1); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "txns/s")
	})
}

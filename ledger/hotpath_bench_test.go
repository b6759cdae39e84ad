package ledger_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// BenchmarkHotPath is the ledger's hot path with no Observer: a credit of a
// new transaction (fetch, decode, merge, apply, encode, put) over
// adapters/memory, as BenchmarkLedger/credit. It is written so that the
// build before observation existed runs it with one change, its memory
// store constructor (BENCHMARKS.md, "Observation cost").
func BenchmarkHotPath(b *testing.B) { benchCredit(b, ledger.Options{}) }

// benchCredit measures Credit of new transactions on a ledger made with
// opts (Actor set here) that holds 10 transactions already.
func benchCredit(b *testing.B, opts ledger.Options) {
	opts.Actor = "a"
	l, err := ledger.New(memory.NewSiblings(), "k", opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := range 10 {
		if _, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("txn-%d", i)), 1); err != nil {
			b.Fatal(err)
		}
	}
	ids := make([]crdt.TxnID, b.N)
	for i := range ids {
		ids[i] = crdt.TxnID(fmt.Sprintf("new-%d", i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := l.Credit(ctx, ids[i], 1); err != nil {
			b.Fatal(err)
		}
	}
}

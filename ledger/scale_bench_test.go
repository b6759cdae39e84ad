package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// scaleStateRetired stores under "k" a state of actors entries, each
// holding a full history and folded record of length history, with
// retired ones behind them (each wrote one transaction and was retired),
// and returns the store and the options to read it with.
func scaleStateRetired(b *testing.B, actors, history, retired int) (*memory.Siblings, tpncounter.Options) {
	b.Helper()
	opts := tpncounter.Options{HistoryLength: history, MaxActors: tpncounter.MaxActorsLimit}
	c, err := tpncounter.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	for a := 0; a < actors; a++ {
		actor := crdt.ActorID(fmt.Sprintf("svc-%04d~abcdefgh", a))
		for t := 0; t < 2*history+1; t++ {
			if _, err := c.Apply(actor, crdt.TxnID(fmt.Sprintf("%08x-%04d-4000-8000-%012d", a, t%10000, t)), 1); errors.Is(err, crdt.ErrTooLarge) {
				b.Skipf("%d actors × %d history cannot be built: %v", actors, history, err)
			} else if err != nil {
				b.Fatal(err)
			}
		}
		if _, err := c.Compact(actor); err != nil {
			b.Fatal(err)
		}
	}
	for a := 0; a < retired; a++ {
		actor := crdt.ActorID(fmt.Sprintf("old-%04d~abcdefgh", a))
		if _, err := c.Apply(actor, crdt.TxnID(fmt.Sprintf("old-%d", a)), 1); err != nil {
			b.Fatal(err)
		}
		if ok, err := c.Retire(actor); !ok || err != nil {
			b.Fatal("retire", ok, err)
		}
	}
	bs, err := c.MarshalBinary()
	if err != nil {
		b.Skipf("%d actors × %d history cannot be built: %v", actors, history, err)
	}
	st := memory.NewSiblings()
	ctx := context.Background()
	_, token, err := st.Fetch(ctx, "k")
	if err != nil {
		b.Fatal(err)
	}
	if err := st.Put(ctx, "k", "builder", bs, token); err != nil {
		b.Skipf("%d actors × %d history (%d bytes) cannot be stored: %v", actors, history, len(bs), err)
	}
	b.ReportMetric(float64(len(bs)), "state-bytes")
	return st, opts
}

// runScale runs op ("credit": new transactions, "resend": one already
// stored, "two-writers": two ledgers crediting in turn, so that each credit
// also reads the other's last change) on a key holding actors full entries
// and retired retired ones.
func runScale(b *testing.B, actors, history, retired int, op string) {
	ctx := context.Background()
	st, opts := scaleStateRetired(b, actors, history, retired)
	writers := 1
	if op == "two-writers" {
		writers = 2
	}
	ls := make([]*ledger.Ledger, writers)
	for i := range ls {
		l, err := ledger.New(st, "k", ledger.Options{Actor: crdt.ActorID(fmt.Sprintf("bench%d", i)), Counter: opts})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("warm%d", i)), 1); err != nil {
			b.Fatal(err)
		}
		ls[i] = l
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		txn := crdt.TxnID(fmt.Sprintf("new-%d", i))
		if op == "resend" {
			txn = "warm0"
		}
		if _, err := ls[i%writers].Credit(ctx, txn, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLedgerScale measures one ledger's credit and idempotent resend
// on a key whose state holds other actors' full entries: cost against
// actors × history. Run: go test ./ledger -run '^$' -bench LedgerScale -cpu 1
func BenchmarkLedgerScale(b *testing.B) {
	for _, actors := range []int{10, 32, 100, 1000} {
		for _, history := range []int{10, 100, 1000} {
			for _, op := range []string{"credit", "two-writers", "resend"} {
				b.Run(fmt.Sprintf("actors=%d/history=%d/%s", actors, history, op), func(b *testing.B) {
					runScale(b, actors, history, 0, op)
				})
			}
		}
	}
}

// BenchmarkLedgerRetired is BenchmarkLedgerScale's 32 actors x 100 history
// with and without 1,000 retired actors behind them, in one run.
// Run: go test ./ledger -run '^$' -bench LedgerRetired -cpu 1
func BenchmarkLedgerRetired(b *testing.B) {
	for _, retired := range []int{0, 1000} {
		for _, op := range []string{"credit", "resend"} {
			b.Run(fmt.Sprintf("retired=%d/%s", retired, op), func(b *testing.B) {
				runScale(b, 32, 100, retired, op)
			})
		}
	}
}

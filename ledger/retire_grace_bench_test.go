package ledger_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// BenchmarkRestartCredit measures one process restart of an account (a new
// Ledger over the memory store) and its credit, after 1,000 or 4,000
// earlier restarts 1/150 of RetireAfter + RetiredGrace apart: with folding
// (the default) and without (RetiredGrace < 0), against an account of its
// own ("fresh"), all in one process. It reports state-bytes, the size of
// the stored state after the op. With folding the cost and the size stay
// those of the restarts within RetireAfter + RetiredGrace, whatever the
// number of restarts; without, they grow with it.
//
// Run: go test -c -o ledger.test ./ledger && taskset -c 1 ./ledger.test
// -test.run '^$' -test.bench 'RestartCredit' -test.benchtime 300x -test.count 5
func BenchmarkRestartCredit(b *testing.B) {
	step := (ledger.DefaultRetireAfter + ledger.DefaultRetiredGrace) / 150
	run := func(b *testing.B, before int, grace time.Duration) {
		ctx := context.Background()
		st := memory.NewSiblings()
		now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
		clock := func() time.Time { return now }
		i := 0
		restart := func() {
			l, err := ledger.New(st, "acct", ledger.Options{Actor: "svc", Clock: clock, RetiredGrace: grace})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := l.Credit(ctx, crdt.TxnID(fmt.Sprint("t", i)), 1); err != nil {
				b.Fatal(err)
			}
			i++
			now = now.Add(step)
		}
		for range before {
			restart()
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			restart()
		}
		b.StopTimer()
		sibs, _, err := st.Fetch(ctx, "acct")
		if err != nil || len(sibs) != 1 {
			b.Fatal(len(sibs), err)
		}
		b.ReportMetric(float64(len(sibs[0])), "state-bytes")
	}
	b.Run("fresh", func(b *testing.B) { run(b, 0, 0) })
	for _, n := range []int{1000, 4000} {
		b.Run(fmt.Sprintf("restarts=%d/fold", n), func(b *testing.B) { run(b, n, 0) })
		b.Run(fmt.Sprintf("restarts=%d/no-fold", n), func(b *testing.B) { run(b, n, -1) })
	}
}

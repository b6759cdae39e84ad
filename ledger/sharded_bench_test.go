package ledger_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// BenchmarkHotAccount measures credits/s on one hot account in the memory
// store: "plain/actors=1" is one actor on one Ledger key, the baseline;
// "plain/actors=32" is 32 concurrent actors (goroutines, each its own
// Ledger, as 32 processes would be) on that one key; "sharded-N/actors=32"
// the same 32 actors on a Sharded account of N sub-keys (each its own
// Sharded). "actors=A/goroutines=32" runs 32 goroutines on A actors, each
// actor one Sharded shared by 32/A goroutines, as A processes serving
// concurrent requests would. Every credit is a new transaction.
// x-vs-1actor is the sub-benchmark's credits/s over the baseline's, and
// x-vs-plain32 a sharded variant's with 32 goroutines over
// plain/actors=32's, both measured earlier in the same run (run them with
// the others: -bench 'HotAccount$'; with -count, each round compares with
// its own baseline). The "history=H" variants lower HistoryLength, which
// shrinks every entry (the retry window is RetryWindow's, kept by the
// records, whatever the history).
//
// After the timed loop, actors/key and B/key describe the plain key or
// sub-key 0: the live actor entries of its merged siblings, and the bytes a
// Fetch of it returns. A credit decodes the entries other actors changed
// since this actor last wrote that key and re-encodes the whole state, so
// its cost follows these two figures.
func BenchmarkHotAccount(b *testing.B) {
	ctx := context.Background()
	var base, plain32 float64
	type mk func(st *memory.Siblings, actor crdt.ActorID) (func(crdt.TxnID) error, error)
	plain := func(h int) mk {
		return func(st *memory.Siblings, actor crdt.ActorID) (func(crdt.TxnID) error, error) {
			l, err := ledger.New(st, "hot", ledger.Options{Actor: actor, Counter: tpncounter.Options{HistoryLength: h}})
			return func(txn crdt.TxnID) error { _, err := l.Credit(ctx, txn, 1); return err }, err
		}
	}
	sharded := func(n, h int) mk {
		return func(st *memory.Siblings, actor crdt.ActorID) (func(crdt.TxnID) error, error) {
			s, err := ledger.NewSharded(st, "hot", n, ledger.Options{Actor: actor, Counter: tpncounter.Options{HistoryLength: h}})
			return func(txn crdt.TxnID) error { _, err := s.Credit(ctx, txn, 1); return err }, err
		}
	}
	// run runs goroutines goroutines (1: a plain loop) crediting through
	// actors writers, goroutine g using writer g mod actors.
	run := func(name string, actors, goroutines, history int, writer mk) {
		b.Run(name, func(b *testing.B) {
			st := memory.NewSiblings()
			credits := make([]func(crdt.TxnID) error, actors)
			for a := range credits {
				var err error
				if credits[a], err = writer(st, crdt.ActorID(fmt.Sprintf("actor-%d", a+1))); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			if goroutines == 1 {
				for i := 0; i < b.N; i++ {
					if err := credits[0](crdt.TxnID(fmt.Sprintf("t%d", i))); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				var next atomic.Int64
				b.SetParallelism(max(1, goroutines/runtime.GOMAXPROCS(0)))
				b.RunParallel(func(pb *testing.PB) {
					g := next.Add(1)
					credit := credits[int(g)%actors]
					for i := 0; pb.Next(); i++ {
						if err := credit(crdt.TxnID(fmt.Sprintf("g%d-t%d", g, i))); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			rate := float64(b.N) / b.Elapsed().Seconds()
			b.StopTimer()
			b.ReportMetric(rate, "credits/s")
			b.ReportMetric(float64(actors), "actors")
			switch {
			case name == "plain/actors=1":
				base = rate // the last, longest run of the baseline counts
			case name == "plain/actors=32":
				plain32 = rate
			case strings.HasPrefix(name, "sharded-") && goroutines == 32 && plain32 > 0:
				b.ReportMetric(rate/plain32, "x-vs-plain32")
			}
			if base > 0 && name != "plain/actors=1" {
				b.ReportMetric(rate/base, "x-vs-1actor")
			}
			key := "hot"
			if strings.HasPrefix(name, "sharded-") {
				key = "hot/0"
			}
			entries, size, err := keyState(ctx, st, key, tpncounter.Options{HistoryLength: history})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(entries), "actors/key")
			b.ReportMetric(float64(size), "B/key")
		})
	}
	h := tpncounter.DefaultHistoryLength
	run("plain/actors=1", 1, 1, h, plain(h))
	run("sharded-8/actors=1", 1, 1, h, sharded(8, h))
	run("plain/actors=32", 32, 32, h, plain(h))
	for _, n := range []int{8, 16, 32} {
		run(fmt.Sprintf("sharded-%d/actors=32", n), 32, 32, h, sharded(n, h))
	}
	for _, n := range []int{8, 32} {
		hn := max(1, h/n)
		run(fmt.Sprintf("sharded-%d/actors=32/history=%d", n, hn), 32, 32, hn, sharded(n, hn))
	}
	for _, a := range []int{1, 4} {
		run(fmt.Sprintf("sharded-8/actors=%d/goroutines=32", a), a, 32, h, sharded(8, h))
	}
}

// keyState returns the live actor entries of key's merged siblings and the
// bytes of its siblings.
func keyState(ctx context.Context, st *memory.Siblings, key string, opts tpncounter.Options) (entries, size int, err error) {
	sibs, _, err := st.Fetch(ctx, key)
	if err != nil {
		return 0, 0, err
	}
	c, err := tpncounter.New(opts)
	if err != nil {
		return 0, 0, err
	}
	for _, v := range sibs {
		size += len(v)
		if err := c.MergeBinary(v); err != nil {
			return 0, 0, err
		}
	}
	return c.Stats().Actors, size, nil
}

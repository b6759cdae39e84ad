package ledger_test

import (
	"context"
	"fmt"
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

// latencyStore delays every Fetch and Put by d before calling the wrapped
// store, as a network round trip would. time.Sleep rounds d up to the
// timer's resolution, so the effective delay is somewhat longer.
type latencyStore struct {
	store.Siblings
	d time.Duration
}

func (s latencyStore) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	time.Sleep(s.d)
	return s.Siblings.Fetch(ctx, key)
}

func (s latencyStore) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	time.Sleep(s.d)
	return s.Siblings.Put(ctx, key, actor, value, token)
}

// BenchmarkGroupCommit measures a hot account: 32 goroutines of one
// process crediting one key through one Ledger (or one Sharded of 8
// sub-keys), over the memory store behind 200 µs of latency per call, so
// that a cycle (Fetch, Put) costs about two round trips. "off" is
// MaxGroup 1, one transaction per write (the behaviour before group
// commit); "on" is the default MaxGroup (16 with the default window);
// "max=32" raises the window to 32 + 32 and MaxGroup to 32. x-vs-off is a
// variant's credits/s over its "off" run measured just before it in the
// same run (run them together: -bench GroupCommit; with -count, each round
// compares with its own), and x-vs-native over the "native" run, a
// stand-in for a store's counter column behind the same latency. Every
// credit is a new transaction; writes/op is the store Puts per credit.
func BenchmarkGroupCommit(b *testing.B) { benchGroupCommit(b, 200*time.Microsecond) }

// BenchmarkGroupCommitNoLatency is BenchmarkGroupCommit on the memory store
// alone: a cycle costs microseconds of CPU, and what grouping saves in
// writes it may spend handing calls between goroutines (MaxGroup 1 keeps a
// plain mutex). Run it with a longer -benchtime than the other.
func BenchmarkGroupCommitNoLatency(b *testing.B) { benchGroupCommit(b, 0) }

func benchGroupCommit(b *testing.B, latency time.Duration) {
	const goroutines = 32
	ctx := context.Background()
	big := tpncounter.Options{HistoryLength: 32, FoldedLength: 32}
	// native stands in for a store's own counter column (Cassandra's
	// counter): one call per increment, no read, nothing serialised, so 32
	// increments are in flight at once. Its rate is the baseline of
	// x-vs-native.
	var native float64
	b.Run("native", func(b *testing.B) {
		var value, next atomic.Int64
		var wg sync.WaitGroup
		b.ResetTimer()
		for range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= int64(b.N) {
					if latency > 0 {
						time.Sleep(latency)
					}
					value.Add(1)
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		if value.Load() != int64(b.N) {
			b.Fatalf("native counted %d of %d", value.Load(), b.N)
		}
		native = float64(b.N) / b.Elapsed().Seconds()
		b.ReportMetric(native, "credits/s")
	})
	for _, target := range []string{"ledger", "sharded-8"} {
		var off float64
		for _, v := range []struct {
			name     string
			maxGroup int
			counter  tpncounter.Options
		}{{"off", 1, tpncounter.Options{}}, {"on", 0, tpncounter.Options{}}, {"max=32", 32, big}} {
			b.Run(target+"/"+v.name, func(b *testing.B) {
				var inner store.Siblings = memory.NewSiblings()
				if latency > 0 {
					inner = latencyStore{inner, latency}
				}
				st := &countingStore{Siblings: inner}
				opts := ledger.Options{Actor: "a", MaxGroup: v.maxGroup, Counter: v.counter}
				var credit func(crdt.TxnID) error
				if target == "ledger" {
					l, err := ledger.New(st, "hot", opts)
					if err != nil {
						b.Fatal(err)
					}
					credit = func(x crdt.TxnID) error { _, err := l.Credit(ctx, x, 1); return err }
				} else {
					s, err := ledger.NewSharded(st, "hot", 8, opts)
					if err != nil {
						b.Fatal(err)
					}
					credit = func(x crdt.TxnID) error { _, err := s.Credit(ctx, x, 1); return err }
				}
				if err := credit("warm-up"); err != nil {
					b.Fatal(err)
				}
				st.puts.Store(0)
				var next atomic.Int64
				var wg sync.WaitGroup
				errs := make(chan error, goroutines)
				b.ReportAllocs()
				b.ResetTimer()
				for g := 0; g < goroutines; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							i := next.Add(1)
							if i > int64(b.N) {
								return
							}
							if err := credit(crdt.TxnID(fmt.Sprintf("g%d-%d", g, i))); err != nil {
								errs <- err
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
				rate := float64(b.N) / b.Elapsed().Seconds()
				b.ReportMetric(rate, "credits/s")
				b.ReportMetric(float64(st.puts.Load())/float64(b.N), "writes/op")
				if v.name == "off" {
					off = rate
				} else if off > 0 {
					b.ReportMetric(rate/off, "x-vs-off")
				}
				if native > 0 {
					b.ReportMetric(rate/native, "x-vs-native")
				}
			})
		}
	}
}

// countingStore counts Puts.
type countingStore struct {
	store.Siblings
	puts atomic.Int64
}

func (s *countingStore) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	s.puts.Add(1)
	return s.Siblings.Put(ctx, key, actor, value, token)
}

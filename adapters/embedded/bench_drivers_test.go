package embedded_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
	bolt "go.etcd.io/bbolt"
)

// recording wrappers keep the bytes of the last write, for the raw side.
type recSiblings struct {
	store.Siblings
	last atomic.Pointer[[]byte]
}

func (r *recSiblings) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, tok store.Token) error {
	v := append([]byte(key+"\x00"), value...)
	r.last.Store(&v)
	return r.Siblings.Put(ctx, key, actor, value, tok)
}

type recPartitions struct {
	store.Partitions
	last atomic.Pointer[[]store.Mutation]
}

func (r *recPartitions) Apply(ctx context.Context, muts []store.Mutation) error {
	r.last.Store(&muts)
	return r.Partitions.Apply(ctx, muts)
}

// driverOps makes, for g goroutines, one operation each of a counter driver
// over st: a ledger credit (one Ledger per goroutine, one account each) or
// a deltalog add (one counter per goroutine).
func driverOps(b *testing.B, driver string, sib store.Siblings, parts store.Partitions, g int) []func(i uint64) error {
	ctx := context.Background()
	ops := make([]func(uint64) error, g)
	for w := range ops {
		switch driver {
		case "ledger-credit":
			l, err := ledger.New(sib, fmt.Sprintf("account-%02d", w), ledger.Options{Actor: crdt.ActorID(fmt.Sprintf("server-%02d", w))})
			if err != nil {
				b.Fatal(err)
			}
			ops[w] = func(i uint64) error {
				_, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("txn-%d-%d", w, i)), 1+int64(i%100))
				return err
			}
		case "deltalog-add":
			c, err := deltalog.New(parts, deltalog.Options{})
			if err != nil {
				b.Fatal(err)
			}
			ops[w] = func(i uint64) error {
				return c.Add(ctx, fmt.Sprintf("views-%02d", w), timeid.New(time.Now()), 1+int64(i%100))
			}
		}
	}
	return ops
}

// BenchmarkDriversVsRaw: durable ledger credits and deltalog adds on the
// embedded store, in phases alternating with raw bbolt puts of the same
// bytes (the last value the driver wrote; raw db.Update with 1 goroutine,
// db.Batch with 32), and the same drivers on the memory store. Metrics:
// embedded-ns/op, raw-ns/op, memory-ns/op, x-raw (the adapter's
// throughput as a fraction of raw), and ops/s of the driver on the
// embedded store.
func BenchmarkDriversVsRaw(b *testing.B) {
	for _, driver := range []string{"ledger-credit", "deltalog-add"} {
		for _, g := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/g%d", driver, g), func(b *testing.B) {
				db, _ := openTemp(b, embedded.Options{})
				sib := &recSiblings{Siblings: db.Siblings()}
				parts := &recPartitions{Partitions: db.Partitions()}
				emb := driverOps(b, driver, sib, parts, g)
				mem := driverOps(b, driver, memory.NewSiblings(), memory.NewPartitions(), g)
				raw := rawBolt(b)
				rawOp := func(i uint64) error {
					fn := func(tx *bolt.Tx) error {
						bk := tx.Bucket([]byte("b"))
						if p := sib.last.Load(); p != nil {
							return bk.Put(fmt.Appendf(nil, "%s-%d", *p, i%64), (*p))
						}
						for j, m := range *parts.last.Load() {
							if err := bk.Put(fmt.Appendf(nil, "%s/%s-%d-%d", m.Partition, m.Key, i, j), m.Value); err != nil {
								return err
							}
						}
						return nil
					}
					if g > 1 {
						return raw.Batch(fn)
					}
					return raw.Update(fn)
				}
				b.ReportAllocs()
				var n atomic.Uint64
				phase := func(ops []func(uint64) error, count int) time.Duration {
					start := time.Now()
					if g == 1 { // inline: a goroutine's wake-up costs more than a memory write
						for range count {
							if err := ops[0](n.Add(1)); err != nil {
								b.Fatal(err)
							}
						}
						return time.Since(start)
					}
					var wg sync.WaitGroup
					var left atomic.Int64
					left.Store(int64(count))
					for w := range g {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for left.Add(-1) >= 0 {
								if err := ops[w](n.Add(1)); err != nil {
									b.Error(err)
									return
								}
							}
						}()
					}
					wg.Wait()
					return time.Since(start)
				}
				rawOps := make([]func(uint64) error, g)
				for w := range rawOps {
					rawOps[w] = rawOp
				}
				phase(emb, g) // the first write of each, so that raw has bytes
				var tE, tR, tM time.Duration
				chunk := 1
				if g > 1 {
					chunk = 2 * g
				}
				for done := 0; done < b.N; done += chunk {
					c := min(chunk, b.N-done)
					tE += phase(emb, c)
					tR += phase(rawOps, c)
					tM += phase(mem, c)
				}
				b.ReportMetric(float64(tE.Nanoseconds())/float64(b.N), "embedded-ns/op")
				b.ReportMetric(float64(tR.Nanoseconds())/float64(b.N), "raw-ns/op")
				b.ReportMetric(float64(tM.Nanoseconds())/float64(b.N), "memory-ns/op")
				b.ReportMetric(float64(tR)/float64(tE), "x-raw")
				b.ReportMetric(float64(b.N)/tE.Seconds(), "embedded-ops/s")
			})
		}
	}
}

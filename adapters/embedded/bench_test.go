package embedded_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/store"
	bolt "go.etcd.io/bbolt"
)

// The benchmarks compare, in one run, the adapter with a raw put of the
// same bytes into the same engine (bbolt, a file beside it: one
// transaction and one fsync per put with db.Update, or bbolt's own group
// commit, db.Batch) and with the memory store, with 1 and 32 goroutines.
// Every embedded write is durable when it returns.
//
//	cd adapters/embedded && go test -run '^$' -bench . -benchtime 3s

const benchValueSize = 200 // about a ledger entry or a log cell

var benchValue = func() []byte {
	v := make([]byte, benchValueSize)
	for i := range v {
		v[i] = byte('a' + i%26)
	}
	return v
}()

// runWriters calls op(i) b.N times in total from g goroutines, i unique.
func runWriters(b *testing.B, g int, op func(i uint64) error) {
	b.ReportAllocs()
	var n atomic.Uint64
	if g == 1 {
		for b.Loop() {
			if err := op(n.Add(1)); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.SetParallelism(max(1, g/runtime.GOMAXPROCS(0)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := op(n.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func rawBolt(b *testing.B) *bolt.DB {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "raw.db"), 0o600, &bolt.Options{FreelistType: bolt.FreelistMapType})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("b")); return err }); err != nil {
		b.Fatal(err)
	}
	return db
}

func rawPut(db *bolt.DB, batch bool, key []byte) error {
	fn := func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put(key, benchValue) }
	if batch {
		return db.Batch(fn)
	}
	return db.Update(fn)
}

func benchKey(i uint64) string { return fmt.Sprintf("acct-%09d", i) }

// BenchmarkSiblingsPut: a Put of a new key (no token), as a ledger's first
// write of an account, against the same bytes put raw.
func BenchmarkSiblingsPut(b *testing.B) {
	ctx := context.Background()
	for _, g := range []int{1, 32} {
		b.Run(fmt.Sprintf("embedded/g%d", g), func(b *testing.B) {
			db, _ := openTemp(b, embedded.Options{})
			s := db.Siblings()
			runWriters(b, g, func(i uint64) error { return s.Put(ctx, benchKey(i), "actor", benchValue, nil) })
		})
		b.Run(fmt.Sprintf("raw-update/g%d", g), func(b *testing.B) {
			db := rawBolt(b)
			runWriters(b, g, func(i uint64) error { return rawPut(db, false, []byte(benchKey(i))) })
		})
		if g > 1 {
			b.Run(fmt.Sprintf("raw-batch/g%d", g), func(b *testing.B) {
				db := rawBolt(b)
				runWriters(b, g, func(i uint64) error { return rawPut(db, true, []byte(benchKey(i))) })
			})
		}
		b.Run(fmt.Sprintf("memory/g%d", g), func(b *testing.B) {
			s := memory.NewSiblings()
			runWriters(b, g, func(i uint64) error { return s.Put(ctx, benchKey(i), "actor", benchValue, nil) })
		})
	}
}

// BenchmarkSiblingsFetchPut: the ledger's write path, a Fetch and a Put
// with its token on one of 1,000 keys, so each key keeps one sibling.
func BenchmarkSiblingsFetchPut(b *testing.B) {
	ctx := context.Background()
	cycle := func(s interface {
		store.Siblings
	}) func(uint64) error {
		return func(i uint64) error {
			k := benchKey(i % 1000)
			_, tok, err := s.Fetch(ctx, k)
			if err != nil {
				return err
			}
			return s.Put(ctx, k, "actor", benchValue, tok)
		}
	}
	for _, g := range []int{1, 32} {
		b.Run(fmt.Sprintf("embedded/g%d", g), func(b *testing.B) {
			db, _ := openTemp(b, embedded.Options{})
			runWriters(b, g, cycle(db.Siblings()))
		})
		b.Run(fmt.Sprintf("memory/g%d", g), func(b *testing.B) {
			runWriters(b, g, cycle(memory.NewSiblings()))
		})
	}
}

// BenchmarkPartitionsApply: a batch of one put (a log cell, a balance
// row) into one of 100 partitions, against the same bytes put raw.
func BenchmarkPartitionsApply(b *testing.B) {
	ctx := context.Background()
	apply := func(p store.Partitions) func(uint64) error {
		return func(i uint64) error {
			return p.Apply(ctx, []store.Mutation{{
				Partition: fmt.Sprintf("part-%03d", i%100), Op: store.OpPut,
				Key: []byte(benchKey(i)), Value: benchValue, Timestamp: tsBase + int64(i),
			}})
		}
	}
	for _, g := range []int{1, 32} {
		b.Run(fmt.Sprintf("embedded/g%d", g), func(b *testing.B) {
			db, _ := openTemp(b, embedded.Options{})
			runWriters(b, g, apply(db.Partitions()))
		})
		b.Run(fmt.Sprintf("raw-update/g%d", g), func(b *testing.B) {
			db := rawBolt(b)
			runWriters(b, g, func(i uint64) error {
				return rawPut(db, false, []byte(fmt.Sprintf("part-%03d", i%100)+benchKey(i)))
			})
		})
		if g > 1 {
			b.Run(fmt.Sprintf("raw-batch/g%d", g), func(b *testing.B) {
				db := rawBolt(b)
				runWriters(b, g, func(i uint64) error {
					return rawPut(db, true, []byte(fmt.Sprintf("part-%03d", i%100)+benchKey(i)))
				})
			})
		}
		b.Run(fmt.Sprintf("memory/g%d", g), func(b *testing.B) {
			runWriters(b, g, apply(memory.NewPartitions()))
		})
	}
}

// BenchmarkVsRaw runs the adapter and the raw engine in alternating
// phases of the same run (the disk's speed drifts: sequential benchmarks
// of fsync-bound writes differ by 2x from one second to the next) and
// reports both latencies and "x-raw", the adapter's throughput as a
// fraction of the raw engine's. The raw side is db.Update with one
// goroutine and db.Batch, bbolt's own group commit, with 32.
func BenchmarkVsRaw(b *testing.B) {
	ctx := context.Background()
	for _, shape := range []string{"siblings", "partitions"} {
		for _, g := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/g%d", shape, g), func(b *testing.B) {
				db, _ := openTemp(b, embedded.Options{})
				raw := rawBolt(b)
				var adapter func(uint64) error
				rawKey := func(i uint64) []byte { return []byte(benchKey(i)) }
				switch shape {
				case "siblings":
					s := db.Siblings()
					adapter = func(i uint64) error { return s.Put(ctx, benchKey(i), "actor", benchValue, nil) }
				case "partitions":
					p := db.Partitions()
					adapter = func(i uint64) error {
						return p.Apply(ctx, []store.Mutation{{Partition: fmt.Sprintf("part-%03d", i%100), Op: store.OpPut,
							Key: []byte(benchKey(i)), Value: benchValue, Timestamp: tsBase + int64(i)}})
					}
					rawKey = func(i uint64) []byte { return []byte(fmt.Sprintf("part-%03d", i%100) + benchKey(i)) }
				}
				rawOp := func(i uint64) error { return rawPut(raw, g > 1, rawKey(i)) }
				b.ReportAllocs()
				var n atomic.Uint64
				var tA, tR time.Duration
				phase := func(op func(uint64) error, ops int) time.Duration { return runPhase(b, g, &n, op, ops) }
				chunk := 1 // one goroutine: alternate every write
				if g > 1 {
					chunk = 2 * g
				}
				for done := 0; done < b.N; done += chunk {
					c := min(chunk, b.N-done)
					tA += phase(adapter, c)
					tR += phase(rawOp, c)
				}
				b.ReportMetric(float64(tA.Nanoseconds())/float64(b.N), "embedded-ns/op")
				b.ReportMetric(float64(tR.Nanoseconds())/float64(b.N), "raw-ns/op")
				b.ReportMetric(float64(tR)/float64(tA), "x-raw")
			})
		}
	}
}

// runPhase runs count calls of op, numbered from n, on g goroutines (inline
// when g is 1, so that no goroutine wake-up is in the figure), and returns
// how long they took. A failed call fails b.
func runPhase(b *testing.B, g int, n *atomic.Uint64, op func(uint64) error, count int) time.Duration {
	start := time.Now()
	if g == 1 {
		for range count {
			if err := op(n.Add(1)); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	var wg sync.WaitGroup
	var left atomic.Int64
	left.Store(int64(count))
	for range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := op(n.Add(1)); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// BenchmarkGroupVsBatch: the adapter's group commit (the baseline, a
// Siblings.Put of a new key, durable when it returns) against the engine's
// own group commit, bbolt's Batch method, with its default MaxBatchDelay
// (10 ms) and a short one (200 µs), with 1, 8 and 32 writers. A batch
// variant opens a data file the adapter made with bbolt itself and does in
// each Batch call what such a Put does in the file: it puts the record the
// adapter would write (the same key and checksummed value, checked against
// the adapter's own record first) into the siblings bucket and rewrites
// the digest record. The three run in alternating phases of one run, as
// BenchmarkVsRaw, since the disk's fsync latency drifts; x-batch… is the
// batch variant's time per write as a multiple of the group commit's.
//
//	cd adapters/embedded && taskset -c 1 go test -run '^$' -bench GroupVsBatch -benchtime 200x
func BenchmarkGroupVsBatch(b *testing.B) {
	ctx := context.Background()
	delays := []struct {
		name  string
		delay time.Duration
	}{
		{"batch10ms", 10 * time.Millisecond}, // bbolt's default
		{"batch200us", 200 * time.Microsecond},
	}
	for _, g := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("g%d", g), func(b *testing.B) {
			b.ReportAllocs()
			var n atomic.Uint64
			db, _ := openTemp(b, embedded.Options{})
			s := db.Siblings()
			names := []string{"group"}
			ops := []func(uint64) error{
				func(k uint64) error { return s.Put(ctx, benchKey(k), "actor", benchValue, nil) },
			}
			for _, d := range delays {
				raw := batchFile(b, d.delay)
				names = append(names, d.name)
				ops = append(ops, func(k uint64) error { return batchPut(raw, benchKey(k)) })
			}
			chunk := 4 * g
			took := make([]time.Duration, len(ops))
			for done := 0; done < b.N; done += chunk {
				c := min(chunk, b.N-done)
				for i, op := range ops {
					took[i] += runPhase(b, g, &n, op, c)
				}
			}
			if err := db.Verify(); err != nil {
				b.Fatal(err)
			}
			for i, name := range names {
				b.ReportMetric(float64(took[i].Nanoseconds())/float64(b.N), name+"-ns/op")
				if i > 0 {
					b.ReportMetric(float64(took[i])/float64(took[0]), "x-"+name)
				}
			}
		})
	}
}

var (
	boltSiblings = []byte("siblings")
	boltMeta     = []byte("meta")
	boltDigest   = []byte("digest")
)

// siblingRecord returns the key and record the adapter writes for a Put
// of value under key as the bucket's dot-th write: the key's length as a
// uvarint, the key and the dot (8 bytes, big-endian); the record is the
// CRC-32C of key and value (4 bytes, big-endian) followed by the value.
func siblingRecord(key string, dot uint64, value []byte) (k, rec []byte) {
	k = binary.AppendUvarint(nil, uint64(len(key)))
	k = append(k, key...)
	k = binary.BigEndian.AppendUint64(k, dot)
	tab := crc32.MakeTable(crc32.Castagnoli)
	rec = binary.BigEndian.AppendUint32(nil, crc32.Update(crc32.Checksum(k, tab), tab, value))
	return k, append(rec, value...)
}

// batchFile makes a data file with the adapter (one Put), closes it, checks
// that siblingRecord gives the record the adapter wrote, and opens the
// file with bbolt, committing Batch calls after delay.
func batchFile(b *testing.B, delay time.Duration) *bolt.DB {
	db, _ := openTemp(b, embedded.Options{})
	if err := db.Siblings().Put(context.Background(), "first", "actor", benchValue, nil); err != nil {
		b.Fatal(err)
	}
	path := db.Path()
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	raw, err := bolt.Open(path, 0o600, &bolt.Options{FreelistType: bolt.FreelistMapType})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { raw.Close() })
	raw.MaxBatchDelay = delay
	err = raw.View(func(tx *bolt.Tx) error {
		k, v := tx.Bucket(boltSiblings).Cursor().First()
		wantK, wantV := siblingRecord("first", 1, benchValue)
		if !bytes.Equal(k, wantK) || !bytes.Equal(v, wantV) {
			return fmt.Errorf("the adapter stored key %x, record %x…; the benchmark writes key %x, record %x…", k, v[:min(8, len(v))], wantK, wantV[:8])
		}
		if tx.Bucket(boltMeta).Get(boltDigest) == nil {
			return fmt.Errorf("no digest record in %s", path)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// batchPut does in one bbolt Batch call what a Siblings.Put of a new key does
// in the file: it takes the bucket's next dot, puts the record under a key
// not taken, and rewrites the digest record.
func batchPut(raw *bolt.DB, key string) error {
	return raw.Batch(func(tx *bolt.Tx) error {
		bk := tx.Bucket(boltSiblings)
		dot, err := bk.NextSequence()
		if err != nil {
			return err
		}
		k, rec := siblingRecord(key, dot, benchValue)
		if got, _ := bk.Cursor().Seek(k); bytes.Equal(got, k) {
			return fmt.Errorf("key %x is taken", k)
		}
		if err := bk.Put(k, rec); err != nil {
			return err
		}
		meta := tx.Bucket(boltMeta)
		return meta.Put(boltDigest, bytes.Clone(meta.Get(boltDigest)))
	})
}

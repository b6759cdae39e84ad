package ledger_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
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

// windowRecords is the number of transactions BenchmarkCreditWindow puts
// inside the retry window of each of its busy accounts:
// COUNTERKIT_WINDOW_RECORDS if set (a smaller build for profiling in
// seconds; the reported rows use the default), else 1,000,000.
var windowRecords = rsEnv("COUNTERKIT_WINDOW_RECORDS", 1_000_000)

// windowWriters is the number of writers (Ledger or Sharded values) of
// each busy account.
const windowWriters = 32

// creditFunc credits amount 1 under txn and returns the outcome.
type creditFunc func(ctx context.Context, txn crdt.TxnID) (tpncounter.Outcome, error)

// busyAccount is an account with windowWriters writers, each with its
// history, and windowRecords transactions inside the retry window.
type busyAccount struct {
	st      *callCounter
	writers []creditFunc
}

// windowFixture holds BenchmarkCreditWindow's busy accounts, built once per
// process and shared by every run, so that every sub-benchmark, the
// baselines included, runs with the same heap.
var windowFixture struct {
	once sync.Once
	// plain: 32 Ledgers on one key; plainH1 the same with HistoryLength
	// 1; plainNR and plainH1NR those two with RetireAfter negative (the
	// writers never look for entries to retire); sharded: 32 Sharded
	// values of 8 sub-keys.
	plain, plainH1, plainNR, plainH1NR, sharded busyAccount
	err                                         error
}

// recordArena is a store.Siblings that keeps transaction records
// (ledger.IsRecordKey) in memory the garbage collector does not scan (a
// map of fixed-size keys to offsets into large byte chunks) and every
// other key in a memory.Siblings. A million records in the benchmark's own
// heap then cost the collector next to nothing, as records kept by a
// store's server cost its clients nothing; kept as a million values of a
// memory.Siblings, they make each collection mark millions of objects, a
// cost that lands on whichever sub-benchmark allocates when it runs.
//
// It serves writers that read before they write, one at a time, as the
// ledger's sequential credits do: a record holds at most one value, and a
// Put of a record must carry the token of the Fetch that read the key (nil
// when it was absent). Any other Put of a record is refused (wrapping
// crdt.ErrUnavailable) rather than kept as a sibling.
type recordArena struct {
	mem *memory.Siblings

	mu     sync.Mutex
	slots  map[[recordHashLen]byte]arenaSlot
	chunks [][]byte
	dot    uint64
}

// recordHashLen is the length of a record key after its fixed prefix.
const recordHashLen = 32

// arenaChunk is the size of the arena's chunks.
const arenaChunk = 64 << 10

type arenaSlot struct {
	chunk, off, n uint32
	dot           uint64
}

func newRecordArena() *recordArena {
	return &recordArena{mem: memory.NewSiblings(), slots: map[[recordHashLen]byte]arenaSlot{}}
}

// arenaKey returns the arena's key of a record key.
func arenaKey(key string) (k [recordHashLen]byte, ok bool) {
	if !ledger.IsRecordKey(key) {
		return k, false
	}
	prefix := len(ledger.RecordKey("a", "b")) - recordHashLen
	if len(key) != prefix+recordHashLen {
		return k, false
	}
	copy(k[:], key[prefix:])
	return k, true
}

func (a *recordArena) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	k, ok := arenaKey(key)
	if !ok {
		return a.mem.Fetch(ctx, key)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	sl, ok := a.slots[k]
	if !ok {
		return nil, nil, nil
	}
	v := a.chunks[sl.chunk][sl.off : sl.off+sl.n : sl.off+sl.n]
	return [][]byte{v}, binary.AppendUvarint([]byte{'a'}, sl.dot), nil
}

func (a *recordArena) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	k, ok := arenaKey(key)
	if !ok {
		return a.mem.Put(ctx, key, actor, value, token)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := actor.Validate(); err != nil {
		return err
	}
	if len(value) == 0 || len(value) > arenaChunk {
		return fmt.Errorf("record arena: value of %d bytes: %w", len(value), crdt.ErrTooLarge)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	sl, held := a.slots[k]
	switch {
	case !held && len(token) != 0, held && !bytes.Equal(token, binary.AppendUvarint([]byte{'a'}, sl.dot)):
		return fmt.Errorf("record arena: a Put of %q that does not replace exactly what it read: %w", key, crdt.ErrUnavailable)
	}
	last := len(a.chunks) - 1
	if last < 0 || len(a.chunks[last])+len(value) > arenaChunk {
		a.chunks = append(a.chunks, make([]byte, 0, arenaChunk))
		last++
	}
	off := len(a.chunks[last])
	a.chunks[last] = append(a.chunks[last], value...)
	a.dot++
	a.slots[k] = arenaSlot{chunk: uint32(last), off: uint32(off), n: uint32(len(value)), dot: a.dot}
	return nil
}

// putWindowRecords writes n transaction records for account straight into
// mem, as the ledger writes them, by writers of the account, inside the
// retry window.
func putWindowRecords(mem store.Siblings, account string, n int) error {
	ctx := context.Background()
	now := time.Now()
	for i := range n {
		txn := crdt.TxnID(fmt.Sprintf("old-%08d", i))
		w := crdt.ActorID(fmt.Sprintf("w%02d~earlier0", i%windowWriters))
		b, err := ledger.Record{Txn: txn, Amount: 1, Writer: w, At: now, Version: 1}.MarshalBinary()
		if err != nil {
			return err
		}
		if err := mem.Put(ctx, ledger.RecordKey(account, txn), w, b, nil); err != nil {
			return err
		}
	}
	return nil
}

// buildBusy builds a busy account: the records, then writers made by mk,
// which credit perWriter transactions each, in turn, so that each holds a
// history and has read every other's.
func buildBusy(account string, perWriter int, mk func(st store.Siblings, actor crdt.ActorID) (creditFunc, error)) (busyAccount, error) {
	mem := newRecordArena()
	if err := putWindowRecords(mem, account, windowRecords); err != nil {
		return busyAccount{}, err
	}
	a := busyAccount{st: &callCounter{Siblings: mem}}
	for w := range windowWriters {
		c, err := mk(a.st, crdt.ActorID(fmt.Sprintf("writer-%02d", w)))
		if err != nil {
			return busyAccount{}, err
		}
		a.writers = append(a.writers, c)
	}
	ctx := context.Background()
	for i := range perWriter {
		for w, c := range a.writers {
			if _, err := c(ctx, crdt.TxnID(fmt.Sprintf("pre-%02d-%04d", w, i))); err != nil {
				return busyAccount{}, err
			}
		}
	}
	return a, nil
}

func plainWriter(account string, opts ledger.Options) func(store.Siblings, crdt.ActorID) (creditFunc, error) {
	return func(st store.Siblings, actor crdt.ActorID) (creditFunc, error) {
		opts.Actor = actor
		l, err := ledger.New(st, account, opts)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, txn crdt.TxnID) (tpncounter.Outcome, error) {
			res, err := l.Credit(ctx, txn, 1)
			return res.Outcome, err
		}, nil
	}
}

func shardedWriter(account string, n int, opts ledger.Options) func(store.Siblings, crdt.ActorID) (creditFunc, error) {
	return func(st store.Siblings, actor crdt.ActorID) (creditFunc, error) {
		opts.Actor = actor
		s, err := ledger.NewSharded(st, account, n, opts)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, txn crdt.TxnID) (tpncounter.Outcome, error) {
			res, err := s.Credit(ctx, txn, 1)
			return res.Outcome, err
		}, nil
	}
}

func buildWindowFixture() {
	// The build allocates much and frees little: collect once at the end.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer runtime.GC()
	f := &windowFixture
	h := ledger.Options{Counter: tpncounter.Options{HistoryLength: 1}}
	// 30 credits each fill a plain writer's history and folded record
	// (10 + 10 by default); 8 × 30 do it on each of 8 sub-keys.
	if f.plain, f.err = buildBusy("busy", 30, plainWriter("busy", ledger.Options{})); f.err != nil {
		return
	}
	if f.plainH1, f.err = buildBusy("busy-h1", 30, plainWriter("busy-h1", h)); f.err != nil {
		return
	}
	if f.plainNR, f.err = buildBusy("busy-nr", 30, plainWriter("busy-nr", ledger.Options{RetireAfter: -1})); f.err != nil {
		return
	}
	h.RetireAfter = -1
	if f.plainH1NR, f.err = buildBusy("busy-h1-nr", 30, plainWriter("busy-h1-nr", h)); f.err != nil {
		return
	}
	f.sharded, f.err = buildBusy("busy-s", 8*30, shardedWriter("busy-s", 8, ledger.Options{}))
}

// windowRun numbers the runs of BenchmarkCreditWindow's sub-benchmarks, so
// that every run credits transactions of its own.
var windowRun atomic.Int64

// windowIDs returns n new transaction ids, of one width.
func windowIDs(n int) []crdt.TxnID {
	run := windowRun.Add(1)
	ids := make([]crdt.TxnID, n)
	for i := range ids {
		ids[i] = crdt.TxnID(fmt.Sprintf("r%04d-%09d", run, i))
	}
	return ids
}

// BenchmarkCreditWindow measures a credit of a new transaction over the
// memory store against the size of the retry window and the number of
// writers. The account's cost should not depend on either.
//
//   - native: the stand-in for a store's native counter, an atomic int64
//     written with one blind Put of its 8 bytes per increment.
//   - fresh: an account with one writer, new at the start of the run.
//   - window=1M/writers=32/…: an account with 1,000,000 transactions in
//     the retry window (their records) and 32 writers (Ledger values),
//     each with its history and each having read the others'. "one" has
//     writer 0 credit; "turns" has the 32 credit in turn, so that each
//     credit also merges the 31 entries changed since the writer's last.
//     "history=1/…" is such an account whose writers use
//     Counter.HistoryLength 1, "retire=off/…" one whose writers use
//     RetireAfter -1 (they never look for idle entries to retire, a pass
//     over every live entry on each write otherwise).
//   - …/sharded-8/turns: the same with 32 Sharded values of 8 sub-keys.
//
// Besides time and allocations, each reports cpu-ns/op, the process's CPU
// time per credit (garbage collection included; on a shared machine it
// varies less than ns/op, which counts waiting for the CPU), the store
// calls, bytes written and bytes read per credit (counted by a wrapping
// store), and x-vs-fresh, x-vs-native, cpu-x-vs-fresh and
// cpu-x-vs-native: its ns/op and cpu-ns/op over fresh's and native's,
// measured earlier in the same process. -count repeats each sub-benchmark
// in a row, so that every row's ratios are against the last row of native
// and fresh; separate processes pair each round with its own baselines. Records are
// kept in a recordArena, which the garbage collector does not scan. The busy accounts are
// built once per process (5,000,000 records: minutes on a loaded machine;
// COUNTERKIT_WINDOW_RECORDS=10000 builds them in seconds, for a profile)
// before the first sub-benchmark.
//
// Run: go test -c -o ledger.test ./ledger && cd ledger && for i in 1 2 3 4 5 6; do
// taskset -c 1 ../ledger.test -test.run '^$' -test.bench 'CreditWindow$'; done
func BenchmarkCreditWindow(b *testing.B) {
	windowFixture.once.Do(buildWindowFixture)
	if windowFixture.err != nil {
		b.Fatal(windowFixture.err)
	}
	ctx := context.Background()
	// Baselines of this round: wall and CPU ns per op of native and fresh.
	var native, fresh, nativeCPU, freshCPU float64
	// start marks the start of a timed loop; report ends it (the timer
	// must be stopped) and reports the metrics, returning the wall and
	// CPU ns per op.
	type mark struct {
		c   cost
		cpu time.Duration
		ok  bool
	}
	start := func(st *callCounter) mark {
		cpu, ok := processCPU()
		return mark{c: st.snapshot(), cpu: cpu, ok: ok}
	}
	report := func(b *testing.B, st *callCounter, m mark) (ns, cpuNs float64) {
		n := float64(b.N)
		ns = float64(b.Elapsed().Nanoseconds()) / n
		if cpu, ok := processCPU(); ok && m.ok {
			cpuNs = float64(cpu-m.cpu) / n
			b.ReportMetric(cpuNs, "cpu-ns/op")
		}
		c := st.since(m.c, b.N)
		b.ReportMetric(float64(c.Calls())/n, "calls/op")
		b.ReportMetric(float64(c.Written)/n, "written-B/op")
		b.ReportMetric(float64(c.Read)/n, "read-B/op")
		if fresh > 0 {
			b.ReportMetric(ns/fresh, "x-vs-fresh")
		}
		if freshCPU > 0 && cpuNs > 0 {
			b.ReportMetric(cpuNs/freshCPU, "cpu-x-vs-fresh")
		}
		if native > 0 {
			b.ReportMetric(ns/native, "x-vs-native")
		}
		if nativeCPU > 0 && cpuNs > 0 {
			b.ReportMetric(cpuNs/nativeCPU, "cpu-x-vs-native")
		}
		return ns, cpuNs
	}
	b.Run("native", func(b *testing.B) {
		st := &callCounter{Siblings: newRecordArena()}
		var counter atomic.Int64
		// The memory store numbers its values 1, 2, …: the k-th Put
		// supersedes value k-1 (its token names it), as a blind
		// overwrite of one cell would.
		var token store.Token
		b.ReportAllocs()
		b.ResetTimer()
		m := start(st)
		for i := range b.N {
			v := make([]byte, 8)
			binary.BigEndian.PutUint64(v, uint64(counter.Add(1)))
			if err := st.Put(ctx, "native", "n", v, token); err != nil {
				b.Fatal(err)
			}
			token = binary.AppendUvarint(append(token[:0], 'm'), uint64(i+1))
		}
		b.StopTimer()
		native, nativeCPU = 0, 0 // not against an earlier round's
		native, nativeCPU = report(b, st, m)
		vals, _, err := st.Fetch(ctx, "native")
		if err != nil || len(vals) != 1 || binary.BigEndian.Uint64(vals[0]) != uint64(b.N) {
			b.Fatalf("native counter holds %d values, err %v; want one of %d", len(vals), err, b.N)
		}
	})
	run := func(name string, st *callCounter, writers []creditFunc) {
		b.Run(name, func(b *testing.B) {
			ids := windowIDs(b.N)
			// The profile of a run (-cpuprofile) tells the sub-benchmarks
			// apart by this label: go tool pprof -tagfocus sub=<name>.
			pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("sub", name)))
			b.ReportAllocs()
			b.ResetTimer()
			m := start(st)
			for i := range b.N {
				out, err := writers[i%len(writers)](ctx, ids[i])
				if err != nil {
					b.Fatal(err)
				}
				if out != tpncounter.Applied {
					b.Fatalf("new transaction %q: %v", ids[i], out)
				}
			}
			b.StopTimer()
			report(b, st, m)
		})
	}
	b.Run("fresh", func(b *testing.B) {
		// A new account for each run (run below cannot make one per run).
		st := &callCounter{Siblings: newRecordArena()}
		c, err := plainWriter(fmt.Sprintf("fresh-%d", windowRun.Load()), ledger.Options{})(st, "writer-00")
		if err != nil {
			b.Fatal(err)
		}
		ids := windowIDs(b.N)
		pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("sub", "fresh")))
		b.ReportAllocs()
		b.ResetTimer()
		m := start(st)
		for i := range b.N {
			if out, err := c(ctx, ids[i]); err != nil || out != tpncounter.Applied {
				b.Fatalf("new transaction %q: %v %v", ids[i], out, err)
			}
		}
		b.StopTimer()
		fresh, freshCPU = 0, 0 // not against an earlier round's
		fresh, freshCPU = report(b, st, m)
	})
	f := &windowFixture
	run("window=1M/writers=32/one", f.plain.st, f.plain.writers[:1])
	run("window=1M/writers=32/turns", f.plain.st, f.plain.writers)
	run("window=1M/writers=32/history=1/one", f.plainH1.st, f.plainH1.writers[:1])
	run("window=1M/writers=32/history=1/turns", f.plainH1.st, f.plainH1.writers)
	run("window=1M/writers=32/retire=off/one", f.plainNR.st, f.plainNR.writers[:1])
	run("window=1M/writers=32/retire=off/turns", f.plainNR.st, f.plainNR.writers)
	run("window=1M/writers=32/history=1/retire=off/one", f.plainH1NR.st, f.plainH1NR.writers[:1])
	run("window=1M/writers=32/history=1/retire=off/turns", f.plainH1NR.st, f.plainH1NR.writers)
	run("window=1M/writers=32/sharded-8/turns", f.sharded.st, f.sharded.writers)
}

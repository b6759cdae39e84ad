package balance_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
)

// txnBench is an account a benchmark credits: its store, clock and
// writers, and the transactions already applied.
type txnBench struct {
	st      *counting
	c       *testClock
	writers []*balance.Transactions
	n       int
	// merged is the time spent in merges; calls, read and written are
	// the store calls and bytes of merges.
	merged               time.Duration
	calls, read, written int64
}

// Each credit advances the clock by txnStep, and every mergeEvery credits
// the account is merged (records, sums, settles, collects), outside the
// benchmark's timer: merges are reported apart, per credit.
const (
	txnStep    = 10 * time.Millisecond
	mergeEvery = 512
)

func newTxnBench(tb testing.TB, writers int) *txnBench {
	f := &txnBench{st: &counting{mem: memory.NewPartitions()}, c: newTestClock()}
	for range writers {
		f.writers = append(f.writers, newTxns(tb, f.st, f.c))
	}
	return f
}

// credit applies the next transaction on writer i; every mergeEvery
// credits it merges the account, with b's timer stopped (b may be nil).
func (f *txnBench) credit(ctx context.Context, b *testing.B, i int) error {
	f.n++
	f.c.Add(txnStep)
	out, err := f.writers[i%len(f.writers)].Apply(ctx, acct, crdt.TxnID(fmt.Sprintf("txn-%09d", f.n)), 1)
	if err == nil && out != balance.Applied {
		err = fmt.Errorf("a new transaction was %v", out)
	}
	if err == nil && f.n%mergeEvery == 0 {
		if b != nil {
			b.StopTimer()
		}
		calls, read, written := f.st.calls(), f.st.bytesRead.Load(), f.st.bytesWritten.Load()
		start := time.Now()
		_, err = f.writers[0].Merge(ctx, acct)
		f.merged += time.Since(start)
		f.calls += f.st.calls() - calls
		f.read += f.st.bytesRead.Load() - read
		f.written += f.st.bytesWritten.Load() - written
		if b != nil {
			b.StartTimer()
		}
	}
	return err
}

var windowBench struct {
	once sync.Once
	f    *txnBench
	err  error
}

// BenchmarkTransactionsApply compares a credit on a fresh account with one
// on an account holding 1,000,000 recorded transactions inside
// RetryWindow (built once, about 20 s), credited by 32 writers in turn.
// Each reports store calls and bytes per credit and its time against
// fresh's in the same run (x-vs-fresh), and apart the merges' time, calls
// and bytes per credit (merge-*):
//
//	taskset -c 1 go test -run '^$' -bench BenchmarkTransactionsApply -benchtime 20000x ./balance
func BenchmarkTransactionsApply(b *testing.B) {
	ctx := context.Background()
	var fresh float64
	run := func(b *testing.B, f *txnBench, writers int) float64 {
		b.ReportAllocs()
		calls, read, written := f.st.calls(), f.st.bytesRead.Load(), f.st.bytesWritten.Load()
		merged, mCalls, mRead, mWritten := f.merged, f.calls, f.read, f.written
		b.ResetTimer()
		for i := range b.N {
			if err := f.credit(ctx, b, i%writers); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		n := float64(b.N)
		mCalls, mRead, mWritten = f.calls-mCalls, f.read-mRead, f.written-mWritten
		b.ReportMetric(float64(f.st.calls()-calls-mCalls)/n, "calls/op")
		b.ReportMetric(float64(f.st.bytesRead.Load()-read-mRead)/n, "read-B/op")
		b.ReportMetric(float64(f.st.bytesWritten.Load()-written-mWritten)/n, "written-B/op")
		b.ReportMetric(float64((f.merged-merged).Nanoseconds())/n, "merge-ns/op")
		b.ReportMetric(float64(mCalls)/n, "merge-calls/op")
		b.ReportMetric(float64(mRead+mWritten)/n, "merge-B/op")
		ns := float64(b.Elapsed().Nanoseconds()) / n
		if fresh > 0 {
			b.ReportMetric(ns/fresh, "x-vs-fresh")
		}
		return ns
	}
	b.Run("fresh", func(b *testing.B) {
		fresh = 0
		fresh = run(b, newTxnBench(b, 1), 1)
	})
	b.Run("window=1M/writers=32", func(b *testing.B) {
		windowBench.once.Do(func() {
			f := newTxnBench(b, 32)
			for i := 0; i < benchWindowIDs && windowBench.err == nil; i++ {
				windowBench.err = f.credit(ctx, nil, i)
			}
			windowBench.f = f
		})
		if windowBench.err != nil {
			b.Fatal(windowBench.err)
		}
		f := windowBench.f
		if got := f.n; got < benchWindowIDs || time.Duration(got)*txnStep > f.writers[0].Options().RetryWindow {
			b.Fatalf("%d transactions over %v: not 1,000,000 inside the window", got, time.Duration(got)*txnStep)
		}
		run(b, f, 32)
	})
}

// benchWindowIDs is how many transactions the window benchmark's account
// holds.
var benchWindowIDs = 1_000_000

// BenchmarkTransactionsMerge times the merges of an account credited 100
// times a second of its clock and merged every mergeEvery credits, once
// its rows have reached their steady state (SettleGrace and two merge
// intervals of credits): each op is one merge, after mergeEvery credits
// outside the timer. credit-ns is its time per credit it follows.
//
//	taskset -c 1 go test -run '^$' -bench BenchmarkTransactionsMerge -benchtime 40x ./balance
func BenchmarkTransactionsMerge(b *testing.B) {
	ctx := context.Background()
	f := newTxnBench(b, 1)
	for range 40 * mergeEvery { // 205 s of credits, merged as they go
		if err := f.credit(ctx, nil, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for range mergeEvery - 1 {
			if err := f.credit(ctx, nil, 0); err != nil {
				b.Fatal(err)
			}
		}
		f.n++
		f.c.Add(txnStep)
		if _, err := f.writers[0].Apply(ctx, acct, crdt.TxnID(fmt.Sprintf("txn-%09d", f.n)), 1); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := f.writers[0].Merge(ctx, acct); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*mergeEvery), "credit-ns")
}

package balance_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// What creditCostCheck allows between a new credit on a fresh account and
// one on an account with a full window: store calls, and bytes read and
// written, per credit. A record lookup reads the first row at or after
// the transaction's place in its record partition (a Scan has no end):
// on a busy account that is another transaction's record, on a fresh one,
// whose record partitions are empty until its first merge, often nothing;
// so a busy account's credit may read one record row (89 bytes) more.
const (
	costCallsSlack = 0.05
	costBytesSlack = 8.0
	costReadSlack  = 100.0
)

// costCredits is how many new credits creditCostCheck measures on each
// account, and costWriters how many writers credit the busy one.
const (
	costCredits = 2_000
	costWriters = 32
	costRetries = 64
)

// errCostGrows is what creditCostCheck's error wraps when a cost differs,
// so that a test can tell it from a failed call.
var errCostGrows = errors.New("a credit costs more on the busy account")

// costWindowIDs is how many transactions the busy account holds inside
// RetryWindow before it is measured: 20,000, or 1,000,000 with
// COUNTERKIT_CASES set.
func costWindowIDs() int {
	if os.Getenv("COUNTERKIT_CASES") != "" {
		return 1_000_000
	}
	return 20_000
}

// creditCost is the store calls and bytes per operation that one run of
// operations cost, merges not included.
type creditCost struct {
	n                    int
	calls, read, written float64
}

func (c creditCost) String() string {
	return fmt.Sprintf("%.3f calls, %.1f bytes read, %.1f bytes written per op (%d ops)", c.calls, c.read, c.written, c.n)
}

// costBench is txnBench with its writers over wrap(st) (nil: st), so that
// the count sees what a store wrapper under the writers does.
func costBench(tb testing.TB, writers int, wrap func(store.Partitions) store.Partitions) *txnBench {
	f := &txnBench{st: &counting{mem: memory.NewPartitions()}, c: newTestClock()}
	var st store.Partitions = f.st
	if wrap != nil {
		st = wrap(f.st)
	}
	for range writers {
		f.writers = append(f.writers, newTxns(tb, st, f.c))
	}
	return f
}

// measure runs op n times and returns its cost per op, less what the
// merges op ran cost (f.calls, f.read, f.written count those).
func measure(f *txnBench, n int, op func() error) (creditCost, error) {
	calls, read, written := f.st.calls(), f.st.bytesRead.Load(), f.st.bytesWritten.Load()
	mCalls, mRead, mWritten := f.calls, f.read, f.written
	for range n {
		if err := op(); err != nil {
			return creditCost{}, err
		}
	}
	k := float64(n)
	return creditCost{
		n:       n,
		calls:   float64(f.st.calls()-calls-(f.calls-mCalls)) / k,
		read:    float64(f.st.bytesRead.Load()-read-(f.read-mRead)) / k,
		written: float64(f.st.bytesWritten.Load()-written-(f.written-mWritten)) / k,
	}, nil
}

// creditsEvery returns an op that makes the next new credit (amount 1, a
// fresh id) on f's writers in turn, the clock advancing by step before
// it, and merges every mergeEvery credits as f.credit does.
func creditsEvery(ctx context.Context, f *txnBench, step time.Duration) func() error {
	return func() error {
		f.c.Add(step - txnStep) // f.credit adds txnStep
		return f.credit(ctx, nil, f.n)
	}
}

// differs returns a line naming each figure of b more than the slack away
// from a's.
func differs(a, b creditCost, what string) []string {
	var out []string
	if math.Abs(b.calls-a.calls) > costCallsSlack {
		out = append(out, fmt.Sprintf("%s: %.3f calls per op, not within %.2f of %.3f", what, b.calls, costCallsSlack, a.calls))
	}
	if math.Abs(b.read-a.read) > costReadSlack {
		out = append(out, fmt.Sprintf("%s: %.1f bytes read per op, not within %.0f of %.1f", what, b.read, costReadSlack, a.read))
	}
	if math.Abs(b.written-a.written) > costBytesSlack {
		out = append(out, fmt.Sprintf("%s: %.1f bytes written per op, not within %.0f of %.1f", what, b.written, costBytesSlack, a.written))
	}
	return out
}

// creditCostCheck measures what a new credit costs the store (calls, bytes
// read, bytes written; merges, which are maintenance, apart) on two
// accounts of Transactions over wrap(a counted memory store):
//
//   - fresh: a new account with one writer;
//   - busy: an account credited by costWriters writers in turn, windowIDs
//     transactions 10 ms apart (inside RetryWindow), merged every
//     mergeEvery credits as BenchmarkTransactionsApply's is.
//
// It then makes costCredits new credits on each (on busy by its writers
// in turn) and returns an error wrapping errCostGrows unless busy's
// calls, bytes written and bytes read per credit are within
// costCallsSlack, costBytesSlack and costReadSlack of fresh's, and unless a retry of one
// of busy's first transactions costs no more than a retry of one its last
// merge recorded. A Transactions reads its account's layout marker about
// once a second of its clock, so each of busy's writers sees its clock
// advance 10 ms between its credits, as fresh's one writer does: busy's
// clock advances 10 ms / costWriters a credit while it is measured.
func creditCostCheck(tb testing.TB, wrap func(store.Partitions) store.Partitions, windowIDs int) error {
	tb.Helper()
	ctx := context.Background()

	fresh := costBench(tb, 1, wrap)
	a, err := measure(fresh, costCredits, creditsEvery(ctx, fresh, txnStep))
	if err != nil {
		return fmt.Errorf("fresh account: %w", err)
	}

	busy := costBench(tb, costWriters, wrap)
	start := time.Now()
	for i := range windowIDs {
		if err := busy.credit(ctx, nil, i); err != nil {
			return fmt.Errorf("busy account, credit %d: %w", i+1, err)
		}
	}
	if window := busy.writers[0].Options().RetryWindow; time.Duration(busy.n)*txnStep >= window {
		return fmt.Errorf("busy account: %d transactions over %v, not inside RetryWindow (%v)", busy.n, time.Duration(busy.n)*txnStep, window)
	}
	built := time.Since(start)
	b, err := measure(busy, costCredits, creditsEvery(ctx, busy, txnStep/costWriters))
	if err != nil {
		return fmt.Errorf("busy account: %w", err)
	}

	// Retries, on one writer with the clock standing still (its layout
	// check trusted throughout, after the first), of the first
	// transactions and of the last ones the last merge recorded.
	tx := busy.writers[0]
	if _, err := tx.Recorded(ctx, acct, "txn-000000001"); err != nil {
		return fmt.Errorf("busy account: %w", err)
	}
	lastMerged := busy.n / mergeEvery * mergeEvery
	var bad error
	retry := func(n int) func() error {
		i := 0
		return func() error {
			i++
			txn := crdt.TxnID(fmt.Sprintf("txn-%09d", n+i))
			out, err := tx.Apply(ctx, acct, txn, 1)
			if err == nil && out != balance.Duplicate {
				bad = errors.Join(bad, fmt.Errorf("busy account: a retry of %s was %v, not Duplicate", txn, out))
			}
			return err
		}
	}
	early, err := measure(busy, costRetries, retry(0))
	if err != nil {
		return fmt.Errorf("busy account, early retries: %w", err)
	}
	recent, err := measure(busy, costRetries, retry(lastMerged-costRetries))
	if err != nil {
		return fmt.Errorf("busy account, recent retries: %w", err)
	}
	if bad != nil {
		return bad
	}

	tb.Logf("fresh, 1 writer:                  %v", a)
	tb.Logf("busy, %d writers, %d in window: %v (built in %v, merges %.3f calls, %.0f bytes per credit)",
		costWriters, windowIDs, b, built.Round(time.Millisecond), float64(busy.calls)/float64(busy.n), float64(busy.read+busy.written)/float64(busy.n))
	tb.Logf("busy, retries of txn 1..%d:        %v", costRetries, early)
	tb.Logf("busy, retries of txn %d..%d: %v", lastMerged-costRetries+1, lastMerged, recent)

	why := differs(a, b, "new credit on the busy account vs the fresh one")
	if early.calls > recent.calls {
		why = append(why, fmt.Sprintf("a retry of an early transaction makes %.3f calls, more than a recent one's %.3f", early.calls, recent.calls))
	}
	if early.read > recent.read+costBytesSlack {
		why = append(why, fmt.Sprintf("a retry of an early transaction reads %.1f bytes, more than a recent one's %.1f + %.0f", early.read, recent.read, costBytesSlack))
	}
	if early.written > recent.written+costBytesSlack {
		why = append(why, fmt.Sprintf("a retry of an early transaction writes %.1f bytes, more than a recent one's %.1f + %.0f", early.written, recent.written, costBytesSlack))
	}
	if len(why) > 0 {
		return fmt.Errorf("%w:\n\t%s\n\tfresh: %v\n\tbusy:  %v\n\tretries, early: %v\n\tretries, recent: %v",
			errCostGrows, strings.Join(why, "\n\t"), a, b, early, recent)
	}
	return nil
}

// TestTransactionsCreditCostFlat checks Transactions' promise that a
// credit reads one record and writes one row whatever the account's rate,
// writers and history (SPEC.md 9.4): a new credit on an account that 32
// writers have filled with 20,000 transactions inside RetryWindow
// (1,000,000 with COUNTERKIT_CASES set) costs the store the same calls
// and bytes written as one on a fresh account with one writer, and reads
// at most one record row more (costReadSlack), and a retry of an old transaction costs no more than one of
// a recent one. Merges are not counted.
func TestTransactionsCreditCostFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("24,000 credits and 45 merges: not with -short")
	}
	if err := creditCostCheck(t, nil, costWindowIDs()); err != nil {
		t.Fatal(err)
	}
}

// TestTransactionsCreditCostFlatCatchesGrowth checks that
// creditCostCheck notices a credit whose cost grows with the account:
// with a store whose Scan reads on to the partition's end after the
// caller has stopped (so the record lookup reads the whole record
// partition), and with one that reads the whole row partition before each
// write into it, the check returns its error.
func TestTransactionsCreditCostFlatCatchesGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("twice 24,000 credits and 45 merges: not with -short")
	}
	for _, v := range []struct {
		name string
		wrap func(store.Partitions) store.Partitions
	}{
		{"scan reads to the partition's end", func(st store.Partitions) store.Partitions { return scanToEnd{st} }},
		{"each write reads its row partition", func(st store.Partitions) store.Partitions { return readBeforeWrite{st} }},
	} {
		t.Run(v.name, func(t *testing.T) {
			err := creditCostCheck(t, v.wrap, costWindowIDs())
			if !errors.Is(err, errCostGrows) {
				t.Fatalf("the check returned %v, not an error wrapping %q", err, errCostGrows)
			}
			t.Logf("the check: %v", err)
		})
	}
}

// scanToEnd is a store whose Scan, once fn has returned false, goes on
// reading to the partition's end (the rows read, not given to fn).
type scanToEnd struct{ store.Partitions }

func (s scanToEnd) Scan(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	more := true
	return s.Partitions.Scan(ctx, partition, from, level, func(r store.Row) bool {
		if more {
			more = fn(r)
		}
		return true
	})
}

// readBeforeWrite is a store that, before each batch, reads every row
// partition the batch writes ("<account>#<i>").
type readBeforeWrite struct{ store.Partitions }

func (s readBeforeWrite) Apply(ctx context.Context, muts []store.Mutation) error {
	seen := map[string]bool{}
	for _, m := range muts {
		_, i, ok := strings.Cut(m.Partition, "#")
		if !ok || seen[m.Partition] || strings.Trim(i, "0123456789") != "" {
			continue
		}
		seen[m.Partition] = true
		if _, err := s.Partitions.Snapshot(ctx, m.Partition, math.MaxInt, store.ReadAny); err != nil {
			return err
		}
	}
	return s.Partitions.Apply(ctx, muts)
}

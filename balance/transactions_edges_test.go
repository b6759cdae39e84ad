package balance_test

// Transactions' stated guarantees at their edges: each test names the
// sentence it checks.

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

// skewedClock reads a shared real time plus a fixed offset.
type skewedClock struct {
	real *testClock
	off  time.Duration
}

func (s skewedClock) Now() time.Time { return s.real.Now().Add(s.off) }

func skewedTxns(t *testing.T, st store.Partitions, real *testClock, off time.Duration, edit func(*balance.TxnOptions)) *balance.Transactions {
	t.Helper()
	o := balance.TxnOptions{Options: balance.Options{Clock: skewedClock{real, off}.Now}}
	if edit != nil {
		edit(&o)
	}
	tx, err := balance.NewTransactions(st, o)
	require.NoError(t, err)
	return tx
}

// SPEC.md 9.4 "What is promised": "A retry made within RetryWindow of the
// acknowledgement of the merge's records of the transaction is a duplicate
// and counts nothing", with 9.3's "the clocks of the processes writing one
// account agree within FutureSkew". README: "a retry within RetryWindow
// (24 h) of the merge that recorded the transaction ... count[s] once".
//
// The merge that records x runs at several places in its record window
// (its start, middle, last µs, FutureSkew before its end), the merger's and
// the retrier's clocks differ by FutureSkew either way, a busy account is
// merged (and its records expired) every hour and at the retry's instant,
// and x is retried RetryWindow − 1 µs after its records (acknowledged at
// once) by the other clock: always a duplicate, the balance exact.
func TestTxnRetryAtRetryWindowEdgeWithSkew(t *testing.T) {
	ctx := context.Background()
	const rw = 24 * time.Hour
	const fs = 5 * time.Second
	day := t0.Truncate(rw).Add(10 * rw) // a window boundary
	for _, at := range []time.Duration{0, time.Microsecond, rw / 2, rw - fs, rw - time.Microsecond} {
		for _, skew := range [][2]time.Duration{{0, 0}, {fs / 2, -fs / 2}, {-fs / 2, fs / 2}, {fs, 0}, {0, fs}} {
			t.Run(fmt.Sprintf("at=%v/merger%+v/retrier%+v", at, skew[0], skew[1]), func(t *testing.T) {
				real := &testClock{t: day.Add(at - 3*time.Second)}
				mem := memory.NewPartitions()
				merger := skewedTxns(t, mem, real, skew[0], nil)
				writer := skewedTxns(t, mem, real, skew[1], nil)
				out, err := writer.Apply(ctx, acct, "x", 7)
				require.NoError(t, err)
				require.Equal(t, balance.Applied, out)
				real.Set(day.Add(at))
				recorded := real.Now()
				_, err = merger.Merge(ctx, acct)
				require.NoError(t, err)
				want := int64(7)
				for i := 1; time.Duration(i)*time.Hour < rw; i++ {
					real.Set(recorded.Add(time.Duration(i) * time.Hour))
					_, err := writer.Apply(ctx, acct, crdt.TxnID(fmt.Sprint("other-", i)), 1)
					require.NoError(t, err)
					want++
					_, err = merger.Merge(ctx, acct)
					require.NoError(t, err)
				}
				real.Set(recorded.Add(rw - time.Microsecond))
				_, err = merger.Merge(ctx, acct)
				require.NoError(t, err)
				out, err = writer.Apply(ctx, acct, "x", 7)
				require.NoError(t, err)
				require.Equal(t, balance.Duplicate, out, "retry RetryWindow − 1µs after x's records")
				got, err := merger.Balance(ctx, acct)
				require.NoError(t, err)
				require.Equal(t, want, got)
			})
		}
	}
}

// SPEC.md 9.4 Apply step 2 and TxnOptions.TxnTime's doc: with TxnTime, an
// id not recorded whose time is more than RetryWindow old or more than
// FutureSkew ahead is refused (crdt.ErrOutsideWindow), an id without a
// time is crdt.ErrInvalidTxnID; README "Bad input changes nothing". Edges:
// exactly RetryWindow old and exactly FutureSkew ahead are accepted; one
// µs beyond is refused and writes nothing; a recorded id is a duplicate
// whatever its time.
func TestTxnTimeEdges(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	times := map[crdt.TxnID]time.Time{}
	mem := memory.NewPartitions()
	o := txnOpts(c)
	o.TxnTime = func(id crdt.TxnID) (time.Time, bool) { at, ok := times[id]; return at, ok }
	tx, err := balance.NewTransactions(mem, o)
	require.NoError(t, err)
	rw, fs := tx.Options().RetryWindow, tx.Options().FutureSkew
	now := c.Now()
	times["old"], times["older"] = now.Add(-rw), now.Add(-rw-time.Microsecond)
	times["ahead"], times["further"] = now.Add(fs), now.Add(fs+time.Microsecond)
	times["ancient"], times["far"] = time.Unix(0, 0), now.Add(100*365*24*time.Hour)
	for id, want := range map[crdt.TxnID]error{"old": nil, "ahead": nil, "older": crdt.ErrOutsideWindow,
		"further": crdt.ErrOutsideWindow, "ancient": crdt.ErrOutsideWindow, "far": crdt.ErrOutsideWindow, "untimed": crdt.ErrInvalidTxnID} {
		out, err := tx.Apply(ctx, acct, id, 10)
		if want == nil {
			require.NoError(t, err, id)
			require.Equal(t, balance.Applied, out, id)
		} else {
			require.ErrorIs(t, err, want, id)
		}
	}
	require.Equal(t, int64(20), balanceOf(t, tx))
	c.Add(time.Second)
	mustMerge(t, tx)
	// Recorded: a duplicate although "old" is now more than RetryWindow old.
	for _, id := range []crdt.TxnID{"old", "ahead"} {
		out, err := tx.Apply(ctx, acct, id, 10)
		require.NoError(t, err)
		require.Equal(t, balance.Duplicate, out, id)
	}
	require.Equal(t, int64(20), balanceOf(t, tx))
}

// failNth fails the nth write (Apply) of the wrapped store after (lost
// acknowledgement) or instead of (refused) applying it.
type failNth struct {
	store.Partitions
	n, seen atomic.Int64
	landed  bool
}

var errInjected = fmt.Errorf("%w: injected", crdt.ErrAmbiguousWrite)

func (f *failNth) Apply(ctx context.Context, muts []store.Mutation) error {
	if f.seen.Add(1) == f.n.Load() {
		if f.landed {
			_ = f.Partitions.Apply(ctx, muts)
		}
		return errInjected
	}
	return f.Partitions.Apply(ctx, muts)
}

// Transactions.Merge's doc: "A crash between any two steps leaves the
// balance and the records correct: a transaction is recorded only once
// its row is stored, and summed only once recorded"; README "Exactly once
// ... crashes between protocol steps". Every write of a merge (records,
// tombstones, sum, settle/remove, expiry) fails, landed or not, in turn;
// x is retried right after, merges resume, and x is retried again: x
// counts once and its late retry is a duplicate.
func TestTxnMergeFailsAtEveryWrite(t *testing.T) {
	ctx := context.Background()
	for _, landed := range []bool{false, true} {
		for k := int64(1); k <= 12; k++ {
			t.Run(fmt.Sprintf("landed=%v/write%d", landed, k), func(t *testing.T) {
				c := newTestClock()
				st := &failNth{Partitions: memory.NewPartitions(), landed: landed}
				tx := newTxns(t, st, c)
				mustApply(t, tx, "x", 7, balance.Applied)
				mustApply(t, tx, "y", 1, balance.Applied)
				st.seen.Store(0)
				st.n.Store(k)
				for range 4 { // the failing write is one of these merges'
					c.Add(31 * time.Second)
					_, _ = tx.Merge(ctx, acct)
					out, err := tx.Apply(ctx, acct, "x", 7)
					if err != nil {
						require.ErrorIs(t, err, errInjected)
					} else {
						require.Contains(t, []balance.Outcome{balance.Applied, balance.Duplicate}, out)
					}
				}
				st.n.Store(0)
				for range 4 {
					c.Add(time.Minute)
					mustMerge(t, tx)
				}
				c.Add(20 * time.Hour)
				mustMerge(t, tx)
				mustApply(t, tx, "x", 7, balance.Duplicate)
				require.Equal(t, int64(8), balanceOf(t, tx))
			})
		}
	}
}

// SPEC.md 9.2's consequence and README "concurrent merges and GCs": two
// merges of one account interleaved at their worst point (B runs whole
// after A read every partition and wrote its records, before A's
// tombstones; then again after A's sum) count each credit once, and a
// retry after both is a duplicate.
func TestTxnMergesInterleaved(t *testing.T) {
	ctx := context.Background()
	for _, at := range []string{"records", "sum"} {
		t.Run(at, func(t *testing.T) {
			c := newTestClock()
			mem := memory.NewPartitions()
			var b *balance.Transactions
			var inB atomic.Bool
			fired := false
			hook := func(ctx context.Context, call faulty.Call, after bool) error {
				if !after || call.Method != faulty.MethodApply || inB.Load() || fired {
					return nil
				}
				isRecord := strings.Contains(call.Key, "#txn.")
				isSum := false
				for _, m := range call.Batch {
					if _, k, err := balance.DecodeTxnRowKey(m.Key); err == nil && k.Kind == balance.KindSum {
						isSum = true
					}
				}
				if (at == "records" && isRecord) || (at == "sum" && isSum) {
					fired = true
					inB.Store(true)
					defer inB.Store(false)
					_, err := b.Merge(ctx, acct)
					return err
				}
				return nil
			}
			st := faulty.NewPartitions(mem, faulty.Options{Hook: hook})
			a := newTxns(t, st, c)
			b = newTxns(t, st, c)
			want := int64(0)
			for i := range 40 {
				mustApply(t, a, crdt.TxnID(fmt.Sprint("t-", i)), int64(i+1), balance.Applied)
				want += int64(i + 1)
			}
			c.Add(time.Second)
			_, err := a.Merge(ctx, acct)
			require.NoError(t, err)
			require.True(t, fired)
			require.Equal(t, want, balanceOf(t, a))
			for range 3 {
				c.Add(time.Minute + time.Second)
				mustMerge(t, a)
			}
			for i := range 40 {
				mustApply(t, b, crdt.TxnID(fmt.Sprint("t-", i)), int64(i+1), balance.Duplicate)
			}
			require.Equal(t, want, balanceOf(t, b))
		})
	}
}

// TxnOptions.Partitions' doc: "It is part of the account's layout (with
// RecordShards and RetryWindow): the account's first Apply records it, and
// a Transactions with another layout is refused (crdt.ErrInvalidConfig)".
// A second deployment with another Partitions, RecordShards or RetryWindow
// is refused by every method, and writes nothing.
func TestTxnLayoutChangeRefusedByEveryMethod(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	mem := memory.NewPartitions()
	first := newTxns(t, mem, c)
	mustApply(t, first, "x", 7, balance.Applied)
	for name, edit := range map[string]func(*balance.TxnOptions){
		"fewer partitions": func(o *balance.TxnOptions) { o.Partitions = 8 },
		"more partitions":  func(o *balance.TxnOptions) { o.Partitions = 32 },
		"record shards":    func(o *balance.TxnOptions) { o.RecordShards = 17 },
		"retry window":     func(o *balance.TxnOptions) { o.RetryWindow = 12 * time.Hour },
	} {
		t.Run(name, func(t *testing.T) {
			w := &countWrites{Partitions: mem}
			other := skewedTxns(t, w, c, 0, edit)
			_, err := other.Apply(ctx, acct, "y", 1)
			require.ErrorIs(t, err, crdt.ErrInvalidConfig)
			_, err = other.Apply(ctx, acct, "x", 7)
			require.ErrorIs(t, err, crdt.ErrInvalidConfig)
			_, err = other.Recorded(ctx, acct, "x")
			require.ErrorIs(t, err, crdt.ErrInvalidConfig)
			_, err = other.Balance(ctx, acct)
			require.ErrorIs(t, err, crdt.ErrInvalidConfig)
			_, err = other.Conflicts(ctx, acct)
			require.ErrorIs(t, err, crdt.ErrInvalidConfig)
			_, err = other.Merge(ctx, acct)
			require.ErrorIs(t, err, crdt.ErrInvalidConfig)
			require.ErrorIs(t, other.Delete(ctx, acct), crdt.ErrInvalidConfig)
			require.Zero(t, w.n.Load(), "a refused Transactions wrote")
		})
	}
	require.Equal(t, int64(7), balanceOf(t, first))
}

// README: "a retry on any ... within RetryWindow"; records are per
// account (SPEC.md 9.4 "Records"): one transaction id credited to two
// accounts is two credits, each retried once recognised on its own
// account.
func TestTxnSameIDOnTwoAccounts(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	tx := newTxns(t, memory.NewPartitions(), c)
	for _, a := range []string{"alice", "bob"} {
		out, err := tx.Apply(ctx, a, "pay", 5)
		require.NoError(t, err)
		require.Equal(t, balance.Applied, out)
	}
	c.Add(time.Second)
	_, err := tx.Merge(ctx, "alice")
	require.NoError(t, err)
	out, err := tx.Apply(ctx, "alice", "pay", 5)
	require.NoError(t, err)
	require.Equal(t, balance.Duplicate, out)
	out, err = tx.Apply(ctx, "bob", "pay", 5) // bob not merged: the same row again
	require.NoError(t, err)
	require.Equal(t, balance.Applied, out)
	_, err = tx.Apply(ctx, "alice", "pay", 6)
	require.ErrorIs(t, err, crdt.ErrConflictingTransaction)
	for _, a := range []string{"alice", "bob"} {
		v, err := tx.Balance(ctx, a)
		require.NoError(t, err)
		require.Equal(t, int64(5), v, a)
	}
}

// README "A hot account": "run Merge every few seconds; its capacity, and
// the backlog a paused merger leaves, are in SPEC.md 9.4"; SPEC.md 9.4
// "What is promised" for retries before any merge recorded them ("writes
// the same row again ... and counts nothing"). The merger pauses 3 hours
// while credits and their retries (each answered Applied) go on; it
// resumes; every retry after is a duplicate and the balance exact.
func TestTxnPausedMergerBacklog(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	tx := newTxns(t, memory.NewPartitions(), c)
	want := int64(0)
	for i := range 360 { // one credit every 30 s, each retried 10 min later
		id := crdt.TxnID(fmt.Sprint("p-", i))
		mustApply(t, tx, id, 3, balance.Applied)
		want += 3
		if i >= 20 {
			mustApply(t, tx, crdt.TxnID(fmt.Sprint("p-", i-20)), 3, balance.Applied)
		}
		c.Add(30 * time.Second)
	}
	require.Equal(t, want, balanceOf(t, tx))
	for range 5 {
		mustMerge(t, tx)
		require.Equal(t, want, balanceOf(t, tx))
		c.Add(40 * time.Second)
	}
	for i := range 360 {
		out, err := tx.Apply(ctx, acct, crdt.TxnID(fmt.Sprint("p-", i)), 3)
		require.NoError(t, err)
		require.Equal(t, balance.Duplicate, out)
	}
	require.Equal(t, want, balanceOf(t, tx))
}

// README "Guarantees": "Bad input changes nothing": an invalid account, a
// '#' in it, an oversized one, an invalid id, a zero amount are refused
// with their sentinel, and nothing is written; math.MinInt64 and
// math.MaxInt64 are amounts like any other.
func TestTxnBadInputWritesNothing(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	mem := &countWrites{Partitions: memory.NewPartitions()}
	tx := newTxns(t, mem, c)
	for _, tc := range []struct {
		account string
		txn     crdt.TxnID
		amount  int64
		want    error
	}{
		{"", "x", 1, crdt.ErrInvalidKey},
		{"a#0", "x", 1, crdt.ErrInvalidKey},
		{strings.Repeat("a", balance.MaxTxnAccountLen+1), "x", 1, crdt.ErrInvalidKey},
		{acct, "", 1, crdt.ErrInvalidTxnID},
		{acct, crdt.TxnID(strings.Repeat("x", 300)), 1, crdt.ErrInvalidTxnID},
		{acct, "x", 0, crdt.ErrInvalidAmount},
	} {
		_, err := tx.Apply(ctx, tc.account, tc.txn, tc.amount)
		require.ErrorIs(t, err, tc.want, "%q %q %d", tc.account, tc.txn, tc.amount)
	}
	require.Zero(t, mem.n.Load(), "a refused Apply wrote")
	long := strings.Repeat("a", balance.MaxTxnAccountLen)
	for _, a := range []int64{-1 << 63, 1<<63 - 1} {
		out, err := tx.Apply(ctx, long, crdt.TxnID(fmt.Sprint("edge", a)), a)
		require.NoError(t, err)
		require.Equal(t, balance.Applied, out)
	}
	c.Add(time.Second)
	_, err := tx.Merge(ctx, long)
	require.NoError(t, err)
	v, err := tx.Balance(ctx, long)
	require.NoError(t, err)
	require.Equal(t, int64(-1), v)
}

// countWrites counts the writes (Apply calls) of the wrapped store.
type countWrites struct {
	store.Partitions
	n atomic.Int64
}

func (c *countWrites) Apply(ctx context.Context, muts []store.Mutation) error {
	c.n.Add(1)
	return c.Partitions.Apply(ctx, muts)
}

package balance_test

import (
	"context"
	"errors"

	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
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

// testClock is a settable testClock for Transactions' options.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
func (c *testClock) Set(t time.Time)     { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func newTestClock() *testClock           { return &testClock{t: t0} }
func txnOpts(c *testClock) balance.TxnOptions {
	return balance.TxnOptions{Options: balance.Options{Clock: c.Now}}
}

func newTxns(t testing.TB, st store.Partitions, c *testClock) *balance.Transactions {
	t.Helper()
	tx, err := balance.NewTransactions(st, txnOpts(c))
	require.NoError(t, err)
	return tx
}

func mustApply(t testing.TB, tx *balance.Transactions, txn crdt.TxnID, amount int64, want balance.Outcome) {
	t.Helper()
	got, err := tx.Apply(context.Background(), acct, txn, amount)
	require.NoError(t, err, "apply %s", txn)
	require.Equal(t, want, got, "apply %s", txn)
}

func mustMerge(t testing.TB, tx *balance.Transactions) []balance.MergeReport {
	t.Helper()
	reps, err := tx.Merge(context.Background(), acct)
	require.NoError(t, err)
	return reps
}

// deleted returns the rows reps' settling deleted.
func deleted(reps []balance.MergeReport) []balance.Row {
	var out []balance.Row
	for _, r := range reps {
		out = append(out, r.Deleted...)
	}
	return out
}

func balanceOf(t testing.TB, tx *balance.Transactions) int64 {
	t.Helper()
	v, err := tx.Balance(context.Background(), acct)
	require.NoError(t, err)
	return v
}

// Every retry inside RetryWindow of the merge that recorded the transaction
// is recognised, whatever merges (settling, collection, expiry of old
// records) and other transactions run between; the first retry after the
// window and the expiry of its records counts again (SPEC.md 9.4, the
// limit for untimed ids).
func TestTransactionsRetryWindow(t *testing.T) {
	c := newTestClock()
	tx := newTxns(t, memory.NewPartitions(), c)
	retries, err := retriesRecognised(c, tx)
	require.NoError(t, err)
	require.Greater(t, retries, 80)

	// Past the window, once a merge has expired x's record partition, x
	// counts again: an untimed id's limit.
	before := balanceOf(t, tx)
	c.Add(4*tx.Options().RetryWindow + 3*tx.Options().FutureSkew)
	mustMerge(t, tx)
	recorded, err := tx.Recorded(context.Background(), acct, "x")
	require.NoError(t, err)
	require.Empty(t, recorded, "x's record outlived its expiry")
	mustApply(t, tx, "x", 7, balance.Applied)
	require.Equal(t, before+7, balanceOf(t, tx))
}

// retriesRecognised applies x (7) twice, merges, then across RetryWindow
// (every 17 minutes, and its last microseconds) applies another
// transaction, merges and retries x. It returns the retries made and the
// first that was not a duplicate or left the balance wrong.
func retriesRecognised(c *testClock, tx *balance.Transactions) (int, error) {
	ctx := context.Background()
	apply := func(txn crdt.TxnID, want balance.Outcome) error {
		got, err := tx.Apply(ctx, acct, txn, 7)
		if err == nil && got != want {
			err = fmt.Errorf("%s: %v, want %v", txn, got, want)
		}
		return err
	}
	for _, want := range []balance.Outcome{balance.Applied, balance.Applied} { // not recorded yet: the same row
		if err := apply("x", want); err != nil {
			return 0, err
		}
	}
	c.Add(time.Second)
	marked := c.Now() // the merge records x at its clock
	if _, err := tx.Merge(ctx, acct); err != nil {
		return 0, err
	}
	var times []time.Time
	for d := time.Duration(0); d < tx.Options().RetryWindow; d += 17 * time.Minute {
		times = append(times, marked.Add(d))
	}
	times = append(times, marked.Add(tx.Options().RetryWindow-time.Second), marked.Add(tx.Options().RetryWindow-time.Microsecond))
	for i, at := range times {
		c.Set(at)
		if err := apply(crdt.TxnID(fmt.Sprintf("other-%d", i)), balance.Applied); err != nil {
			return i, err
		}
		if _, err := tx.Merge(ctx, acct); err != nil {
			return i, err
		}
		if err := apply("x", balance.Duplicate); err != nil {
			return i, fmt.Errorf("%v after x was recorded: %w", at.Sub(marked), err)
		}
		if got, err := tx.Balance(ctx, acct); err != nil || got != int64(7*(i+2)) {
			return i, fmt.Errorf("%v after x was recorded: balance %d (%v), want %d", at.Sub(marked), got, err, 7*(i+2))
		}
	}
	return len(times), nil
}

// Copies of one transaction applied by many writers that cannot see each
// other are one row: it counts once, and every later retry on any writer
// is a duplicate.
func TestTransactionsTwins(t *testing.T) {
	c := newTestClock()
	st := memory.NewPartitions()
	const writers = 32
	txs := make([]*balance.Transactions, writers)
	for i := range txs {
		txs[i] = newTxns(t, st, c)
	}
	var wg sync.WaitGroup
	for i, tx := range txs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, txn := range []crdt.TxnID{"x", crdt.TxnID(fmt.Sprintf("y%d", i))} {
				if _, err := tx.Apply(context.Background(), acct, txn, 5); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	want := int64(5 + writers*5)
	require.Equal(t, want, balanceOf(t, txs[0]))
	c.Add(time.Second)
	mustMerge(t, txs[3])
	for i, tx := range txs {
		mustApply(t, tx, "x", 5, balance.Duplicate)
		mustApply(t, tx, crdt.TxnID(fmt.Sprintf("y%d", (i+1)%writers)), 5, balance.Duplicate)
	}
	c.Add(2 * time.Minute) // past SettleGrace: settled, rows and tombstones gone
	mustMerge(t, txs[0])
	require.Equal(t, want, balanceOf(t, txs[0]))
	mustApply(t, txs[7], "x", 5, balance.Duplicate)
}

// heldRow holds the next write of a row partition (not a record
// partition) once hold is set, as a write that is slow to land.
func heldRow(inner store.Partitions) (*faulty.Partitions, *atomic.Bool) {
	var hold atomic.Bool
	p := faulty.NewPartitions(inner, faulty.Options{Policy: func(call faulty.Call) faulty.Fault {
		rows := slices.ContainsFunc(call.Batch, func(m store.Mutation) bool { return !strings.Contains(m.Partition, "#txn.") })
		if call.Method == faulty.MethodApply && rows && hold.CompareAndSwap(true, false) {
			return faulty.Hold
		}
		return faulty.Pass
	}})
	return p, &hold
}

// A row sent within Deadline of its record read, and landing as late as
// the timing assumptions allow (SafetyMargin − 2·FutureSkew after it was
// sent), lands while the merge's tombstone still stands: it counts
// nothing, and settling deletes it with the tombstone. One landing even
// later is older than the settling's delete of its key, which shadows it.
func TestTransactionsLateRowAtTheBound(t *testing.T) {
	for _, afterSettle := range []bool{false, true} {
		t.Run(fmt.Sprintf("after settling %v", afterSettle), func(t *testing.T) {
			c := newTestClock()
			st, hold := heldRow(memory.NewPartitions())
			a, b := newTxns(t, st, c), newTxns(t, st, c)
			o := a.Options()
			hold.Store(true)
			_, err := a.Apply(context.Background(), acct, "x", 7) // read at t0, row in flight
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			mustApply(t, b, "x", 7, balance.Applied)
			mustMerge(t, b) // records x, then its tombstone
			recorded, err := b.Recorded(context.Background(), acct, "x")
			require.NoError(t, err)
			require.Equal(t, []int64{7}, recorded)
			latest := t0.Add(o.Deadline + o.SafetyMargin - 2*o.FutureSkew)
			settle := t0.Add(o.SettleGrace + time.Microsecond)
			require.True(t, latest.Before(settle), "the bound leaves no room")
			if !afterSettle {
				c.Set(latest)
				require.NoError(t, st.Deliver(0))
				require.EqualValues(t, 7, balanceOf(t, b))
			}
			c.Set(settle)
			require.NotEmpty(t, deleted(mustMerge(t, b)), "nothing settled")
			if afterSettle {
				require.NoError(t, st.Deliver(0))
			}
			require.EqualValues(t, 7, balanceOf(t, b))
		})
	}
}

// A writer that stalls between reading x's record (absent) and writing its
// row, while another writer applies x and merges record, sum and settle
// it, finds its Deadline passed, reads the record again and answers
// duplicate: x counts once.
func TestTransactionsStalledWriter(t *testing.T) {
	outcome, bal, err := stalledWriter()
	require.NoError(t, err)
	require.Equal(t, balance.Duplicate, outcome)
	require.EqualValues(t, 7, bal)
}

// stalledWriter runs TestTransactionsStalledWriter's schedule and returns
// the stalled call's outcome and the balance.
func stalledWriter() (balance.Outcome, int64, error) {
	ctx := context.Background()
	c := newTestClock()
	inner := memory.NewPartitions()
	st := faulty.NewPartitions(inner, faulty.Options{})
	a, err := balance.NewTransactions(st, txnOpts(c))
	if err != nil {
		return 0, 0, err
	}
	b, err := balance.NewTransactions(inner, txnOpts(c))
	if err != nil {
		return 0, 0, err
	}
	scans := 0
	var inHook error
	st.SetHook(func(_ context.Context, call faulty.Call, after bool) error {
		if !after || call.Method != faulty.MethodScan {
			return nil
		}
		if scans++; scans != 1 { // after the first lookup
			return nil
		}
		if _, err := b.Apply(ctx, acct, "x", 7); err != nil {
			inHook = err
		}
		c.Add(time.Second)
		if _, err := b.Merge(ctx, acct); err != nil {
			inHook = err
		}
		c.Add(b.Options().SettleGrace + time.Second)
		if reps, err := b.Merge(ctx, acct); err != nil || len(deleted(reps)) == 0 {
			inHook = fmt.Errorf("settling: %+v %w", reps, err)
		}
		return nil
	})
	outcome, err := a.Apply(ctx, acct, "x", 7)
	if err = errors.Join(inHook, err); err != nil {
		return 0, 0, err
	}
	bal, err := a.Balance(ctx, acct)
	return outcome, bal, err
}

// A call that reaches its write more than Deadline after reading the
// record reads it again; three late tries fail with ErrUnavailable and
// write nothing.
func TestTransactionsDeadline(t *testing.T) {
	for _, late := range []int{1, 3} {
		t.Run(fmt.Sprintf("late %d times", late), func(t *testing.T) {
			c := newTestClock()
			var scans atomic.Int32
			st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
			tx := newTxns(t, st, c)
			st.SetHook(func(_ context.Context, call faulty.Call, after bool) error {
				// After its lookup, the call stalls past Deadline
				// before its write.
				if after && call.Method == faulty.MethodScan && int(scans.Add(1)) <= late {
					c.Add(tx.Options().Deadline + time.Microsecond)
				}
				return nil
			})
			got, err := tx.Apply(context.Background(), acct, "x", 7)
			if late == 3 {
				require.ErrorIs(t, err, crdt.ErrUnavailable)
				require.Zero(t, balanceOf(t, tx))
				return
			}
			require.NoError(t, err)
			require.Equal(t, balance.Applied, got)
			require.EqualValues(t, late+1, scans.Load(), "each try reads the record again")
			require.EqualValues(t, 7, balanceOf(t, tx))
		})
	}
}

// Bad input is refused before anything is stored.
func TestTransactionsRefuses(t *testing.T) {
	c := newTestClock()
	st := memory.NewPartitions()
	tx := newTxns(t, st, c)
	ctx := context.Background()
	mustApply(t, tx, "x", 7, balance.Applied)
	mustApply(t, tx, "d", -7, balance.Applied)
	c.Add(time.Second)
	mustMerge(t, tx)
	mustApply(t, tx, "d", -7, balance.Duplicate) // a debit's record is found too
	before, err := st.Snapshot(ctx, acct, 1000, store.ReadAny)
	require.NoError(t, err)
	for _, tc := range []struct {
		account string
		txn     crdt.TxnID
		amount  int64
		want    error
	}{
		{"", "y", 1, crdt.ErrInvalidKey},
		{strings.Repeat("a", balance.MaxTxnAccountLen+1), "y", 1, crdt.ErrInvalidKey},
		{"a\x00b", "y", 1, crdt.ErrInvalidKey},
		{"a#txn.19783.7", "y", 1, crdt.ErrInvalidKey}, // would be a's records
		{"a#0", "y", 1, crdt.ErrInvalidKey},           // would be a's rows
		{acct, "", 1, crdt.ErrInvalidTxnID},
		{acct, "y\n", 1, crdt.ErrInvalidTxnID},
		{acct, "y", 0, crdt.ErrInvalidAmount},
		{acct, "x", 8, crdt.ErrConflictingTransaction},
		{acct, "x", -7, crdt.ErrConflictingTransaction},
	} {
		_, err := tx.Apply(ctx, tc.account, tc.txn, tc.amount)
		require.ErrorIs(t, err, tc.want, "%q %q %d", tc.account, tc.txn, tc.amount)
	}
	after, err := st.Snapshot(ctx, acct, 1000, store.ReadAny)
	require.NoError(t, err)
	require.Equal(t, before, after)
	_, err = tx.Apply(ctx, strings.Repeat("a", balance.MaxTxnAccountLen), "y", 1)
	require.NoError(t, err, "the longest account is accepted")

	for _, o := range []balance.TxnOptions{
		{Deadline: time.Minute}, // SettleGrace 1 min < Deadline + SafetyMargin
		{Options: balance.Options{SettleGrace: 40 * time.Second}, Deadline: 11 * time.Second},
		{Deadline: -time.Second},
		{RetryWindow: 30 * time.Second},
		{RetryWindow: 24*time.Hour + time.Nanosecond},
		{RetryWindow: balance.MaxRetryWindow + time.Microsecond},
		{RecordShards: 257},
		{RecordShards: -1},
		{Partitions: 65},
		{Partitions: -1},
		{Options: balance.Options{Window: -1}},
	} {
		_, err := balance.NewTransactions(st, o)
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "%+v", o)
	}
	_, err = balance.NewTransactions(st, balance.TxnOptions{Options: balance.Options{SettleGrace: 40 * time.Second}, Deadline: 10 * time.Second})
	require.NoError(t, err, "SettleGrace = Deadline + SafetyMargin is enough")
}

// A transaction's row id is a function of the transaction alone, in a
// range no update Accounts.Add accepts.
func TestTxnRowID(t *testing.T) {
	require.Equal(t, balance.TxnRowID("pay-0"), balance.TxnRowID("pay-0"))
	// Computed apart from the code, by SPEC.md 9.4's steps (in Python:
	// hashlib.sha256, then the version 1 layout of RFC 4122).
	require.Equal(t, "29e2c20e-9b5d-10dc-8364-51a5e95cb3ff", balance.TxnRowID("pay-0").String())
	seen := map[balance.ID]bool{}
	for i := range 10_000 {
		id := balance.TxnRowID(crdt.TxnID(fmt.Sprint(i)))
		require.NoError(t, id.Validate())
		require.True(t, balance.IsTxnRowID(id))
		require.False(t, seen[id])
		seen[id] = true
	}
	require.False(t, balance.IsTxnRowID(id(0, 1)))
	ac, err := balance.New(memory.NewPartitions(), balance.Options{Clock: newTestClock().Now})
	require.NoError(t, err)
	err = ac.Add(context.Background(), acct, balance.TxnRowID("pay-0"), 1)
	require.ErrorIs(t, err, crdt.ErrOutsideWindow)
}

// An account's rows spread over its RowPartitions by row id; each
// partition is merged on its own and the balance is their exact sum.
func TestTransactionsPartitions(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	st := memory.NewPartitions()
	one, err := balance.NewTransactions(st, balance.TxnOptions{Options: balance.Options{Clock: c.Now}, Partitions: 1})
	require.NoError(t, err)
	require.Equal(t, []string{acct + "#0"}, one.RowPartitions(acct))
	tx := newTxns(t, st, c)
	parts := tx.RowPartitions("b")
	require.Len(t, parts, balance.DefaultPartitions)
	for i, p := range parts {
		require.Equal(t, fmt.Sprint("b#", i), p)
	}
	for i := range 200 {
		_, err := tx.Apply(ctx, "b", crdt.TxnID(fmt.Sprint(i)), int64(i+1))
		require.NoError(t, err)
	}
	used := 0
	for _, p := range parts {
		rows, err := st.Snapshot(ctx, p, 1000, store.ReadAny)
		require.NoError(t, err)
		if len(rows) > 0 {
			used++
		}
	}
	require.Equal(t, len(parts), used, "200 rows left a partition empty")
	v, err := tx.Balance(ctx, "b")
	require.NoError(t, err)
	require.EqualValues(t, 200*201/2, v)
	c.Add(time.Second)
	reps, err := tx.Merge(ctx, "b")
	require.NoError(t, err)
	require.Len(t, reps, len(parts))
	for _, r := range reps {
		require.NotNil(t, r.Sum, "a partition was not merged")
	}

	// Two partitions each near the int64 bound: the sum does not fit.
	var big []crdt.TxnID
	seen := map[string]bool{}
	for i := 0; len(big) < 2; i++ {
		txn := crdt.TxnID(fmt.Sprint("big-", i))
		if p := tx.RowPartitions("c")[int(balance.TxnRowID(txn)[14])%len(parts)]; !seen[p] {
			seen[p] = true
			big = append(big, txn)
		}
	}
	for _, txn := range big {
		_, err := tx.Apply(ctx, "c", txn, math.MaxInt64)
		require.NoError(t, err)
	}
	_, err = tx.Balance(ctx, "c")
	require.ErrorIs(t, err, crdt.ErrOverflow)
}

// Conflicts reports a transaction applied with two amounts before a merge
// recorded it (one counts); Delete removes the rows and the records.
func TestTransactionsConflictsAndDelete(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	st := memory.NewPartitions()
	tx := newTxns(t, st, c)
	mustApply(t, tx, "x", 7, balance.Applied)
	mustApply(t, tx, "x", 5, balance.Applied) // not recorded yet: a second row
	conflicts, err := tx.Conflicts(ctx, acct)
	require.NoError(t, err)
	require.Equal(t, []balance.Conflict{{UpdateID: balance.TxnRowID("x"), Counted: 5, Refused: []int64{7}}}, conflicts)
	require.EqualValues(t, 5, balanceOf(t, tx))
	c.Add(time.Second)
	mustMerge(t, tx)
	mustApply(t, tx, "x", 5, balance.Duplicate)
	_, err = tx.Apply(ctx, acct, "x", 7)
	require.ErrorIs(t, err, crdt.ErrConflictingTransaction)

	require.NoError(t, tx.Delete(ctx, acct))
	require.Zero(t, balanceOf(t, tx))
	recorded, err := tx.Recorded(ctx, acct, "x")
	require.NoError(t, err)
	require.Empty(t, recorded, "a record outlived Delete")
}

// With TxnTime, a transaction not recorded whose time is more than
// RetryWindow old (or more than FutureSkew ahead) is refused, one inside
// is applied, and one recorded is a duplicate whatever its time.
func TestTransactionsTimed(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	times := map[crdt.TxnID]time.Time{}
	tx, err := balance.NewTransactions(memory.NewPartitions(), balance.TxnOptions{Options: balance.Options{Clock: c.Now},
		TxnTime: func(txn crdt.TxnID) (time.Time, bool) { at, ok := times[txn]; return at, ok }})
	require.NoError(t, err)
	o := tx.Options()
	_, err = tx.Apply(ctx, acct, "untimed", 1)
	require.ErrorIs(t, err, crdt.ErrInvalidTxnID)
	for txn, at := range map[crdt.TxnID]time.Time{
		"oldest":   t0.Add(-o.RetryWindow),
		"too-old":  t0.Add(-o.RetryWindow - time.Microsecond),
		"ahead":    t0.Add(o.FutureSkew),
		"too-far":  t0.Add(o.FutureSkew + time.Microsecond),
		"recorded": t0.Add(-time.Minute),
	} {
		times[txn] = at
	}
	mustApply(t, tx, "oldest", 1, balance.Applied)
	mustApply(t, tx, "ahead", 10, balance.Applied)
	for _, txn := range []crdt.TxnID{"too-old", "too-far"} {
		_, err := tx.Apply(ctx, acct, txn, 100)
		require.ErrorIs(t, err, crdt.ErrOutsideWindow, "%s", txn)
	}
	mustApply(t, tx, "recorded", 1000, balance.Applied)
	c.Add(time.Second)
	mustMerge(t, tx)
	c.Add(o.RetryWindow) // "recorded" is now older than the window, but recorded
	mustApply(t, tx, "recorded", 1000, balance.Duplicate)
	require.EqualValues(t, 1011, balanceOf(t, tx))
	// Once a merge expired its record, a retry is refused, not counted.
	c.Add(3*o.RetryWindow + 3*o.FutureSkew)
	mustMerge(t, tx)
	_, err = tx.Apply(ctx, acct, "recorded", 1000)
	require.ErrorIs(t, err, crdt.ErrOutsideWindow)
	require.EqualValues(t, 1011, balanceOf(t, tx))
}

// A record made next to a window boundary is found by a call whose clock
// is up to FutureSkew off the merge's, anywhere in the RetryWindow after
// it, also after the merge that starts the next window expired the old
// record partitions.
func TestTransactionsRecordWindowEdges(t *testing.T) {
	ctx := context.Background()
	base := newTxns(t, memory.NewPartitions(), newTestClock()).Options()
	rw, fs := base.RetryWindow, base.FutureSkew
	boundary := boundaryAfter(t0, rw)
	checked := 0
	for _, m := range []time.Time{boundary.Add(-fs - time.Microsecond), boundary.Add(-time.Microsecond), boundary, boundary.Add(fs)} {
		for _, d := range []time.Duration{0, time.Microsecond, rw / 2, rw - fs, rw - time.Microsecond} {
			for _, skew := range []time.Duration{-fs, 0, fs} {
				st := memory.NewPartitions()
				merger, reader := &testClock{t: m}, &testClock{t: m}
				mt, rt := newTxns(t, st, merger), newTxns(t, st, reader)
				mustApply(t, mt, "x", 7, balance.Applied)
				mustMerge(t, mt) // records x at m
				merger.Set(m.Add(d))
				mustMerge(t, mt) // may start a window and expire old records
				reader.Set(m.Add(d + skew))
				got, err := rt.Apply(ctx, acct, "x", 7)
				require.NoError(t, err)
				require.Equal(t, balance.Duplicate, got, "record at %v, call %v later with its clock %v off", m, d, skew)
				checked++
			}
		}
	}
	require.Equal(t, 60, checked)
}

// One id applied with two amounts before a merge recorded it (a caller's
// error): each merge records the amount that counted when it ran, and a
// retry with any recorded amount is a duplicate.
func TestTransactionsTwoAmounts(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	st, hold := heldRow(memory.NewPartitions())
	a, b := newTxns(t, st, c), newTxns(t, st, c)
	mustApply(t, a, "x", 128, balance.Applied)
	hold.Store(true)
	_, err := b.Apply(ctx, acct, "x", 127) // in flight
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	mustMerge(t, a) // records 128
	require.NoError(t, st.Deliver(0))
	require.EqualValues(t, 127, balanceOf(t, a), "the smallest amount counts until a merge settles")
	c.Add(time.Second)
	mustMerge(t, a) // records 127
	recorded, err := a.Recorded(ctx, acct, "x")
	require.NoError(t, err)
	require.ElementsMatch(t, []int64{127, 128}, recorded)
	for _, amount := range []int64{127, 128} {
		mustApply(t, a, "x", amount, balance.Duplicate)
	}
	_, err = a.Apply(ctx, acct, "x", 126)
	require.ErrorIs(t, err, crdt.ErrConflictingTransaction)
	c.Add(2 * time.Minute)
	mustMerge(t, a)
	mustApply(t, b, "x", 127, balance.Duplicate)
	require.EqualValues(t, 127, balanceOf(t, a))
}

// A merge whose records take longer than MaxMerge to be acknowledged stops
// before its tombstones: the rows stay live, and the next merge records
// them again, so a record is never older than its windows assume.
func TestTransactionsSlowRecords(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
	tx := newTxns(t, st, c)
	mustApply(t, tx, "x", 7, balance.Applied)
	var slow atomic.Bool
	slow.Store(true)
	st.SetHook(func(_ context.Context, call faulty.Call, after bool) error {
		if after && call.Method == faulty.MethodApply && strings.Contains(call.Key, "#txn.") && slow.Load() {
			c.Add(tx.Options().MaxMerge + time.Microsecond)
		}
		return nil
	})
	_, err := tx.Merge(ctx, acct)
	require.ErrorIs(t, err, balance.ErrSlowMerge)
	rows := 0
	for _, p := range tx.RowPartitions(acct) {
		got, err := st.Snapshot(ctx, p, 100, store.ReadAny)
		require.NoError(t, err)
		rows += len(got)
	}
	require.Equal(t, 1, rows, "the slow merge wrote tombstones")
	slow.Store(false)
	mustMerge(t, tx)
	mustApply(t, tx, "x", 7, balance.Duplicate)
	require.EqualValues(t, 7, balanceOf(t, tx))
}

// boundaryAfter returns the first start of a RetryWindow-long window after t.
func boundaryAfter(t time.Time, rw time.Duration) time.Time {
	return time.UnixMicro((t.UnixMicro()/rw.Microseconds() + 1) * rw.Microseconds()).UTC()
}

// With TxnTime, a transaction timed 2·FutureSkew past the merge's clock (a
// writer FutureSkew ahead, timing it FutureSkew ahead of that) and retried
// just inside RetryWindow of its time, next to a window boundary, finds
// its record, with MaxMerge below FutureSkew too (found by a reviewer).
func TestTransactionsTimedWindowEdge(t *testing.T) {
	c := newTestClock()
	st := memory.NewPartitions()
	times := map[crdt.TxnID]time.Time{}
	mk := func(off time.Duration) *balance.Transactions {
		tx, err := balance.NewTransactions(st, balance.TxnOptions{
			Options: balance.Options{MaxMerge: 2 * time.Second, Clock: func() time.Time { return c.Now().Add(off) }},
			TxnTime: func(txn crdt.TxnID) (time.Time, bool) { at, ok := times[txn]; return at, ok }})
		require.NoError(t, err)
		return tx
	}
	merger := mk(0)
	o := merger.Options()
	ahead, other := mk(o.FutureSkew), mk(0)
	b := boundaryAfter(t0, o.RetryWindow)
	c.Set(b.Add(-9 * time.Second))
	times["x"] = c.Now().Add(2 * o.FutureSkew)
	mustApply(t, ahead, "x", 7, balance.Applied)
	mustMerge(t, merger)
	c.Add(o.SettleGrace + time.Second)
	mustMerge(t, merger)
	c.Set(times["x"].Add(o.RetryWindow - time.Microsecond))
	mustMerge(t, merger)
	mustApply(t, other, "x", 7, balance.Duplicate)
	require.EqualValues(t, 7, balanceOf(t, merger))
}

// Delete removes a record a merge just wrote into the window after the
// next one (found by a reviewer: the record outlived Delete, and a new
// credit to the reused account was answered duplicate).
func TestTransactionsDeleteAtWindowEdge(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	tx := newTxns(t, memory.NewPartitions(), c)
	o := tx.Options()
	b := boundaryAfter(t0, o.RetryWindow)
	c.Set(b.Add(-o.RetryWindow - 14*time.Second))
	mustApply(t, tx, "x", 7, balance.Applied)
	mustMerge(t, tx)
	require.NoError(t, tx.Delete(ctx, acct))
	c.Set(b.Add(time.Second))
	recorded, err := tx.Recorded(ctx, acct, "x")
	require.NoError(t, err)
	require.Empty(t, recorded, "a record outlived Delete")
	mustApply(t, tx, "x", 7, balance.Applied)
	require.EqualValues(t, 7, balanceOf(t, tx))
}

// Accounts.Merge refuses a partition holding live transaction rows: it
// would sum them without recording them (a retry after its settling would
// count again). Nothing is written.
func TestTransactionsPlainMergeRefused(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	st := memory.NewPartitions()
	tx := newTxns(t, st, c)
	mustApply(t, tx, "x", 7, balance.Applied)
	ac, err := balance.New(st, balance.Options{Clock: c.Now})
	require.NoError(t, err)
	c.Add(time.Second)
	for _, p := range tx.RowPartitions(acct) {
		before, err := st.Snapshot(ctx, p, 100, store.ReadAny)
		require.NoError(t, err)
		_, err = ac.Merge(ctx, p)
		if len(before) == 0 {
			require.NoError(t, err, "an empty partition")
			continue
		}
		require.ErrorIs(t, err, crdt.ErrTypeMismatch)
		after, err := st.Snapshot(ctx, p, 100, store.ReadAny)
		require.NoError(t, err)
		require.Equal(t, before, after)
	}
	mustMerge(t, tx)
	c.Add(2 * time.Minute)
	mustMerge(t, tx)
	mustApply(t, tx, "x", 7, balance.Duplicate)
	require.EqualValues(t, 7, balanceOf(t, tx))
}

// A merge of an account with nothing new writes nothing: the expiry of
// old records runs once per window, not on every merge of a partition
// without a sum row.
func TestTransactionsIdleMergeWritesNothing(t *testing.T) {
	c := newTestClock()
	st := &counting{mem: memory.NewPartitions()}
	tx := newTxns(t, st, c)
	mustApply(t, tx, "x", 7, balance.Applied)
	for _, step := range []time.Duration{time.Second, 2 * time.Minute, 11 * time.Minute, 11 * time.Minute} {
		c.Add(step)
		mustMerge(t, tx)
	}
	before := st.applies.Load()
	for range 3 {
		c.Add(time.Minute)
		mustMerge(t, tx)
	}
	require.Equal(t, before, st.applies.Load(), "an idle account's merges wrote")
	mustApply(t, tx, "x", 7, balance.Duplicate)
}

// Records expire however long an account idles between bursts: a burst of
// credits merged in window b, then nothing (not even merges) for 0 to 9
// windows, then the next burst. After a merge four windows after the last
// burst no record partition holds a row, and later merges of the idle
// account read its expiry mark and write nothing.
func TestTransactionsRecordsExpireAcrossGaps(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	st := &counting{mem: memory.NewPartitions()}
	o := txnOpts(c)
	o.RetryWindow = time.Hour
	tx, err := balance.NewTransactions(st, o)
	require.NoError(t, err)
	hour := func() int64 { return c.Now().UnixMicro() / time.Hour.Microseconds() }
	first := hour()
	n := 0
	for _, gap := range []int{0, 1, 0, 2, 3, 0, 5, 9, 0} {
		c.Add(time.Duration(gap+1) * time.Hour)
		for range 5 {
			n++
			mustApply(t, tx, crdt.TxnID(fmt.Sprint("t", n)), 1, balance.Applied)
		}
		c.Add(time.Second)
		mustMerge(t, tx)
		c.Add(2 * time.Minute)
		mustMerge(t, tx) // settles
	}
	last := hour()
	stored := func() (rows int) {
		for w := first - 3; w <= hour()+3; w++ {
			for s := range tx.Options().RecordShards {
				rows += len(storedRows(st.mem, fmt.Sprintf("%s#txn.%d.%d", acct, w, s)))
			}
		}
		return rows
	}
	require.Positive(t, stored())
	c.Add(4 * time.Hour)
	require.Equal(t, last+4, hour())
	mustMerge(t, tx)
	require.Zero(t, stored(), "records left after a merge four windows after the last burst")
	bal, err := tx.Balance(ctx, acct)
	require.NoError(t, err)
	require.EqualValues(t, n, bal)

	applies, snapshots := st.applies.Load(), st.snapshots.Load()
	for range 3 {
		c.Add(5 * time.Hour)
		mustMerge(t, tx)
	}
	require.Equal(t, applies, st.applies.Load(), "an expired idle account's merges wrote")
	require.EqualValues(t, 3*(tx.Options().Partitions+2), st.snapshots.Load()-snapshots, "each merge reads its layout marker, its row partitions and the expiry mark")
}

// Delete with the most partitions and record shards (64 and 256: more
// than 1,500 partition deletes) goes through in batches, and leaves the
// account empty. Found by a review: one batch past
// store.MaxSpanningBatchBytes made every such Delete fail too_large.
func TestTransactionsDeleteWithManyShards(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	o := txnOpts(c)
	o.RecordShards, o.Partitions = 256, 64
	tx, err := balance.NewTransactions(memory.NewPartitions(), o)
	require.NoError(t, err)
	mustApply(t, tx, "x", 7, balance.Applied)
	c.Add(time.Second)
	mustMerge(t, tx)
	require.NoError(t, tx.Delete(ctx, acct))
	v, err := tx.Balance(ctx, acct)
	require.NoError(t, err)
	require.Zero(t, v)
	rec, err := tx.Recorded(ctx, acct, "x")
	require.NoError(t, err)
	require.Empty(t, rec)
}

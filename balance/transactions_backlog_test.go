package balance_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

// A backlog of live rows (merges paused for a while) costs a merge no more
// records than a busy partition does: a merge records only the rows step 5
// covers (at most MaxCover a partition), so each merge stays within
// MaxMerge on a store of finite speed and the backlog drains. Found by a
// review: every row read was recorded, and with a store writing a record
// row in 200 µs, 30,000 live rows needed 60,000 record rows (12 s), so
// every merge stopped with ErrSlowMerge before step 4 and the backlog never
// drained (SPEC.md 9.4: no backlog makes a partition unmergeable). By
// default the backlog is 15,000 rows at 400 µs a record row (the same 12 s
// for recording every row read, past MaxMerge); with COUNTERKIT_CASES
// above 1, 30,000 at 200 µs.
func TestTransactionsBacklogDrains(t *testing.T) {
	testsize.SkipSequential(t)
	ctx := context.Background()
	c := newTestClock()
	mem := memory.NewPartitions()
	perRecordRow, backlog := 400*time.Microsecond, 15_000
	if proptest.Scale(1) > 1 {
		perRecordRow, backlog = 200*time.Microsecond, 30_000
	}
	st := faulty.NewPartitions(mem, faulty.Options{History: -1})
	st.SetHook(func(_ context.Context, call faulty.Call, after bool) error {
		if after && call.Method == faulty.MethodApply && strings.Contains(call.Key, "#txn.") && !strings.HasSuffix(call.Key, "#txn.expired") {
			c.Add(time.Duration(len(call.Batch)) * perRecordRow)
		}
		return nil
	})
	o := txnOpts(c)
	o.Partitions, o.RecordShards = 1, 1
	tx, err := balance.NewTransactions(st, o)
	require.NoError(t, err)

	apply := func(prefix string, n int) {
		for i := range n {
			_, err := tx.Apply(ctx, acct, crdt.TxnID(fmt.Sprint(prefix, i)), 1)
			require.NoError(t, err)
		}
	}

	// Steady state: MaxCover live rows merge fine at this store rate.
	apply("steady-", balance.MaxCover)
	c.Add(time.Second)
	_, err = tx.Merge(ctx, acct)
	require.NoError(t, err, "a merge of MaxCover rows")

	// A backlog: 15,000 or 30,000 live rows (merges paused), then no more
	// credits.
	apply("backlog-", backlog)
	var last error
	for i := range 7 {
		c.Add(5 * time.Second)
		reps, err := tx.Merge(ctx, acct)
		last = err
		covered := 0
		for _, r := range reps {
			covered += len(r.Tombstones)
		}
		t.Logf("merge %d after the backlog: covered %d rows, err %v", i, covered, err)
	}
	require.EqualValues(t, balance.MaxCover+backlog, balanceOf(t, tx))
	require.NoError(t, last)
	for range 3 {
		c.Add(2 * time.Minute)
		mustMerge(t, tx)
	}
	require.Equal(t, 1, len(storedRows(mem, tx.RowPartitions(acct)[0])), "the idle account's backlog drained to one sum row")
}

// A backlog that, with the tombstones of the merges draining it, passes
// MaxRows stays readable and mergeable, and drains: a row partition's
// read that finds more than MaxRows reads again up to MaxBacklogRows.
// Found by a review from the docs: after a five-minute merger outage at
// 3,000 credits a second, merges every 5 s covered 5,000 rows each and,
// before the first settled (SettleGrace), took a partition past 100,000
// rows: every later Balance and Merge failed crdt.ErrTooLarge, for good.
// It runs with COUNTERKIT_CASES above 1 (MaxRows is a constant, so no
// smaller backlog passes it); TestTransactionsBacklogRows reads a row
// partition past MaxRows in CI.
func TestTransactionsBacklogPastMaxRowsDrains(t *testing.T) {
	if testing.Short() {
		t.Skip("60,000 credits and 28 merges of up to 130,000 rows: not with -short")
	}
	if proptest.Scale(1) <= 1 {
		t.Skip("60,000 credits and 28 merges of up to 130,000 rows: COUNTERKIT_CASES above 1 runs it")
	}
	ctx := context.Background()
	c := newTestClock()
	const backlog = 60_000
	st, tx := backlogAccount(t, c, 0, backlog)
	rows := func() int {
		r, err := st.Snapshot(ctx, acct+"#0", 10*balance.MaxRows, store.ReadAny)
		require.NoError(t, err)
		return len(r)
	}
	most := 0
	for m := 1; m <= 28; m++ { // merges every 5 s: the last settles the rest
		c.Add(5 * time.Second)
		_, err := tx.Merge(ctx, acct)
		require.NoError(t, err, "merge %d", m)
		most = max(most, rows())
		if m%4 == 0 {
			b, err := tx.Balance(ctx, acct)
			require.NoError(t, err, "balance after merge %d", m)
			require.Equal(t, int64(backlog), b, "balance after merge %d", m)
		}
	}
	left := rows()
	t.Logf("%d rows at most, %d left after 28 merges", most, left)
	require.Greater(t, most, balance.MaxRows, "the merges took the partition past MaxRows")
	require.Less(t, left, 10, "the backlog drained")
}

// A row partition past BacklogRows fails its reads and merges
// crdt.ErrTooLarge; a Transactions with a larger BacklogRows (not part of
// the layout) reads it. BacklogRows outside MaxRows..100,000,000 is
// crdt.ErrInvalidConfig.
func TestTransactionsBacklogRows(t *testing.T) {
	for _, n := range []int{-1, 1, balance.MaxRows - 1, 100_000_001} {
		_, err := balance.NewTransactions(memory.NewPartitions(), balance.TxnOptions{BacklogRows: n})
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "BacklogRows %d", n)
	}
	if testing.Short() {
		t.Skip("100,100 credits: not with -short")
	}
	ctx := context.Background()
	c := newTestClock()
	const n = balance.MaxRows + 100
	st, tight := backlogAccount(t, c, balance.MaxRows, n)
	_, err := tight.Balance(ctx, acct)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	_, err = tight.Merge(ctx, acct)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	o := tight.Options()
	o.BacklogRows = 0 // the default, MaxBacklogRows
	tx, err := balance.NewTransactions(st, o)
	require.NoError(t, err)
	b, err := tx.Balance(ctx, acct)
	require.NoError(t, err)
	require.EqualValues(t, n, b)
}

// backlogAccount is a Transactions of one row partition and one record
// shard, with backlogRows as its BacklogRows, whose account holds n
// credits of 1 never merged.
func backlogAccount(t *testing.T, c *testClock, backlogRows, n int) (*memory.Partitions, *balance.Transactions) {
	t.Helper()
	st := memory.NewPartitions()
	o := txnOpts(c)
	o.Partitions, o.RecordShards, o.BacklogRows = 1, 1, backlogRows
	tx, err := balance.NewTransactions(st, o)
	require.NoError(t, err)
	for i := range n {
		if i%10_000 == 0 {
			c.Add(time.Second) // within Deadline of each Apply's lookup
		}
		_, err := tx.Apply(context.Background(), acct, crdt.TxnID(fmt.Sprintf("b-%d", i)), 1)
		require.NoError(t, err)
	}
	return st, tx
}

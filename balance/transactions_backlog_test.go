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
	"github.com/counterkit/counterkit/store/faulty"
)

// A backlog of live rows (merges paused for a while) costs a merge no more
// records than a busy partition does: a merge records only the rows step 5
// covers (at most MaxCover a partition), so each merge stays within
// MaxMerge on a store of finite speed and the backlog drains. Found by a
// review: every row read was recorded, and with a store writing a record
// row in 200 µs, 30,000 live rows needed 60,000 record rows (12 s), so
// every merge stopped with ErrSlowMerge before step 4 and the backlog never
// drained (SPEC.md 9.4: no backlog makes a partition unmergeable).
func TestTransactionsBacklogDrains(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	mem := memory.NewPartitions()
	const perRecordRow = 200 * time.Microsecond
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

	// A backlog: 30,000 live rows (merges paused), then no more credits.
	const backlog = 30_000
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

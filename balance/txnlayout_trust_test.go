package balance_test

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
)

// countingLayoutReads counts Snapshots of layout marker partitions.
type countingLayoutReads struct {
	store.Partitions
	reads atomic.Int64
}

func (c *countingLayoutReads) Snapshot(ctx context.Context, p string, limit int, level store.Read) ([]store.Row, error) {
	if strings.HasSuffix(p, "#txn.layout") {
		c.reads.Add(1)
	}
	return c.Partitions.Snapshot(ctx, p, limit, level)
}

// TestLayoutTrustPastItsTable: a Transactions reads an account's layout
// marker at most once a second (README, SPEC.md 9.4 "Layout") while fewer
// than 16,384 accounts are written in a second, however many it has
// written before; past that, a full table forgets an eighth of its checks
// at a time (before: all of them, so that crediting 16,385 accounts in turn read
// every account's marker on every credit).
func TestLayoutTrustPastItsTable(t *testing.T) {
	if testing.Short() {
		t.Skip("about 100,000 Applies")
	}
	const table = 1 << 14
	ctx := context.Background()
	c := newTestClock()
	st := &countingLayoutReads{Partitions: memory.NewPartitions()}
	tx, err := balance.NewTransactions(st, txnOpts(c))
	require.NoError(t, err)
	credit := func(account string, pass int) {
		t.Helper()
		_, err := tx.Apply(ctx, account, crdt.TxnID(fmt.Sprint("t", pass)), 1)
		require.NoError(t, err)
	}
	// Accounts written in earlier seconds do not push out this second's.
	for i := range table {
		credit(fmt.Sprint("old", i), 0)
	}
	c.Add(2 * time.Second)
	for i := range table {
		credit(fmt.Sprint("new", i), 0)
	}
	st.reads.Store(0)
	for i := range table {
		credit(fmt.Sprint("new", i), 1)
	}
	require.Zero(t, st.reads.Load(), "credits of %d accounts marked less than a second ago, after %d marked earlier", table, table)

	// One account more than the table within a second: about an eighth
	// read again (the eighth forgotten, and those the next eviction takes
	// before their turn).
	c.Add(2 * time.Second)
	for i := range table + 1 {
		credit(fmt.Sprint("hot", i), 0)
	}
	st.reads.Store(0)
	for i := range table + 1 {
		credit(fmt.Sprint("hot", i), 1)
	}
	require.LessOrEqual(t, st.reads.Load(), int64(table/4), "%d accounts in a second", table+1)
	require.Positive(t, st.reads.Load())
	t.Logf("%d accounts within a second: %d of their second credits read the marker", table+1, st.reads.Load())
}

package balance_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// An account past MaxRows (a rate above its capacity, or merges paused)
// stays readable and mergeable, and drains once the rate falls: a read
// that finds more than MaxRows reads again up to MaxBacklogRows (SPEC.md
// 9.3 step 1). Found by a review from the docs: at 150 updates a second
// an account passed MaxRows within GCGrace, and every later Balance and
// Merge failed crdt.ErrTooLarge, for good. Short graces (Window 1 min,
// SettleGrace 40 s, GCGrace 90 s) keep the drain to about 40 merges.
func TestAccountsBacklogDrains(t *testing.T) {
	if testing.Short() {
		t.Skip("110,000 updates and 40 merges of up to 170,000 rows: not with -short")
	}
	ctx := context.Background()
	c := newTestClock()
	st := memory.NewPartitions()
	ac, err := balance.New(st, balance.Options{Clock: c.Now, Window: time.Minute, SettleGrace: 40 * time.Second, GCGrace: 90 * time.Second})
	require.NoError(t, err)
	const n = balance.MaxRows + 10_000
	for i := range n {
		c.Add(time.Millisecond)
		require.NoError(t, ac.Add(ctx, "acct", timeid.FromParts(c.Now(), uint16(i%1000), 7), 1))
	}
	rows := func() int {
		r, err := st.Snapshot(ctx, "acct", math.MaxInt, store.ReadAny)
		require.NoError(t, err)
		return len(r)
	}
	most := rows()
	for m := 1; m <= 40; m++ {
		c.Add(5 * time.Second)
		_, err := ac.Merge(ctx, "acct")
		require.NoError(t, err, "merge %d", m)
		most = max(most, rows())
		if m%5 == 1 {
			b, err := ac.Balance(ctx, "acct")
			require.NoError(t, err, "balance after merge %d", m)
			require.Equal(t, int64(n), b, "balance after merge %d", m)
		}
	}
	left := rows()
	t.Logf("%d rows at most, %d left after 40 merges", most, left)
	require.Greater(t, most, balance.MaxRows)
	require.LessOrEqual(t, most, balance.MaxBacklogRows)
	require.Less(t, left, 10, "the backlog drained")
}

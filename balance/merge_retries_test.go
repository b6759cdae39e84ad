package balance_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/timeid"
)

// Retries of more than store.MaxBatch updates that settled merges already
// deleted come back as N rows their settled sums cancel; step 7 deletes
// them over several merges, and the partition keeps settling. (Found by a
// review: every merge failed at step 7 with a batch over MaxBatch.)
func TestMergeDeletesRetriesOfSettledRowsInBatches(t *testing.T) {
	testsize.SkipSequential(t)
	l, sp, c := newAccounts(t)
	ctx := context.Background()
	n := 3 * balance.MaxCover
	ids := make([]timeid.ID, n)
	for i := range n {
		ids[i] = timeid.New(c.now.Add(time.Duration(i) * time.Microsecond))
	}
	add := func(ids []timeid.ID) {
		for len(ids) > 0 {
			k := min(len(ids), 10000)
			var b balance.Batch
			for _, id := range ids[:k] {
				b.Add("a", id, 1)
			}
			require.NoError(t, l.Apply(ctx, &b))
			ids = ids[k:]
		}
	}
	add(ids)
	check := func() {
		v, err := l.Balance(ctx, "a")
		require.NoError(t, err)
		require.EqualValues(t, n, v)
	}
	for range 4 {
		c.now = c.now.Add(time.Second)
		_, err := l.Merge(ctx, "a")
		require.NoError(t, err)
		check()
	}
	c.now = c.now.Add(70 * time.Second)
	for range 6 {
		c.now = c.now.Add(time.Second)
		rep, err := l.Merge(ctx, "a")
		require.NoError(t, err)
		t.Logf("settling merge: settled %d, deleted %d", len(rep.Settled), len(rep.Deleted))
		check()
	}
	t.Logf("rows after settling: %d", len(storedRows(sp, "a")))
	// A client replays 10,001 of its updates (still inside Window).
	add(ids[:10001])
	check()
	fails := 0
	for i := range 8 {
		c.now = c.now.Add(3 * time.Minute)
		if _, err := l.Merge(ctx, "a"); err != nil {
			fails++
			t.Logf("merge %d: %v", i, err)
		}
		check()
	}
	t.Logf("rows left %d, failed merges %d of 8 (over 24 min, past GCGrace)", len(storedRows(sp, "a")), fails)
	require.Zero(t, fails, "a partition that can never settle again")
}

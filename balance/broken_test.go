//go:build counterkit_mutants

package balance_test

import (
	"context"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/timeid"
)

// TestChecksCatchBrokenVariants runs the checks of this package against
// the known-broken variants of the rules (export_mutants_test.go, built
// with -tags counterkit_mutants) and requires each to fail: a settled merge
// whose tombstone cancels only its own amount (a reused id then counts
// twice), and a chain of merges that unwinds one level per merge.
func TestChecksCatchBrokenVariants(t *testing.T) {
	ctx := context.Background()
	t.Run("reused id counts twice", func(t *testing.T) {
		defer balance.BreakAmountClaims()()
		// Through the public API: add, merge, settle, reuse the id.
		l, _, c := newAccounts(t)
		u := timeid.New(c.now)
		require.NoError(t, l.Add(ctx, "a", u, 5))
		for range 2 {
			_, err := l.Merge(ctx, "a")
			require.NoError(t, err)
			c.now = c.now.Add(61 * time.Second)
		}
		require.NoError(t, l.Add(ctx, "a", u, 7))
		b, err := l.Balance(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, int64(12), b, "the broken rule counts both amounts")

		// The interleaving checker.
		var found bool
		for _, sc := range scenarios() {
			if strings.HasPrefix(sc.name, "rich: reuse of covered and settled ids") {
				err := runInterleaving(sc, func(int) int { return 0 }, false)
				require.ErrorContains(t, err, "is not a sum of one landed amount per update id")
				found = true
			}
		}
		require.True(t, found)

		// The simulation, within a few schedules.
		caught := 0
		for s := int64(1); s <= 40 && caught == 0; s++ {
			if err := runSim(s, 15); err != nil {
				require.ErrorContains(t, err, "is not a sum of one landed amount per update id")
				caught++
			}
		}
		require.Positive(t, caught, "no schedule of 40 caught the double count")
	})
	t.Run("chain unwinds one level per merge", func(t *testing.T) {
		defer balance.BreakChainCompaction()()
		c := &clock{now: t0}
		store := newSpy()
		l, err := balance.New(store, balance.Options{Clock: c.Now})
		require.NoError(t, err)
		want, err := runBurst(rand.New(rand.NewSource(1)), l, store, c, 60)
		require.NoError(t, err)
		opts := l.Options()
		step := opts.SettleGrace + opts.FutureSkew
		c.now = c.now.Add(opts.GCGrace + opts.FutureSkew - step)
		n, err := mergesToCompact(l, store, c, step, 1000, want)
		require.NoError(t, err)
		require.Greater(t, n, 2, "the burst check would catch it")
		t.Logf("the broken variant took %d merges", n)

		caught := false
		for s := int64(1); s <= 20 && !caught; s++ {
			if err := runSim(s, 15); err != nil {
				require.ErrorContains(t, err, "not compacted by two merges")
				caught = true
			}
		}
		require.True(t, caught, "no schedule of 20 caught the slow compaction")
	})
	t.Run("transactions not recorded", func(t *testing.T) {
		defer balance.BreakTxnRecords()()
		c := newTestClock()
		tx, err := balance.NewTransactions(memory.NewPartitions(), txnOpts(c))
		require.NoError(t, err)
		n, err := retriesRecognised(c, tx)
		require.Error(t, err, "the retry checks missed it")
		t.Logf("caught at retry %d: %v", n, err)
	})
	t.Run("no deadline on a write", func(t *testing.T) {
		defer balance.BreakTxnDeadline()()
		outcome, bal, err := stalledWriter()
		require.NoError(t, err)
		require.Equal(t, balance.Applied, outcome)
		require.EqualValues(t, 14, bal, "the stalled writer's row counts again")
	})
	t.Run("placed rows removed without what they need", func(t *testing.T) {
		defer balance.BreakPlacedNeeds()()
		bal, _, _ := copyAfterItsTombstone(t, 8)
		require.EqualValues(t, 15, bal, "the copy of another amount counts once its tombstone goes")
		err := randomSchedules(t, 1, 2000, false)
		require.Error(t, err, "the random schedules missed it")
		t.Logf("random schedules: %v", err)
	})
	t.Run("stale removal enumeration catches removal without needs", func(t *testing.T) {
		defer balance.BreakPlacedNeeds()()
		st, err := enumerateStale(srCIScope, 0)
		require.Error(t, err, "%d schedules passed", st.runs)
		t.Logf("caught after %d schedules: %v", st.runs, err)
	})
	// The fault sequences catch a merge that writes no records: a retry
	// after the merge is applied again.
	t.Run("fault sequences catch no records", func(t *testing.T) {
		defer balance.BreakTxnRecords()()
		runs, err := enumerateFaults(feActions(), 3)
		require.Error(t, err, "%d sequences passed", runs)
		t.Logf("caught after %d sequences: %v", runs, strings.SplitN(err.Error(), "\n", 2)[0])
	})
	// The schedule enumeration catches both.
	for name, brk := range map[string]func() func(){"records": balance.BreakTxnRecords, "deadline": balance.BreakTxnDeadline} {
		t.Run("enumeration catches no "+name, func(t *testing.T) {
			defer brk()()
			runs, err := enumerateTxn(4)
			require.Error(t, err, "%d sequences passed", runs)
			t.Logf("caught after %d sequences: %v", runs, err)
		})
	}
}

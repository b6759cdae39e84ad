package balance_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
)

// Every three credits or debits in row partition 0 from amounts at the
// int64 boundary, one in partition 1 (−MaxInt64 or 2; also −2 with
// COUNTERKIT_CASES above 1); merges between, then idle merges; retries of
// each. Balance must be exact (or ErrOverflow when the account does not
// fit), merges must not fail, retries must be duplicates, and an idle
// partition must stay small.
func TestTransactionsOverflowEveryTriple(t *testing.T) {
	testsize.SkipSequential(t)
	ctx := context.Background()
	vals := []int64{math.MaxInt64, math.MaxInt64 - 1, 1, -1, -math.MaxInt64, math.MinInt64}
	ds := []int64{-math.MaxInt64, 2}
	if proptest.Scale(1) > 1 {
		ds = []int64{-math.MaxInt64, -2, 2}
	}
	for _, a := range vals {
		for _, b := range vals {
			for _, c3 := range vals {
				for _, d := range ds {
					for _, mergeEvery := range []bool{false, true} {
						name := fmt.Sprint(a, b, c3, d, mergeEvery)
						c := newTestClock()
						mem := memory.NewPartitions()
						tx := newTxns(t, mem, c)
						P := tx.Options().Partitions
						ids := []crdt.TxnID{txnInOf("x", 0, P), txnInOf("y", 0, P), txnInOf("z", 0, P), txnInOf("w", 1, P)}
						amts := []int64{a, b, c3, d}
						want := new(big.Int)
						for i, id := range ids {
							_, err := tx.Apply(ctx, acct, id, amts[i])
							require.NoError(t, err, name)
							want.Add(want, big.NewInt(amts[i]))
							c.Add(time.Second)
							if mergeEvery {
								_, err := tx.Merge(ctx, acct)
								require.NoError(t, err, name)
							}
						}
						check := func(when string) {
							v, err := tx.Balance(ctx, acct)
							if want.IsInt64() {
								require.NoError(t, err, "%s %s", name, when)
								require.Equal(t, want.Int64(), v, "%s %s", name, when)
							} else {
								require.True(t, errors.Is(err, crdt.ErrOverflow), "%s %s: %v", name, when, err)
							}
						}
						check("before merges")
						for i := range 12 {
							c.Add(40 * time.Second)
							_, err := tx.Merge(ctx, acct)
							require.NoError(t, err, "%s merge %d", name, i)
							check(fmt.Sprint("merge ", i))
						}
						for i, id := range ids {
							o, err := tx.Apply(ctx, acct, id, amts[i])
							require.NoError(t, err, name)
							require.Equal(t, balance.Duplicate, o, "%s retry %s", name, id)
						}
						for i := range 12 {
							c.Add(2 * time.Minute)
							_, err := tx.Merge(ctx, acct)
							require.NoError(t, err, "%s idle merge %d", name, i)
							check("idle")
						}
						rows, err := mem.Snapshot(ctx, tx.RowPartitions(acct)[0], 1000, store.ReadComplete)
						require.NoError(t, err)
						require.LessOrEqual(t, len(rows), 6, "%s: partition 0 idle holds %d rows", name, len(rows))
						if _, err := tx.Conflicts(ctx, acct); err != nil {
							t.Fatalf("%s conflicts: %v", name, err)
						}
					}
				}
			}
		}
	}
}

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
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/store"
)

// Every order of one id applied with two amounts (a conflict) next to big
// rows in partition 0, a debit elsewhere; merges in between or not.
func TestTransactionsOverflowConflicts(t *testing.T) {
	testsize.SkipSequential(t)
	ctx := context.Background()
	vals := []int64{math.MaxInt64, 1, -1, math.MinInt64}
	for _, a := range vals {
		for _, b := range vals {
			for _, o := range vals {
				for _, d := range []int64{-math.MaxInt64, 2} {
					for mode := range 3 {
						if a == b {
							continue
						}
						name := fmt.Sprint(a, b, o, d, mode)
						c := newTestClock()
						mem := memory.NewPartitions()
						tx := newTxns(t, mem, c)
						P := tx.Options().Partitions
						x, y, w := txnInOf("x", 0, P), txnInOf("y", 0, P), txnInOf("w", 1, P)
						step := func() {
							c.Add(time.Second)
							if mode == 1 {
								_, err := tx.Merge(ctx, acct)
								require.NoError(t, err, name)
							}
						}
						for _, s := range []struct {
							id  crdt.TxnID
							amt int64
						}{{y, o}, {x, a}, {x, b}, {w, d}} {
							if mode == 2 && s.id == x && s.amt == b {
								// the second amount lands after a merge read the first
								_, err := tx.Merge(ctx, acct)
								require.NoError(t, err, name)
							}
							_, err := tx.Apply(ctx, acct, s.id, s.amt)
							if err != nil && errors.Is(err, crdt.ErrConflictingTransaction) {
								continue
							}
							require.NoError(t, err, name)
							step()
						}
						var counted []int64
						want := func() *big.Int {
							rec, err := tx.Recorded(ctx, acct, x)
							require.NoError(t, err)
							counted = rec
							s := new(big.Int).Add(big.NewInt(o), big.NewInt(d))
							return s
						}
						for i := range 14 {
							c.Add(40 * time.Second)
							_, err := tx.Merge(ctx, acct)
							require.NoError(t, err, "%s merge %d", name, i)
						}
						base := want()
						require.Len(t, counted, 1, "%s: recorded amounts of x %v", name, counted)
						exp := new(big.Int).Add(base, big.NewInt(counted[0]))
						v, err := tx.Balance(ctx, acct)
						if exp.IsInt64() {
							require.NoError(t, err, name)
							require.Equal(t, exp.Int64(), v, name)
						} else {
							require.ErrorIs(t, err, crdt.ErrOverflow, name)
						}
						rows, err := mem.Snapshot(ctx, tx.RowPartitions(acct)[0], 1000, store.ReadComplete)
						require.NoError(t, err)
						require.LessOrEqual(t, len(rows), 6, "%s rows", name)
					}
				}
			}
		}
	}
}

package balance_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// txnRowsFixture applies transactions to acct, merges, applies more and
// returns the Transactions, its store and the partition holding the most
// rows.
func txnRowsFixture(t *testing.T) (*balance.Transactions, *memory.Partitions, string) {
	t.Helper()
	c := newTestClock()
	st := memory.NewPartitions()
	tx := newTxns(t, st, c)
	for i := range 20 {
		mustApply(t, tx, crdt.TxnID(fmt.Sprintf("t%d", i)), int64(i+1), balance.Applied)
	}
	c.Add(tx.Options().Window + tx.Options().SafetyMargin + time.Second)
	mustMerge(t, tx)
	for i := range 20 {
		mustApply(t, tx, crdt.TxnID(fmt.Sprintf("u%d", i)), -int64(i+1), balance.Applied)
	}
	fullest, most := "", 0
	for _, p := range tx.RowPartitions(acct) {
		rows, err := st.Snapshot(context.Background(), p, balance.MaxRows, store.ReadAny)
		require.NoError(t, err)
		if len(rows) > most {
			fullest, most = p, len(rows)
		}
	}
	require.Greater(t, most, 1)
	return tx, st, fullest
}

// EvaluateTxnRows reads each row partition as Transactions does: the
// partitions' values sum to Balance and their conflicts are Conflicts'.
func TestEvaluateTxnRowsIsTransactionsReading(t *testing.T) {
	ctx := context.Background()
	tx, st, _ := txnRowsFixture(t)
	mustApply(t, tx, "u3", 99, balance.Applied) // a retry with another amount, not yet merged
	var sum int64
	var conflicts []balance.Conflict
	for _, p := range tx.RowPartitions(acct) {
		rows, err := st.Snapshot(ctx, p, balance.MaxRows, store.ReadAny)
		require.NoError(t, err)
		v, err := balance.EvaluateTxnRows(p, rows)
		require.NoError(t, err)
		sum += v.Value
		conflicts = append(conflicts, v.Conflicts...)
	}
	require.Equal(t, balanceOf(t, tx), sum)
	want, err := tx.Conflicts(ctx, acct)
	require.NoError(t, err)
	require.NotEmpty(t, want)
	require.Equal(t, want, conflicts)
}

// A row stored at two places is one row; with two contents it is corrupt.
func TestEvaluateTxnRowsRowAtTwoPlaces(t *testing.T) {
	ctx := context.Background()
	_, st, p := txnRowsFixture(t)
	rows, err := st.Snapshot(ctx, p, balance.MaxRows, store.ReadAny)
	require.NoError(t, err)
	want, err := balance.EvaluateTxnRows(p, rows)
	require.NoError(t, err)
	// rows stored again, row i also at an older place (sorting after it).
	twice := func(i int, value []byte) []store.Row {
		at, k, err := balance.DecodeTxnRowKey(rows[i].Key)
		require.NoError(t, err)
		out := append([]store.Row{}, rows[:i+1]...)
		out = append(out, store.Row{Key: balance.EncodeTxnRowKey(at-1, k), Value: value})
		return append(out, rows[i+1:]...)
	}
	for i := range rows {
		got, err := balance.EvaluateTxnRows(p, twice(i, rows[i].Value))
		require.NoError(t, err)
		require.Equal(t, want.Value, got.Value)
		require.Equal(t, want.Live, got.Live)
		require.Equal(t, want.Valid, got.Valid)
	}

	i := slices.IndexFunc(rows, func(r store.Row) bool {
		var row balance.Row
		require.NoError(t, row.UnmarshalBinary(r.Value))
		return row.Kind == balance.KindSum
	})
	require.GreaterOrEqual(t, i, 0, "the merge left a sum row")
	var r balance.Row
	require.NoError(t, r.UnmarshalBinary(rows[i].Value))
	r.Settled = !r.Settled
	b, err := r.MarshalBinary()
	require.NoError(t, err)
	_, err = balance.EvaluateTxnRows(p, twice(i, b))
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
}

// A key that disagrees with its value, and a plain balance key among
// placed ones, are refused as Balance refuses them.
func TestEvaluateTxnRowsRefusesDamage(t *testing.T) {
	ctx := context.Background()
	for name, damage := range map[string]func(rows []store.Row) []store.Row{
		"key disagrees with value": func(rows []store.Row) []store.Row {
			var r balance.Row
			require.NoError(t, r.UnmarshalBinary(rows[0].Value))
			b, err := balance.NormalRow(r.UpdateID, 1_000_000).MarshalBinary() // another key
			require.NoError(t, err)
			rows[0].Value = b
			return rows[:1]
		},
		"plain key": func(rows []store.Row) []store.Row {
			_, k, err := balance.DecodeTxnRowKey(rows[len(rows)-1].Key)
			require.NoError(t, err)
			rows[len(rows)-1].Key = balance.EncodeKey(k)
			return rows[len(rows)-1:]
		},
	} {
		t.Run(name, func(t *testing.T) {
			tx, st, p := txnRowsFixture(t)
			rows, err := st.Snapshot(ctx, p, balance.MaxRows, store.ReadAny)
			require.NoError(t, err)
			put := damage(rows)
			muts := make([]store.Mutation, len(put))
			for i, r := range put {
				muts[i] = store.Mutation{Partition: p, Op: store.OpPut, Key: r.Key, Value: r.Value, Timestamp: time.Now().UnixMicro()}
			}
			require.NoError(t, st.Apply(ctx, muts))
			_, berr := tx.Balance(ctx, acct)
			require.ErrorIs(t, berr, crdt.ErrCorruptEncoding)
			stored, err := st.Snapshot(ctx, p, balance.MaxRows, store.ReadAny)
			require.NoError(t, err)
			_, err = balance.EvaluateTxnRows(p, stored)
			require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
		})
	}
}

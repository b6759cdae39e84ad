// Package balancetest is the conformance suite for balance.Store
// implementations. Every backend runs it with one call:
//
//	func TestConformance(t *testing.T) {
//	    balancetest.Run(t, func(t *testing.T) balance.Store { return newStore(t) })
//	}
//
// Each behaviour is its own subtest with a fresh store from newStore, using
// only the Store interface, so it runs unchanged against a real database.
// Account keys are unique per subtest.
package balancetest

import (
	"context"
	"fmt"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/deltalog"
)

var epoch = time.Date(2024, 2, 2, 0, 0, 0, 0, time.UTC)

func id(at time.Duration, node uint64) balance.ID {
	return deltalog.IDFromParts(epoch.Add(at), 9, node)
}

func normal(at time.Duration, node uint64, amount int64) balance.Row {
	return balance.Row{UpdateID: id(at, node), Kind: balance.KindNormal, Amount: amount}
}

func put(account string, rows ...balance.Row) []balance.Mutation {
	out := make([]balance.Mutation, len(rows))
	for i, r := range rows {
		out[i] = balance.Mutation{Account: account, Row: r}
	}
	return out
}

func del(account string, rows ...balance.Row) []balance.Mutation {
	out := put(account, rows...)
	for i := range out {
		out[i].Delete = true
	}
	return out
}

func sorted(rows []balance.Row) []balance.Row {
	out := append([]balance.Row(nil), rows...)
	sort.Slice(out, func(i, j int) bool { return balance.CompareRows(out[i], out[j]) < 0 })
	return out
}

// Run runs every conformance test against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) balance.Store) {
	t.Helper()
	ctx := context.Background()
	key := func(t *testing.T) string { return fmt.Sprintf("conf-%s-%d", t.Name(), time.Now().UnixNano()) }
	rows := func(t *testing.T, s balance.Store, a string) []balance.Row {
		t.Helper()
		r, err := s.Rows(ctx, a)
		require.NoError(t, err)
		return r
	}
	v := id(time.Hour, 100)
	n1, n2 := normal(0, 1, 5), normal(time.Second, 2, -3)
	tomb := balance.Row{UpdateID: n1.UpdateID, Kind: balance.KindTombstone, Version: v, Amount: 5, Target: balance.KindNormal}
	sum := balance.Row{UpdateID: v, Kind: balance.KindSum, Version: v, Amount: 2, Covers: 2}

	t.Run("EmptyAccount", func(t *testing.T) {
		require.Empty(t, rows(t, newStore(t), key(t)))
	})
	t.Run("RowsAreInClusteringOrder", func(t *testing.T) {
		s, a := newStore(t), key(t)
		n3 := normal(time.Second, 3, 8) // same second, different node
		all := []balance.Row{n1, n2, n3, tomb, sum,
			{UpdateID: n1.UpdateID, Kind: balance.KindTombstone, Version: id(2*time.Hour, 1), Amount: 5, Target: balance.KindNormal}}
		require.NoError(t, s.Write(ctx, put(a, all[3], all[0], all[5], all[2], all[4], all[1])))
		require.Equal(t, sorted(all), rows(t, s, a))
	})
	t.Run("RowsRoundTripExactly", func(t *testing.T) {
		s, a := newStore(t), key(t)
		big := normal(0, 7, math.MinInt64)
		settled := sum
		settled.Settled, settled.Amount, settled.Covers = true, math.MaxInt64, math.MaxInt64
		require.NoError(t, s.Write(ctx, put(a, big, settled)))
		require.Equal(t, sorted([]balance.Row{big, settled}), rows(t, s, a))
	})
	t.Run("WriteIsAnUpsert", func(t *testing.T) {
		s, a := newStore(t), key(t)
		require.NoError(t, s.Write(ctx, put(a, sum)))
		require.NoError(t, s.Write(ctx, put(a, sum)))
		settled := sum
		settled.Settled = true
		require.NoError(t, s.Write(ctx, put(a, settled)))
		require.Equal(t, []balance.Row{settled}, rows(t, s, a))
	})
	t.Run("DeletesAndPutsInOneBatch", func(t *testing.T) {
		s, a := newStore(t), key(t)
		require.NoError(t, s.Write(ctx, put(a, n1, n2, tomb, sum)))
		settled := sum
		settled.Settled = true
		muts := append(del(a, n1, n2), put(a, settled)...)
		require.NoError(t, s.Write(ctx, muts))
		require.Equal(t, sorted([]balance.Row{tomb, settled}), rows(t, s, a))
		require.NoError(t, s.Write(ctx, del(a, n1)), "deleting a missing row is a no-op")
	})
	t.Run("NormalRowsAreKeyedByAmount", func(t *testing.T) {
		// One update id written with two amounts is two rows (the amount
		// key is the version column), beside a row in the format of
		// version 1 (zero version); a retry rewrites its own row.
		s, a := newStore(t), key(t)
		u := id(3*time.Second, 4)
		five, seven := balance.NormalRow(u, 5), balance.NormalRow(u, 7)
		legacy := balance.Row{UpdateID: u, Kind: balance.KindNormal, Amount: 5}
		require.NoError(t, s.Write(ctx, put(a, five)))
		require.NoError(t, s.Write(ctx, put(a, seven, legacy)))
		require.NoError(t, s.Write(ctx, put(a, five)))
		require.Equal(t, sorted([]balance.Row{five, seven, legacy}), rows(t, s, a))
		require.NoError(t, s.Write(ctx, del(a, seven)))
		require.Equal(t, sorted([]balance.Row{five, legacy}), rows(t, s, a))
	})
	t.Run("WriteSpansAccounts", func(t *testing.T) {
		s, a := newStore(t), key(t)
		require.NoError(t, s.Write(ctx, append(put(a, n1), put(a+"-b", n2)...)))
		require.Equal(t, []balance.Row{n1}, rows(t, s, a))
		require.Equal(t, []balance.Row{n2}, rows(t, s, a+"-b"))
	})
	t.Run("InvalidRowIsRefusedAndNothingWritten", func(t *testing.T) {
		s, a := newStore(t), key(t)
		bad := balance.Row{UpdateID: id(0, 3), Kind: balance.KindNormal} // zero amount
		require.Error(t, s.Write(ctx, put(a, n1, bad)))
		require.Empty(t, rows(t, s, a))
	})
	t.Run("DeleteAccount", func(t *testing.T) {
		s, a := newStore(t), key(t)
		require.NoError(t, s.Write(ctx, put(a, n1, tomb, sum)))
		require.NoError(t, s.Write(ctx, put(a+"x", n2)))
		require.NoError(t, s.DeleteAccount(ctx, a))
		require.Empty(t, rows(t, s, a))
		require.Len(t, rows(t, s, a+"x"), 1)
	})
	t.Run("CancelledContext", func(t *testing.T) {
		s, a := newStore(t), key(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		require.Error(t, s.Write(cctx, put(a, n1)))
		require.Empty(t, rows(t, s, a))
	})
	t.Run("LedgerEndToEnd", func(t *testing.T) {
		s, a := newStore(t), key(t)
		now := time.Now().UTC()
		l, err := balance.New(s, balance.Options{Clock: func() time.Time { return now }})
		require.NoError(t, err)
		var want int64
		for i := range 20 {
			amt := int64(i*3 - 20)
			if amt == 0 {
				amt = 1
			}
			want += amt
			require.NoError(t, l.Add(ctx, a, deltalog.NewIDAt(now), amt))
			now = now.Add(time.Second)
			if i%7 == 6 {
				_, err := l.Merge(ctx, a)
				require.NoError(t, err)
			}
		}
		for range 8 {
			now = now.Add(11 * time.Minute)
			_, err := l.Merge(ctx, a)
			require.NoError(t, err)
			b, err := l.Balance(ctx, a)
			require.NoError(t, err)
			require.Equal(t, want, b)
		}
		require.Len(t, rows(t, s, a), 1, "fully merged and collected")
	})
}

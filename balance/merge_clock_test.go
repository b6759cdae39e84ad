package balance_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/timeid"
)

// TestMergeClockSkewBound writes a valid sum row ahead of a merge's clock:
// up to 100 ns short of FutureSkew the merge takes a version 100 ns after
// it; at FutureSkew or more it fails ErrClockSkew, writes nothing and
// names how far ahead the row is. An invalid sum row ahead of the clock
// does not stop a merge.
func TestMergeClockSkewBound(t *testing.T) {
	ctx := context.Background()
	for _, ahead := range []time.Duration{0, 5*time.Second - 100, 5 * time.Second, 6 * time.Second} {
		l, s, c := newAccounts(t)
		require.Equal(t, 5*time.Second, l.Options().FutureSkew)
		n := nRow(-time.Minute, 1, 5)
		v := timeid.FromParts(c.now.Add(ahead), 1, 77)
		require.NoError(t, writeRows(s, acct, n,
			balance.Row{UpdateID: n.UpdateID, Kind: balance.KindTombstone, Version: v, Amount: 5, Target: balance.KindNormal},
			balance.Row{UpdateID: v, Kind: balance.KindSum, Version: v, Amount: 5, Covers: 1},
			nRow(-30*time.Second, 2, 7)))
		before := s.Stored(acct)
		s.ResetCalls()
		rep, err := l.Merge(ctx, acct)
		if ahead < l.Options().FutureSkew {
			require.NoError(t, err, "sum row %v ahead", ahead)
			require.Equal(t, v.Time().Add(100*time.Nanosecond), rep.Version.Time())
			continue
		}
		require.ErrorIs(t, err, balance.ErrClockSkew, "sum row %v ahead", ahead)
		require.ErrorContains(t, err, " is "+ahead.String()+" ahead")
		require.Zero(t, s.Calls().Applies)
		require.Equal(t, before, s.Stored(acct))
	}

	l, s, c := newAccounts(t)
	vi := timeid.FromParts(c.now.Add(time.Hour), 1, 78)
	require.NoError(t, writeRows(s, acct, nRow(-time.Minute, 1, 5),
		balance.Row{UpdateID: vi, Kind: balance.KindSum, Version: vi, Amount: 5, Covers: 1}))
	rep, err := l.Merge(ctx, acct)
	require.NoError(t, err)
	require.True(t, rep.Version.Time().Before(c.now.Add(time.Second)))
	b, err := l.Balance(ctx, acct)
	require.NoError(t, err)
	require.Equal(t, int64(5), b)
}

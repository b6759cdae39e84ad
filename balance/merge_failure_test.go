package balance_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

// TestFailedMergeReportsTheBatchesWritten fails each of a merge's four
// batches (tombstones, sum row, settling, collection) in turn, refused or
// landed without an acknowledgement: the merge stops there, and its report
// holds its version, the rows too young to collect and the lists of the
// batches acknowledged before the failure (SPEC.md 9.3, "Merge report"),
// while the balance stays unchanged.
func TestFailedMergeReportsTheBatchesWritten(t *testing.T) {
	ctx := context.Background()
	for w := 1; w <= 4; w++ {
		for _, f := range []faulty.Fault{faulty.Refuse, faulty.LoseAck} {
			l, s, c := newAccounts(t)
			rows := mergedState(-20*time.Minute, 990, false, nRow(-25*time.Minute, 1, 4))
			rows = append(rows,
				balance.Row{UpdateID: id(-30*time.Minute, 7), Kind: balance.KindTombstone, Version: id(-29*time.Minute, 8), Amount: 3, Target: balance.KindNormal},
				balance.Row{UpdateID: id(-time.Second, 17), Kind: balance.KindTombstone, Version: id(-time.Second, 18), Amount: 3, Target: balance.KindNormal})
			require.NoError(t, writeRows(s, acct, rows...))
			require.NoError(t, l.Add(ctx, acct, timeid.New(c.now), 5))
			applies := 0
			s.SetPolicy(func(call faulty.Call) faulty.Fault {
				if call.Method != faulty.MethodApply {
					return faulty.Pass
				}
				if applies++; applies == w {
					return f
				}
				return faulty.Pass
			})
			rep, err := l.Merge(ctx, acct)
			s.SetPolicy(nil)
			if f == faulty.Refuse {
				require.ErrorIs(t, err, crdt.ErrUnavailable)
			} else {
				require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			}
			require.False(t, rep.Version.IsZero())
			require.Len(t, rep.TooYoung, 1, "the orphan tombstone of a second ago")
			require.Equal(t, w > 1, len(rep.Tombstones) == 2, "write %d %v: tombstones %v", w, f, rep.Tombstones)
			require.Equal(t, w > 2, rep.Sum != nil, "write %d %v: sum %v", w, f, rep.Sum)
			require.Equal(t, w > 3, len(rep.Settled) == 1 && len(rep.Deleted) == 1, "write %d %v: settled %v, deleted %v", w, f, rep.Settled, rep.Deleted)
			require.Empty(t, rep.Collected, "write %d %v", w, f)
			b, err := l.Balance(ctx, acct)
			require.NoError(t, err)
			require.Equal(t, int64(9), b, "write %d %v", w, f)
		}
	}
}

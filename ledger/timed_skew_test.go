package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/timeid"
	"github.com/counterkit/counterkit/tpncounter"
)

// A timed transaction is recognised for the whole window its own time
// opens, whatever the clocks of the writers that recorded it, and one
// stamped more than FutureSkew ahead is refused: the landing writer's
// clock 5 s behind with the retry RetryWindow − 2 s after the landing, and
// the caller's clock 5 s ahead with the retry RetryWindow + 2 s after it,
// both answer Duplicate once the counter has forgotten the transaction
// (each counted twice when records lived by their writer's clock alone).
func TestTimedRetryWithSkewedClocks(t *testing.T) {
	ctx := context.Background()
	const w = time.Hour
	for _, c := range []struct {
		name                      string
		callerAhead, writerBehind time.Duration
		retryAfter                time.Duration
	}{
		{"writer 5s behind, retry W-2s after landing", 0, 5 * time.Second, w - 2*time.Second},
		{"caller 5s ahead, retry W+2s after landing", 5 * time.Second, 0, w + 2*time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			st := memory.NewSiblings()
			open := func(actor crdt.ActorID, behind time.Duration) *ledger.Ledger {
				l, err := ledger.New(st, "acct", ledger.Options{Actor: actor, RetryWindow: w,
					Counter: tpncounter.Options{TxnTime: tpncounter.TimeUUID, HistoryLength: 1, FoldedLength: 1},
					Clock:   func() time.Time { return now.Add(-behind) }})
				require.NoError(t, err)
				return l
			}
			a, b := open("a", c.writerBehind), open("b", 0)
			txn := func(at time.Time, n uint64) crdt.TxnID { return crdt.TxnID(timeid.FromParts(at, 1, n).String()) }
			x := txn(now.Add(c.callerAhead), 1)
			r, err := a.Credit(ctx, x, 100)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Applied, r.Outcome)
			for i := range 3 { // the counter forgets x
				_, err := a.Credit(ctx, txn(now, uint64(2+i)), 1)
				require.NoError(t, err)
			}
			landed := now
			now = landed.Add(c.retryAfter)
			r, err = b.Credit(ctx, x, 100)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Duplicate, r.Outcome, "the retry inside x's window")
			v, err := b.Value(ctx)
			require.NoError(t, err)
			require.Equal(t, int64(103), v)

			now = landed.Add(w + c.callerAhead + time.Second) // x's own time is past the window
			_, err = b.Credit(ctx, x, 100)
			require.ErrorIs(t, err, crdt.ErrOutsideWindow)
			_, err = b.Credit(ctx, txn(now.Add(ledger.DefaultFutureSkew+time.Second), 9), 1)
			require.ErrorIs(t, err, crdt.ErrOutsideWindow, "more than FutureSkew ahead")
			_, err = b.Credit(ctx, txn(now.Add(ledger.DefaultFutureSkew), 10), 1)
			require.NoError(t, err, "exactly FutureSkew ahead")
		})
	}
}

package bounded_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// sweepThenRetry: Account a (RetryWindow window, count window 1) credits x
// (5) at t0, then one other transaction, so that x leaves every holder's
// count window and only its record recognises a retry. At t0+retryAt,
// ledger.ExpireRecords (After after, 0: the default) runs over both
// record keys with a clock ahead of the Accounts' by ahead, then Account
// b retries x. It returns the retry's outcome and the value after it: 6
// if x counts once.
func sweepThenRetry(t *testing.T, window, retryAt, ahead, after time.Duration) (bounded.Outcome, int64) {
	t.Helper()
	ctx := context.Background()
	st := memory.NewSiblings()
	t0 := time.Unix(1_800_000_000, 0)
	now := t0
	open := func(actor string) *bounded.Account {
		a, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: crdt.ActorID(actor), RetryWindow: window,
			Counter: bounded.Options{Window: 1}, Clock: func() time.Time { return now }})
		require.NoError(t, err)
		return a
	}
	a, b := open("a"), open("b")
	_, err := a.Credit(ctx, "x", 5)
	require.NoError(t, err)
	_, err = a.Credit(ctx, "o", 1)
	require.NoError(t, err)
	c, err := a.Sync(ctx)
	require.NoError(t, err)
	require.Empty(t, c.Holders("x"), "x left a's window")

	// The Account's records are the ledger's: same key, same encoding.
	recs := storedRecords(t, st, "x")
	require.Len(t, recs, 1)
	require.Equal(t, ledger.Record{Txn: "x", Amount: 5, Writer: a.Writer(), At: recs[0].At, Version: recs[0].Version}, recs[0])
	require.True(t, recs[0].At.Equal(t0), "made at t0")

	now = t0.Add(retryAt)
	keys := []string{ledger.RecordKey("k", "x"), ledger.RecordKey("k", "o")}
	_, err = ledger.ExpireRecords(ctx, st, keys, ledger.ExpireOptions{After: after, Clock: func() time.Time { return now.Add(ahead) }})
	require.NoError(t, err)
	res, err := b.Credit(ctx, "x", 5)
	require.NoError(t, err)
	v, err := b.Value(ctx)
	require.NoError(t, err)
	return res.Outcome, v
}

// TestExpireRecordsKeepsTheAccountsRetryWindow: ledger.ExpireRecords with
// the default After, run with a clock up to an hour ahead of the
// Accounts' (bounded Accounts have no FutureSkew), never deletes a record
// a retry inside a bounded Account's default RetryWindow needs: the retry
// at the window's last instant is a duplicate and x counts once.
//
// The check can fail (the second table): a sweep clock an hour and 1 ns
// ahead at that last instant, an After shorter than the window, or an
// Account whose RetryWindow is longer than the After (48 hours against
// the default 25) let the retry inside the window count again, the limit
// SPEC.md 6.11 "Storage" states.
func TestExpireRecordsKeepsTheAccountsRetryWindow(t *testing.T) {
	w := bounded.DefaultRetryWindow
	for _, retryAt := range []time.Duration{time.Second, time.Hour, w - time.Nanosecond, w} {
		for _, ahead := range []time.Duration{0, 59 * time.Minute, time.Hour} {
			t.Run(fmt.Sprintf("retry at t0+%v, sweep %v ahead", retryAt, ahead), func(t *testing.T) {
				o, v := sweepThenRetry(t, 0, retryAt, ahead, 0)
				require.Equal(t, bounded.Duplicate, o)
				require.Equal(t, int64(6), v, "x counts once")
			})
		}
	}
	for _, tc := range []struct {
		name                          string
		window, retryAt, ahead, after time.Duration
	}{
		{"sweep an hour and 1ns ahead", 0, w, time.Hour + time.Nanosecond, 0},
		{"After 1ns shorter than the window", 0, w, 0, w - time.Nanosecond},
		{"After an hour", 0, 2 * time.Hour, 0, time.Hour},
		{"a 48h RetryWindow, the default After", 48 * time.Hour, 30 * time.Hour, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, v := sweepThenRetry(t, tc.window, tc.retryAt, tc.ahead, tc.after)
			require.Equal(t, bounded.Applied, o, "the retry inside the window, its record deleted")
			require.Equal(t, int64(11), v, "x counts twice")
		})
	}
	t.Run("a 48h RetryWindow, After 49h", func(t *testing.T) {
		o, v := sweepThenRetry(t, 48*time.Hour, 48*time.Hour, time.Hour, 49*time.Hour)
		require.Equal(t, bounded.Duplicate, o)
		require.Equal(t, int64(6), v, "x counts once")
	})
}

package balance_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

// TestLimitMixedTimingOptions shows the limit SPEC.md 9.3 states under
// "Timing assumptions": the option checks hold among one process's
// options only. A writer W (SettleGrace 10 min, Deadline 9 min) and a
// merger M (the defaults), each valid alone, share one account, with one
// clock and every write landing at once:
//
//  1. x (7) is applied and stored;
//  2. W retries x: it reads x's record (none yet);
//  3. M merges (records x, sums it), and 2 minutes later merges again:
//     the sum is settled and x's row and tombstone are removed;
//  4. W's retry sends its row 2 minutes after its read, within its
//     Deadline: a fresh row nothing cancels.
//
// x counts twice. If stored options came to be compared, the mismatch
// would be refused (crdt.ErrInvalidConfig) and this test must change.
func TestLimitMixedTimingOptions(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	mem := memory.NewPartitions()
	var inHook atomic.Bool
	var merger *balance.Transactions
	var mergeErr error
	armed := atomic.Bool{}
	hook := func(ctx context.Context, call faulty.Call, after bool) error {
		// After W's record lookup (a Scan of a record partition), run M.
		if !after || call.Method != faulty.MethodScan || !strings.Contains(call.Key, "#txn.") || !armed.Load() || inHook.Load() {
			return nil
		}
		armed.Store(false)
		inHook.Store(true)
		defer inHook.Store(false)
		c.Add(time.Second)
		if _, err := merger.Merge(ctx, acct); err != nil {
			mergeErr = err
			return nil
		}
		c.Add(2 * time.Minute)
		if _, err := merger.Merge(ctx, acct); err != nil {
			mergeErr = err
		}
		return nil
	}
	st := faulty.NewPartitions(mem, faulty.Options{Hook: hook})
	wopts := txnOpts(c)
	wopts.SettleGrace, wopts.Deadline = 10*time.Minute, 9*time.Minute
	writer, err := balance.NewTransactions(st, wopts)
	require.NoError(t, err, "W's options are valid on their own")
	merger, err = balance.NewTransactions(st, txnOpts(c))
	require.NoError(t, err)

	mustApply(t, writer, "x", 7, balance.Applied)
	armed.Store(true)
	out, err := writer.Apply(ctx, acct, "x", 7) // the retry
	require.NoError(t, err)
	require.NoError(t, mergeErr)
	got, err := merger.Balance(ctx, acct)
	require.NoError(t, err)
	require.Equal(t, balance.Applied, out)
	require.Equal(t, int64(14), got, "the limit: x (7) counts twice")
}

// TestLimitMergerClockAhead shows the limit SPEC.md 9.3 states under
// "Timing assumptions" for a merger whose clock runs an hour ahead: its
// sum row stops the merges of a merger with a correct clock
// (ErrClockSkew, nothing written) until that clock comes within
// FutureSkew of the row; the balance stays right throughout.
func TestLimitMergerClockAhead(t *testing.T) {
	ctx := context.Background()
	s := newSpy()
	now := t0
	good, err := balance.New(s, balance.Options{Clock: func() time.Time { return now }})
	require.NoError(t, err)
	ahead, err := balance.New(s, balance.Options{Clock: func() time.Time { return now.Add(time.Hour) }})
	require.NoError(t, err)
	require.NoError(t, good.Add(ctx, acct, timeid.New(now), 5))
	_, err = ahead.Merge(ctx, acct)
	require.NoError(t, err)
	for _, at := range []time.Duration{time.Minute, 30 * time.Minute, time.Hour - good.Options().FutureSkew - time.Second} {
		now = t0.Add(at)
		require.NoError(t, good.Add(ctx, acct, timeid.New(now), 1))
		before := s.Stored(acct)
		_, err = good.Merge(ctx, acct)
		require.ErrorIs(t, err, balance.ErrClockSkew, "at %v", at)
		require.Equal(t, before, s.Stored(acct))
	}
	now = t0.Add(time.Hour - good.Options().FutureSkew + time.Second)
	_, err = good.Merge(ctx, acct)
	require.NoError(t, err)
	b, err := good.Balance(ctx, acct)
	require.NoError(t, err)
	require.Equal(t, int64(8), b)
}

package cassandra

import (
	"context"
	"errors"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
)

func TestIntegrationBalanceAccounting(t *testing.T) {
	db := newTestDB(t, Options{})
	l, err := balance.New(db.Balance(), balance.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	acct := uniqueKey(t, "acct")

	cctx, calls := counting(ctx)
	require.NoError(t, l.Add(cctx, acct, deltalog.NewIDAt(time.Now()), 7))
	requireCalls(t, calls, 0, 1, 0, "balance increment")
	require.NoError(t, l.Add(ctx, acct, deltalog.NewIDAt(time.Now()), -2))

	cctx, calls = counting(ctx)
	v, err := l.Balance(cctx, acct)
	require.NoError(t, err)
	require.Equal(t, int64(5), v)
	requireCalls(t, calls, 1, 0, 1, "balance sum (single wide-row read)")

	rows, err := db.Balance().Rows(ctx, acct)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Equal(t, -1, balance.CompareRows(rows[0], rows[1]))
	require.NoError(t, db.Balance().DeleteAccount(ctx, acct))
	rows, err = db.Balance().Rows(ctx, acct)
	require.NoError(t, err)
	require.Empty(t, rows)
}

// TestIntegrationBalanceConcurrent runs writers (retrying after forced
// timeouts with the same id) and two merging goroutines on one account, so
// the seed's incre/merge and merge/merge interleavings all occur, then
// compares the balance with the model and checks that after everything
// settles the partition shrinks to sum rows only.
func TestIntegrationBalanceConcurrent(t *testing.T) {
	db := newTestDB(t, Options{})
	seed := testSeed(t)
	ctx := context.Background()
	acct := uniqueKey(t, "conc")
	opts := balance.Options{Window: 2 * time.Second, FutureSkew: 100 * time.Millisecond, SafetyMargin: time.Second,
		MaxMerge: 5 * time.Second, SettleGrace: 6 * time.Second, GCGrace: 6 * time.Second}
	l, err := balance.New(db.Balance(), opts)
	require.NoError(t, err)

	const writers = 4
	perWriter := testCases(t, 40)
	var (
		mu    sync.Mutex
		model int64
		wg    sync.WaitGroup
		stop  = make(chan struct{})
		werr  = make(chan error, writers)
		merr  = make(chan error, 2)
	)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed + int64(w)))
			for i := 0; i < perWriter; i++ {
				id := deltalog.NewIDAt(time.Now())
				amount := int64(rng.Intn(199) - 99)
				if amount == 0 {
					amount = 100
				}
				for attempt := 0; ; attempt++ {
					actx, cancel := ctx, context.CancelFunc(func() {})
					if attempt < 2 && rng.Intn(3) == 0 {
						actx, cancel = context.WithTimeout(ctx, time.Duration(rng.Intn(300))*time.Microsecond)
					}
					err := l.Add(actx, acct, id, amount)
					cancel()
					if err == nil {
						mu.Lock()
						model += amount
						mu.Unlock()
						break
					}
					if !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, crdt.ErrUnavailable) {
						werr <- err
						return
					}
				}
				time.Sleep(time.Duration(rng.Intn(40)) * time.Millisecond)
			}
		}(w)
	}
	for m := 0; m < 2; m++ {
		go func() {
			for {
				select {
				case <-stop:
					merr <- nil
					return
				default:
				}
				if _, err := l.Merge(ctx, acct); err != nil && !errors.Is(err, crdt.ErrUnavailable) {
					merr <- err
					return
				}
				time.Sleep(30 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	close(stop)
	close(werr)
	for err := range werr {
		require.NoError(t, err)
	}
	require.NoError(t, <-merr)
	require.NoError(t, <-merr)
	v, err := l.Balance(ctx, acct)
	require.NoError(t, err)
	require.Equal(t, model, v)

	// Let everything pass every grace period, merge until quiet, and check
	// the value again and the partition's size.
	time.Sleep(opts.GCGrace + opts.SafetyMargin)
	for i := 0; i < 4; i++ {
		_, err := l.Merge(ctx, acct)
		require.NoError(t, err)
		time.Sleep(opts.GCGrace / 2)
	}
	v, err = l.Balance(ctx, acct)
	require.NoError(t, err)
	require.Equal(t, model, v)
	rows, err := db.Balance().Rows(ctx, acct)
	require.NoError(t, err)
	t.Logf("%d rows left after settling (%d updates)", len(rows), writers*perWriter)
	require.Less(t, len(rows), writers*perWriter, "settled merges delete the rows they cover")
}

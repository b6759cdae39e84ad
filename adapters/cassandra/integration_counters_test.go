package cassandra

// Counter-level behaviours, through eachTarget (on the model, and on the
// real cluster when CASSANDRA_HOSTS is set): the statement costs of the
// log and balance types, and concurrent writers, merges and compactions
// whose totals are checked against a reference.

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

func TestIntegrationLogAccounting(t *testing.T) { eachTarget(t, integrationLogAccounting) }

func integrationLogAccounting(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{})
	c, err := deltalog.New(db.Partitions(), deltalog.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	a, b := uniqueKey(t, "a"), uniqueKey(t, "b")

	cctx, calls := counting(ctx)
	require.NoError(t, c.Add(cctx, a, timeid.New(time.Now()), 5))
	requireCalls(t, calls, 0, 1, 0, "log increment")

	var batch deltalog.Batch
	id := timeid.New(time.Now())
	batch.Add(a, id, -2)
	batch.Add(b, id, 2)
	cctx, calls = counting(ctx)
	require.NoError(t, c.Apply(cctx, &batch))
	requireCalls(t, calls, 0, 1, 0, "log transfer (one logged batch)")

	r, err := c.Read(ctx, a)
	require.NoError(t, err)
	require.Equal(t, int64(3), r.Value)
	r, err = c.Read(ctx, b)
	require.NoError(t, err)
	require.Equal(t, int64(2), r.Value)
}

// TestIntegrationLogConcurrent runs writers (each retrying after forced
// timeouts with the same id) and concurrent merges and compactions over one
// counter, then compares the value with the model: the sum of every delta
// whose Add eventually succeeded.
func TestIntegrationLogConcurrent(t *testing.T) { eachTarget(t, integrationLogConcurrent) }

func integrationLogConcurrent(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{ScanPageSize: 7})
	ctx := context.Background()
	key := uniqueKey(t, "conc")
	// The write window is short and the cells' ids are spread over the
	// past, so merges and compactions really happen during the run.
	opts := deltalog.Options{Window: 2 * time.Second, FutureSkew: 100 * time.Millisecond,
		SafetyMargin: time.Second, MaxScan: 5 * time.Second, CompactGrace: 7 * time.Second}
	c, err := deltalog.New(db.Partitions(), opts)
	require.NoError(t, err)

	model := concurrentLoad{seed: testSeed(t), writers: 4, perWriter: testCases(t, 60), pause: 30 * time.Millisecond,
		amount: func(rng *rand.Rand) int64 { return nonZero(int64(rng.Intn(19)-9), 1) },
		// A retry that comes too late (crdt.ErrOutsideWindow) fails the
		// test: the outcome of the first attempt is unknown, which the
		// test cannot model.
		add: func(ctx context.Context, id timeid.ID, n int64) error { return c.Add(ctx, key, id, n) },
		maintain: func() error {
			if _, _, err := c.Merge(ctx, key); err != nil {
				return err
			}
			_, err := c.Compact(ctx, key)
			return err
		}, every: 50 * time.Millisecond,
	}.run(t)
	r, err := c.Read(ctx, key)
	require.NoError(t, err)
	require.Equal(t, model, r.Value)
	// Wait out the window, merge once more, and read again: same value.
	time.Sleep(opts.Window + opts.SafetyMargin + 500*time.Millisecond)
	_, merged, err := c.Merge(ctx, key)
	require.NoError(t, err)
	require.True(t, merged)
	r2, err := c.Read(ctx, key)
	require.NoError(t, err)
	require.Equal(t, model, r2.Value)
	require.LessOrEqual(t, r2.Cells, 1, "after the final merge a read costs one cell")
}

func TestIntegrationBalanceAccounting(t *testing.T) { eachTarget(t, integrationBalanceAccounting) }

func integrationBalanceAccounting(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{})
	l, err := balance.New(db.Partitions(), balance.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	acct := uniqueKey(t, "acct")

	cctx, calls := counting(ctx)
	require.NoError(t, l.Add(cctx, acct, timeid.New(time.Now()), 7))
	requireCalls(t, calls, 0, 1, 0, "balance increment")
	require.NoError(t, l.Add(ctx, acct, timeid.New(time.Now()), -2))

	cctx, calls = counting(ctx)
	v, err := l.Balance(cctx, acct)
	require.NoError(t, err)
	require.Equal(t, int64(5), v)
	requireCalls(t, calls, 1, 0, 1, "balance sum (one single-partition read)")

	require.NoError(t, l.Delete(ctx, acct))
	v, err = l.Balance(ctx, acct)
	require.NoError(t, err)
	require.Zero(t, v)
}

// TestIntegrationBalanceConcurrent runs writers (retrying after forced
// timeouts with the same id) and two merging goroutines on one account, so
// increment/merge and merge/merge interleavings all occur, then compares
// the balance with the model and checks that after everything settles the
// partition has shrunk.
func TestIntegrationBalanceConcurrent(t *testing.T) { eachTarget(t, integrationBalanceConcurrent) }

func integrationBalanceConcurrent(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{})
	ctx := context.Background()
	acct := uniqueKey(t, "conc")
	opts := balance.Options{Window: 2 * time.Second, FutureSkew: 100 * time.Millisecond, SafetyMargin: time.Second,
		MaxMerge: 5 * time.Second, SettleGrace: 6 * time.Second, GCGrace: 6 * time.Second}
	l, err := balance.New(db.Partitions(), opts)
	require.NoError(t, err)

	const writers = 4
	perWriter := testCases(t, 40)
	model := concurrentLoad{seed: testSeed(t), writers: writers, perWriter: perWriter, pause: 40 * time.Millisecond,
		amount: func(rng *rand.Rand) int64 { return nonZero(int64(rng.Intn(199)-99), 100) },
		add:    func(ctx context.Context, id timeid.ID, n int64) error { return l.Add(ctx, acct, id, n) },
		maintain: func() error {
			if _, err := l.Merge(ctx, acct); err != nil && !errors.Is(err, crdt.ErrUnavailable) {
				return err
			}
			return nil
		}, every: 30 * time.Millisecond,
	}.run(t)
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
	rows, err := db.Partitions().Snapshot(ctx, acct, balance.MaxRows, store.ReadComplete)
	require.NoError(t, err)
	t.Logf("%d rows left after settling (%d updates)", len(rows), writers*perWriter)
	require.Less(t, len(rows), writers*perWriter, "settled merges delete the rows they cover")
}

// concurrentLoad is writers goroutines each making perWriter updates of a
// nonzero amount with fresh ids, pausing up to pause between them, while
// two goroutines call maintain every so often until the writers are done.
// A write whose caller timed out (forced, on some first attempts) is
// retried with the same id until it lands; an error other than
// crdt.ErrAmbiguousWrite or crdt.ErrUnavailable fails the test, as does
// any error of maintain.
type concurrentLoad struct {
	seed               int64
	writers, perWriter int
	pause, every       time.Duration
	amount             func(*rand.Rand) int64
	add                func(ctx context.Context, id timeid.ID, n int64) error
	maintain           func() error
}

// retryFor bounds the retries of one write (or Save): past it the test
// fails with the last error rather than retrying for good, as it would
// against a cluster that stays down.
const retryFor = time.Minute

// run runs the load and returns the sum of the amounts written.
func (l concurrentLoad) run(t *testing.T) int64 {
	ctx := context.Background()
	var (
		mu    sync.Mutex
		model int64
		wg    sync.WaitGroup
		stop  = make(chan struct{})
		werr  = make(chan error, l.writers)
		merr  = make(chan error, 2)
	)
	for w := 0; w < l.writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(l.seed + int64(w)))
			for i := 0; i < l.perWriter; i++ {
				id := timeid.New(time.Now())
				n := l.amount(rng)
				for attempt, end := 0, time.Now().Add(retryFor); ; attempt++ {
					actx, cancel := ctx, context.CancelFunc(func() {})
					if attempt < 2 && rng.Intn(3) == 0 {
						actx, cancel = context.WithTimeout(ctx, time.Duration(rng.Intn(300))*time.Microsecond)
					}
					err := l.add(actx, id, n)
					cancel()
					if err == nil {
						mu.Lock()
						model += n
						mu.Unlock()
						break
					}
					if !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, crdt.ErrUnavailable) {
						werr <- err
						return
					}
					if time.Now().After(end) {
						werr <- fmt.Errorf("writer %d: write %d still failing after %d retries in %v: %w", w, i, attempt, retryFor, err)
						return
					}
				}
				time.Sleep(time.Duration(rng.Intn(int(l.pause/time.Millisecond))) * time.Millisecond)
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
				if err := l.maintain(); err != nil {
					merr <- err
					return
				}
				time.Sleep(l.every)
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
	return model
}

// nonZero returns n, or instead when n is zero.
func nonZero(n, instead int64) int64 {
	if n == 0 {
		return instead
	}
	return n
}

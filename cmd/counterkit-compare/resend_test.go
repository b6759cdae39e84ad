package main

// counterkit-compare's workload: what it resends, what it reports and
// which flags it takes. Every test runs on the
// in-memory store with a manual clock (it moves only when a store call or
// a sleep moves it), so each is deterministic.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/store"
)

// manualClock is a clock that moves only when advance or sleep moves it.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *manualClock) sleep(_ context.Context, d time.Duration) { c.advance(d) }

// slowPartitions is a memory store whose every Apply takes per on clock,
// and whose Apply number refuse (1-based) is refused, writing nothing
// (crdt.ErrUnavailable: a caller resends it).
type slowPartitions struct {
	store.Partitions
	clock  *manualClock
	per    time.Duration
	refuse int64
	n      atomic.Int64
}

func (p *slowPartitions) Apply(ctx context.Context, muts []store.Mutation) error {
	p.clock.advance(p.per)
	if p.n.Add(1) == p.refuse {
		return fmt.Errorf("slow store: refused: %w", crdt.ErrUnavailable)
	}
	return p.Partitions.Apply(ctx, muts)
}

func manualConfig(c *manualClock) compareConfig {
	return compareConfig{
		workers: 1, duration: 4 * time.Minute, timeout: time.Hour, readTimeout: time.Hour,
		resendMin: 61 * time.Second, resendMax: 61 * time.Second, resolveFor: 5 * time.Minute,
		shards: 1, flushEvery: 1, mergeEvery: time.Hour, runID: "resend", seed: 1,
		now: c.Now, sleep: c.sleep,
	}
}

// TestResendInsideWriteWindowIsApplied: with flags inside every
// documented bound (-duration at most 4m; -resend-max "inside the
// deltalog and balance write windows: 10m and 5m"), a balance transaction
// made at the end of a 4-minute run, refused once (nothing written) and
// resent 61 seconds later, is a resend well inside balance's 5-minute
// write window. A caller that dated its update id when it made the
// transaction gets it applied. compare dates every update id at the
// type's start plus seq µs (targets.go, updateID: base is the time the
// first writer was made), so the id is already 4 minutes old when first
// sent and 5 minutes 1 second old at the resend: balance refuses it with
// crdt.ErrOutsideWindow, compare gives it up, and the row ends with
// unresolved 1 and drift -1 where the promise is drift 0.
func TestResendInsideWriteWindowIsApplied(t *testing.T) {
	c := newManualClock()
	cfg := manualConfig(c)
	// Each Apply takes one minute of the clock: transactions 0..3 are
	// sent at minutes 0..3 of the 4-minute run; the fourth Apply
	// (transaction 3, made and sent at minute 3) is refused, and resent
	// at 4:01, 61 seconds after it was made.
	part := &slowPartitions{Partitions: memory.NewPartitions(), clock: c, per: time.Minute, refuse: 4}
	targets, err := compareTargets([]string{"balance"}, cfg, nil, nil, part)
	require.NoError(t, err)
	rows := runComparison(context.Background(), cfg, targets, nil)
	require.Len(t, rows, 1)
	r := rows[0]
	require.Empty(t, r.Error)
	require.Equal(t, int64(4), r.Distinct)
	require.Equal(t, int64(1), r.Resent)
	require.Zero(t, r.GaveUp, "a resend 61 s after the transaction was made was refused: %s", r.FirstFailure)
	require.Zero(t, r.Unresolved)
	require.Zero(t, r.Drift)
}

// countingNative is a native counter whose every Add takes per on clock
// and whose Add number fail (1-based) lands and then reports a timeout.
type countingNative struct {
	clock *manualClock
	per   time.Duration
	fail  int64
	n     atomic.Int64
	val   atomic.Int64
}

func (n *countingNative) Add(_ context.Context, _ string, delta int64) error {
	n.clock.advance(n.per)
	n.val.Add(delta)
	if n.n.Add(1) == n.fail {
		return fmt.Errorf("native: timed out after applying")
	}
	return nil
}

func (n *countingNative) Value(context.Context, string) (int64, error) { return n.val.Load(), nil }

// TestPerSecondIsOfTheRun: the help says per_s is "acknowledged
// transactions per second of the run", and tells the run ("each type in
// turn for -duration") from its resends (the CPU columns are "over the
// type's run and resends"). Ten increments of one second each make a
// 10-second run; the last one times out and is resent an hour later
// (-resend-min = -resend-max = 1h). per_s should be about 1 (10 acked in
// 10 s, or 9 in the run); compare divides by the whole span including
// the hour spent waiting to resend (compare.go, runTarget: elapsed is
// measured after wg.Wait(), so after the resends), and prints 0.003.
// With the defaults (-duration 10s, resends 2s..1m) per_s, and the
// "against native" ratios, measure the resend delays drawn, not the
// store's throughput.
func TestPerSecondIsOfTheRun(t *testing.T) {
	c := newManualClock()
	cfg := manualConfig(c)
	cfg.count, cfg.duration = 10, time.Minute
	cfg.resendMin, cfg.resendMax, cfg.resolveFor = time.Hour, time.Hour, 2*time.Hour
	native := &countingNative{clock: c, per: time.Second, fail: 10}
	rows := runComparison(context.Background(), cfg, []compareTarget{nativeTarget(native, "k", new(atomic.Int64))}, nil)
	r := rows[0]
	t.Logf("%+v", r)
	require.Equal(t, int64(10), r.Acknowledged)
	require.Equal(t, int64(1), r.Resent)
	require.InDelta(t, 1.0, r.PerSecond, 0.2, "per_s of a 10-second run with 10 acknowledged increments")
}

// TestResendMaxStaysInsideWriteWindows: -resend-max's help says
// "inside the deltalog and balance write windows: 10m and 5m", but the
// flag is not checked against them: with -resend-min 6m -resend-max 6m
// every balance resend is refused as outside the window and given up,
// and the run still exits 0 ("exact within the unresolved"). A value the
// tool cannot honour should be a usage error.
func TestResendMaxStaysInsideWriteWindows(t *testing.T) {
	cfg := goldenConfig()
	cfg.resendMin, cfg.resendMax = 6*time.Minute, 6*time.Minute
	_, err := checkCompareFlags(cfg, []string{"h1"}, "ks", "native,balance", "table")
	require.ErrorIs(t, err, crdt.ErrInvalidConfig, "-resend-max 6m is outside balance's 5m write window")
}

// TestHugeResendMaxIsAUsageError: checkCompareFlags takes
// -resend-min 0 -resend-max 2562047h47m16.854775807s (the largest
// duration), and the first resend then panics: resendQueue.put draws
// rng.Int64N(int64(resendMax-resendMin)+1), whose argument overflows to
// math.MinInt64 ("panic: invalid argument to Int64N", in a worker
// goroutine, so the process dies). A flag value should give a usage
// error, not a panic. The run happens in a child process (this test
// binary, re-run on this test alone) so the panic does not take the
// other tests down.
func TestHugeResendMaxIsAUsageError(t *testing.T) {
	cfg := goldenConfig()
	cfg.resendMin, cfg.resendMax = 0, time.Duration(1<<63-1)
	if _, err := checkCompareFlags(cfg, []string{"h1"}, "ks", "native", "table"); err != nil {
		return // refused as a usage error: fine
	}
	if os.Getenv("COUNTERKIT_COMPARE_HUGE_RESEND") == "1" {
		cfg.count, cfg.resolveFor = 1, time.Millisecond
		native := newNativeDouble(1, 1) // the Add times out: it is queued for a resend
		runComparison(context.Background(), cfg, []compareTarget{nativeTarget(native, "k", new(atomic.Int64))}, nil)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHugeResendMaxIsAUsageError$", "-test.count=1")
	cmd.Env = append(os.Environ(), "COUNTERKIT_COMPARE_HUGE_RESEND=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "flags checkCompareFlags accepted crash the run:\n%s", out)
}

// TestUnresolvedCountsEveryWaitingTransaction: with four
// workers and a store whose every write times out, no transaction is
// acknowledged, every one is resent until -resolve-for ends, and every one
// is counted unresolved exactly once (none dropped, none counted as
// resolved); the native double's drift is what it applied beyond the
// distinct transactions.
func TestUnresolvedCountsEveryWaitingTransaction(t *testing.T) {
	cfg := goldenConfig()
	cfg.workers, cfg.count, cfg.resolveFor = 4, 5, 100*time.Millisecond
	native := newNativeDouble(1, 1)
	rows := runComparison(context.Background(), cfg, []compareTarget{nativeTarget(native, "k", new(atomic.Int64))}, nil)
	r := rows[0]
	require.Equal(t, int64(20), r.Distinct)
	require.Zero(t, r.Acknowledged)
	require.Equal(t, int64(20), r.Unresolved)
	require.Equal(t, native.calls, r.Distinct+r.Resent, "every call is a first send or a resend")
	require.Equal(t, native.calls-r.Distinct, r.Drift)
	require.Equal(t, r.Resent, r.ResentElsewhere, "with four workers a resend goes through another worker")
}

// TestWriteWindowsAreThePackagesDefaults: the windows the flags are
// checked against are those balance and deltalog use by default.
func TestWriteWindowsAreThePackagesDefaults(t *testing.T) {
	a, err := balance.New(memory.NewPartitions(), balance.Options{})
	require.NoError(t, err)
	c, err := deltalog.New(memory.NewPartitions(), deltalog.Options{})
	require.NoError(t, err)
	require.Equal(t, map[string]time.Duration{"balance": a.Options().Window, "deltalog": c.Options().Window}, writeWindows)
}

// TestResolveForEndsFailingResends: -resolve-for bounds the resends even
// while they keep failing, and the run stops making transactions when its
// count is reached even while resends are due. One worker, 50
// transactions, every write failing: the run ends, every transaction
// unresolved.
func TestResolveForEndsFailingResends(t *testing.T) {
	cfg := goldenConfig()
	cfg.count, cfg.resolveFor = 50, 100*time.Millisecond
	native := newNativeDouble(1, 1)
	done := make(chan compareRow, 1)
	go func() {
		done <- runComparison(context.Background(), cfg, []compareTarget{nativeTarget(native, "k", new(atomic.Int64))}, nil)[0]
	}()
	select {
	case r := <-done:
		require.Equal(t, int64(50), r.Distinct)
		require.Equal(t, int64(50), r.Unresolved)
	case <-time.After(time.Minute):
		t.Fatal("the run did not end: resends that keep failing held it past -resolve-for")
	}
}

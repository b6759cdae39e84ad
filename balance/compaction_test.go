package balance_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

type burstTid struct{}

// runBurst drives waves of concurrent operations on one account: in each
// wave, several merges and increments run at once and a seeded scheduler
// interleaves them at every store call, while the clock moves up to
// 300ms per step. It returns the sum of the increments that landed.
func runBurst(rng *rand.Rand, l *balance.Accounts, store *spy, c *clock, waves int) (int64, error) {
	ctx := context.Background()
	var want int64
	sched := newScheduler()
	for range waves {
		type bop struct {
			merge  bool
			id     balance.ID
			amount int64
		}
		var ops []bop
		for range 2 + rng.Intn(7) {
			if rng.Intn(3) == 0 {
				ops = append(ops, bop{id: timeid.New(c.now), amount: 1 + rng.Int63n(99)})
			} else {
				ops = append(ops, bop{merge: true})
			}
		}
		errs := make([]error, len(ops))
		store.SetHook(func(ctx context.Context, call faulty.Call, after bool) error {
			i, ok := ctx.Value(burstTid{}).(int)
			if !ok {
				return nil
			}
			if after {
				if call.Method == faulty.MethodApply && !ops[i].merge {
					want += ops[i].amount
				}
				return nil
			}
			sched.park(i)
			return nil
		})
		_ = sched.run(rng, len(ops), func(i int) {
			cctx := context.WithValue(ctx, burstTid{}, i)
			if ops[i].merge {
				_, errs[i] = l.Merge(cctx, acct)
			} else {
				errs[i] = l.Add(cctx, acct, ops[i].id, ops[i].amount)
			}
		}, func() error {
			c.now = c.now.Add(time.Duration(rng.Intn(300)) * time.Millisecond)
			return nil
		})
		store.SetHook(nil)
		for _, err := range errs {
			if err != nil && !errors.Is(err, balance.ErrSlowMerge) {
				return 0, err
			}
		}
	}
	return want, nil
}

// mergesToCompact runs merges spaced by step until the account has at most
// one row, and returns how many it took (at most limit).
func mergesToCompact(l *balance.Accounts, store *spy, c *clock, step time.Duration, limit int, want int64) (int, error) {
	ctx := context.Background()
	for n := 1; n <= limit; n++ {
		c.now = c.now.Add(step)
		if _, err := l.Merge(ctx, acct); err != nil {
			return n, err
		}
		b, err := l.Balance(ctx, acct)
		if err != nil || b != want {
			return n, fmt.Errorf("balance %d (%v) after %d quiescent merges, want %d", b, err, n, want)
		}
		if len(store.Stored(acct)) <= 1 {
			return n, nil
		}
	}
	return limit, fmt.Errorf("%d rows left after %d merges", len(store.Stored(acct)), limit)
}

// TestBurstCompactsInBoundedMerges builds long chains of sum rows with
// bursts of racing merges and increments, then checks that an idle account
// is back to one row within the bound the package documentation states:
// two merges, the first once every row is GCGrace old and the second
// SettleGrace + FutureSkew after it.
//
// It runs proptest.Scale(6) bursts of 60 waves.
//
// Replay: COUNTERKIT_SEED=<seed> go test ./balance -run '^TestBurstCompactsInBoundedMerges$'
func TestBurstCompactsInBoundedMerges(t *testing.T) {
	seed := proptest.Seed()
	n := proptest.Scale(6)
	t.Logf("seed %d, %d bursts; replay: %s", seed, n, proptest.Replay(t, seed))
	rng := rand.New(rand.NewSource(seed))
	worst, longest := 0, 0
	for k := range n {
		c := &clock{now: t0}
		store := newSpy()
		l, err := balance.New(store, balance.Options{Clock: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		want, err := runBurst(rng, l, store, c, 60)
		if err != nil {
			t.Fatalf("burst %d (seed %d): %v", k, seed, err)
		}
		sums := 0
		for _, r := range store.Stored(acct) {
			if r.Kind == balance.KindSum {
				sums++
			}
		}
		longest = max(longest, sums)
		opts := l.Options()
		// Idle from here: wait until every row is GCGrace old (ids may be
		// FutureSkew ahead of the clock), then merge SettleGrace (plus the
		// skew) apart.
		step := opts.SettleGrace + opts.FutureSkew
		c.now = c.now.Add(opts.GCGrace + opts.FutureSkew - step)
		got, err := mergesToCompact(l, store, c, step, 1000, want)
		if err != nil {
			t.Fatalf("burst %d (seed %d): %v", k, seed, err)
		}
		worst = max(worst, got)
		if got > 2 {
			t.Errorf("burst %d (seed %d): %d sum rows after the burst took %d merges to compact, bound 2", k, seed, sums, got)
		}
	}
	t.Logf("up to %d sum rows after a burst; compacted in at most %d merges", longest, worst)
}

// TestCompactionBoundUpToMaxCover checks the compaction bound at its
// limit: an idle account of MaxCover live rows, every row GCGrace old, is
// one row after two merges SettleGrace + FutureSkew apart, while with more
// live rows the first merge covers only the oldest MaxCover and the two
// merges leave more.
func TestCompactionBoundUpToMaxCover(t *testing.T) {
	testsize.SkipSequential(t)
	ctx := context.Background()
	for _, n := range []int{balance.MaxCover, balance.MaxCover + 1} {
		l, s, c := newAccounts(t)
		var rows []balance.Row
		for i := range n {
			rows = append(rows, balance.NormalRow(timeid.FromParts(c.now.Add(-time.Duration(i)*time.Millisecond), 1, uint64(i)), int64(i%7+1)))
		}
		var want int64
		for i := 0; i < len(rows); i += 1000 {
			batch := rows[i:min(i+1000, len(rows))]
			for _, r := range batch {
				want += r.Amount
			}
			if err := writeRows(s, acct, batch...); err != nil {
				t.Fatal(err)
			}
		}
		o := l.Options()
		c.now = c.now.Add(o.GCGrace + time.Second)
		for _, wait := range []time.Duration{0, o.SettleGrace + o.FutureSkew} {
			c.now = c.now.Add(wait)
			if _, err := l.Merge(ctx, acct); err != nil {
				t.Fatal(err)
			}
			if b, err := l.Balance(ctx, acct); err != nil || b != want {
				t.Fatalf("%d rows: balance %d (%v), want %d", n, b, err, want)
			}
		}
		left := len(s.Stored(acct))
		if n <= balance.MaxCover && left != 1 {
			t.Errorf("%d live rows: %d rows left after two merges, want 1", n, left)
		}
		if n > balance.MaxCover && left == 1 {
			t.Errorf("%d live rows: one row left after two merges, beyond the bound's MaxCover", n)
		}
	}
}

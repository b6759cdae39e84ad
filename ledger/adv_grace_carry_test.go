package ledger_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestGraceDropTakeOutSurvivesFailedFetch (found by a review):
// lateTakeOut, a's take-out unwritten; a is idle past RetiredGrace/2 and
// the account fetch of its next read (a Value or an Update), which drops
// the state, fails. The take-out stays held (carry) for the read after:
// x counts once. Kept only by the failed read, it was lost (+5).
func TestGraceDropTakeOutSurvivesFailedFetch(t *testing.T) {
	for _, tc := range []struct {
		retire time.Duration
		update bool
	}{{-1, false}, {time.Hour, false}, {time.Hour, true}} {
		t.Run(fmt.Sprintf("retire=%v,update=%v", tc.retire, tc.update), func(t *testing.T) {
			ctx := context.Background()
			mem, clock, la, a, b, run := limitPair(t, tc.retire)
			lateTakeOut(t, mem, la, b, run, true, func(x crdt.TxnID, n int64) (ledger.Result, error) { return a.Update(ctx, x, n) },
				func() error { _, err := a.Find(ctx); return err })
			unwritten, _ := ledger.Holding(a)
			require.True(t, unwritten)

			clock.Add(5*24*time.Hour + time.Minute)
			la.plan.set(nil, []faulty.Fault{faulty.Refuse}, nil)
			var err error
			if tc.update {
				_, err = a.Update(ctx, "a1", 1)
			} else {
				_, err = a.Value(ctx)
			}
			require.Error(t, err, "the account fetch fails")
			la.plan.set(nil, nil, nil)
			unwritten, _ = ledger.Holding(a)
			t.Logf("after the failed fetch: unwritten %v", unwritten)

			run.upd(a, "a2", 1, tpncounter.Applied)
			run.settle(a, b)
			require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
		})
	}
}

// TestGraceDropTakeOutOfAnEarlierIncarnation (found by a review):
// lateTakeOut, a's take-out unwritten; a reads within RetiredGrace/2 but
// writes nothing for RetireAfter + RetiredGrace/2, so its next Update
// takes a new incarnation keeping the state (TestRenewStaleKeepsTakeOut),
// and that Update's puts are refused. After a further RetiredGrace/2 the
// drop carries the take-out as the old entry's, at its stored version,
// and the read makes it again: x counts once. Carried as the new
// incarnation's, it was lost (+5).
func TestGraceDropTakeOutOfAnEarlierIncarnation(t *testing.T) {
	ctx := context.Background()
	mem, clock, la, a, b, run := limitPair(t, -1)
	lateTakeOut(t, mem, la, b, run, true, func(x crdt.TxnID, n int64) (ledger.Result, error) { return a.Update(ctx, x, n) },
		func() error { _, err := a.Find(ctx); return err })
	clock.Add(4 * 24 * time.Hour)
	_, err := a.Value(ctx)
	require.NoError(t, err)
	clock.Add(24*time.Hour + time.Minute)
	aw := a.Writer()
	la.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse, faulty.Refuse, faulty.Refuse}, nil, nil)
	_, err = a.Update(ctx, "a1", 1)
	require.Error(t, err, "a1's puts refused")
	la.plan.set(nil, nil, nil)
	require.NotEqual(t, aw, a.Writer(), "a took a new incarnation")
	unwritten, _ := ledger.Holding(a)
	require.True(t, unwritten, "the old entry's take-out is held, unwritten")

	clock.Add(5*24*time.Hour + time.Minute)
	run.upd(a, "a2", 1, tpncounter.Applied)
	run.settle(a, b)
	require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
}

// TestBookKeepsCarriedTakeOut (found by a review): lateTakeOut through a
// Book (MaxOpen 1), a's take-out unwritten. After RetiredGrace/2 a Value
// on the key drops the state and its account fetch fails: the Book must
// still hold the key's ledger (BookHolding), which carries the take-out,
// when a Value on another key would evict it. x counts once.
func TestBookKeepsCarriedTakeOut(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la := newLane(mem)
	bk, err := ledger.NewBook(la, ledger.BookOptions{MaxOpen: 1, Options: limitOptions(clock, "a", time.Hour)})
	require.NoError(t, err)
	_, b := limitLedger(t, mem, clock, "b", -1)
	run := &limitRun{t: t}
	update := func(x crdt.TxnID, n int64) (ledger.Result, error) {
		res, err := bk.Update(ctx, advKey, x, n)
		return res.Result, err
	}
	lateTakeOut(t, mem, la, b, run, true, update, func() error { _, err := bk.Find(ctx, advKey); return err })
	unwritten, _ := ledger.BookHolding(bk, advKey)
	require.True(t, unwritten)

	clock.Add(5*24*time.Hour + time.Minute)
	la.plan.set(nil, []faulty.Fault{faulty.Refuse}, nil)
	_, err = bk.Value(ctx, advKey)
	require.Error(t, err, "the account fetch fails")
	la.plan.set(nil, nil, nil)
	unwritten, _ = ledger.BookHolding(bk, advKey)
	t.Logf("after the failed fetch the Book holds unwritten: %v", unwritten)
	_, err = bk.Value(ctx, "other") // evicts advKey's ledger unless it must stay
	require.NoError(t, err)
	for i := range 3 {
		res, err := update(crdt.TxnID(fmt.Sprintf("z%d", i)), 1)
		require.NoError(t, err)
		require.Equal(t, tpncounter.Applied, res.Outcome)
		run.want++
		_, err = bk.Find(ctx, advKey)
		require.NoError(t, err)
		run.upd(b, crdt.TxnID(fmt.Sprintf("zb%d", i)), 1, tpncounter.Applied)
	}
	require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
}

// TestGraceDropTakeOutDroppedTwice (found by a review): lateTakeOut, a's
// take-out unwritten. a is idle past RetiredGrace/2: its next Update
// drops the state and makes the take-out again, but its puts are refused.
// a is idle past RetiredGrace/2 once more. With RetireAfter 0 the first
// drop took a new incarnation, so the take-out made again is the old
// entry's, carried as such: x counts once (+5 when it was carried as the
// new incarnation's).
func TestGraceDropTakeOutDroppedTwice(t *testing.T) {
	for _, retire := range []time.Duration{-1, time.Hour} {
		t.Run(fmt.Sprintf("retire=%v", retire), func(t *testing.T) {
			ctx := context.Background()
			mem, clock, la, a, b, run := limitPair(t, retire)
			lateTakeOut(t, mem, la, b, run, true, func(x crdt.TxnID, n int64) (ledger.Result, error) { return a.Update(ctx, x, n) },
				func() error { _, err := a.Find(ctx); return err })
			unwritten, _ := ledger.Holding(a)
			require.True(t, unwritten)
			aw := a.Writer()

			clock.Add(5*24*time.Hour + time.Minute)
			la.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse, faulty.Refuse, faulty.Refuse}, nil, nil)
			_, err := a.Update(ctx, "a1", 1)
			require.Error(t, err, "a1's puts refused")
			la.plan.set(nil, nil, nil)
			unwritten, _ = ledger.Holding(a)
			t.Logf("after the first drop: writer %s (was %s), unwritten %v", a.Writer(), aw, unwritten)
			require.True(t, unwritten, "the retaken take-out is held, unwritten")

			clock.Add(5*24*time.Hour + time.Minute)
			run.upd(a, "a2", 1, tpncounter.Applied)
			run.settle(a, b)
			require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
		})
	}
}

// TestLimitGraceDropTakeOutOfARetiredEntry (found by a review):
// lateTakeOut, a's take-out unwritten. Once x's record (naming b) leaves
// the retry window (24h), r's pass no longer finds a's copy late and
// retires a's old entry at the version the store holds, counting x a
// second time. drop=false: a's next Update, a day later, writes its kept
// take-out, a newer live version of the entry that wins over the retired
// one: x counts once. drop=true: a's next Update comes after
// RetiredGrace/2, and the take-out carried across the drop finds the
// entry retired, with nothing to take out: the limit SPEC.md 6.10 states
// (+5).
func TestLimitGraceDropTakeOutOfARetiredEntry(t *testing.T) {
	for _, drop := range []bool{false, true} {
		t.Run(fmt.Sprintf("drop=%v", drop), func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			la, a := limitLedger(t, mem, clock, "a", time.Hour)
			_, b := limitLedger(t, mem, clock, "b", -1)
			_, r := limitLedger(t, mem, clock, "r", time.Hour)
			run := &limitRun{t: t}
			lateTakeOut(t, mem, la, b, run, true, func(x crdt.TxnID, n int64) (ledger.Result, error) { return a.Update(ctx, x, n) },
				func() error { _, err := a.Find(ctx); return err })
			aw := a.Writer()
			clock.Add(25 * time.Hour)
			run.upd(r, "r1", 1, tpncounter.Applied)
			clock.Add(61 * time.Minute)
			run.upd(r, "r2", 1, tpncounter.Applied)
			clock.Add(61 * time.Minute)
			run.upd(r, "r3", 1, tpncounter.Applied)
			st := stored(t, mem)
			_, live := maps.Collect(st.LiveActors())[aw]
			t.Logf("a's old entry %s live %v, version %d, value %d (want %d)", aw, live, st.Version(aw), st.Value(), run.want)
			if drop {
				clock.Add(5 * 24 * time.Hour)
			} else {
				clock.Add(time.Hour)
			}
			run.upd(a, "a1", 1, tpncounter.Applied)
			t.Logf("a writes as %s (was %s)", a.Writer(), aw)
			run.settle(a, b, r)
			if drop {
				require.Equal(t, run.want+5, stored(t, mem).Value(), "the stated limit: x counts twice")
				return
			}
			require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
		})
	}
}

// TestLimitGraceDropTakeOutInDoubt (found by a review): lateTakeOut's
// schedule, but the puts of a's Find that takes the late copy out are
// lost (not applied, answered ambiguous): the take-out is in a write in
// doubt. gap=1h: a's next Update sends it again, and x counts once.
// gap=RetiredGrace/2 and a minute: that Update drops the write in doubt
// and takes a new incarnation, since the write may still land, and the
// late copy stays in the old entry: the limit SPEC.md 6.10 states (+5).
func TestLimitGraceDropTakeOutInDoubt(t *testing.T) {
	for _, gap := range []time.Duration{time.Hour, 5*24*time.Hour + time.Minute} {
		t.Run(fmt.Sprintf("gap=%v", gap), func(t *testing.T) {
			ctx := context.Background()
			mem, clock, la, a, b, run := limitPair(t, time.Hour)
			retriedElsewhere(t, la, a, b, run, faulty.Hold)
			require.NoError(t, la.Deliver(0))
			la.DropHeld()
			run.upd(a, "w", 9, tpncounter.Applied)
			la.plan.set([]faulty.Fault{faulty.Lose, faulty.Lose, faulty.Lose, faulty.Lose}, nil, nil)
			_, err := a.Find(ctx)
			t.Logf("find: %v; pending %v", err, a.Pending())
			la.plan.set(nil, nil, nil)
			require.True(t, a.Pending(), "the take-out is in a write in doubt")
			require.Equal(t, run.want+5, stored(t, mem).Value(), "the late copy still counts")

			clock.Add(gap)
			aw := a.Writer()
			run.upd(a, "a1", 1, tpncounter.Applied)
			t.Logf("a writes as %s (was %s)", a.Writer(), aw)
			run.settle(a, b)
			if gap > time.Hour {
				require.Equal(t, run.want+5, stored(t, mem).Value(), "the stated limit: x counts twice")
				return
			}
			require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
		})
	}
}

// TestGraceDropCarriesPendingTakeOut (found by a review): a's write of x
// is held in flight; b counts x and forgets it; a's Value, still pending,
// takes x out of the pending write (retractLate). The held write lands
// and a's next Value finds it held: the take-out is unwritten, no longer
// in doubt. After RetiredGrace/2 idle, the drop carries it at the pending
// write's version, and the read, showing the landed write, makes it again:
// x counts once. Carried at the version stored before that write, it was
// dropped as older than the read's (+5). gap=1h is the control.
func TestGraceDropCarriesPendingTakeOut(t *testing.T) {
	for _, tc := range []struct {
		retire time.Duration
		gap    time.Duration
	}{{time.Hour, time.Hour}, {time.Hour, 5*24*time.Hour + time.Minute}, {-1, 5*24*time.Hour + time.Minute}} {
		t.Run(fmt.Sprintf("retire=%v,gap=%v", tc.retire, tc.gap), func(t *testing.T) {
			ctx := context.Background()
			mem, clock, la, a, b, run := limitPair(t, tc.retire)
			retriedElsewhere(t, la, a, b, run, faulty.Hold)
			_, err := a.Value(ctx) // pending: retractLate takes x out
			require.NoError(t, err)
			unwritten, _ := ledger.Holding(a)
			require.True(t, unwritten)
			require.NoError(t, la.Deliver(1)) // the second attempt's, the state a sent last
			la.DropHeld()
			require.Equal(t, run.want+5, stored(t, mem).Value(), "a's late copy landed: x counts twice")
			_, err = a.Value(ctx) // the write in doubt is held: no longer pending
			require.NoError(t, err)
			require.False(t, a.Pending(), "no write in doubt")
			unwritten, _ = ledger.Holding(a)
			require.True(t, unwritten, "the take-out is held, unwritten")

			clock.Add(tc.gap)
			run.upd(a, "a1", 1, tpncounter.Applied)
			run.settle(a, b)
			require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
		})
	}
}

// TestGraceDropRetakesOnlyInPlace (found by a review): lateTakeOut, a's
// take-out unwritten. After RetiredGrace/2 idle, a1's first read is stale:
// the carry is kept and a takes a new incarnation. Its put is refused, so
// a's state is ahead of the store and the next read is apart: it shows the
// old entry at the carried version, but a's state, built from the stale
// read, does not. retake waits for a read in place; x counts once. Taken
// out of a's state at once, the take-out did nothing and was lost (+5).
func TestGraceDropRetakesOnlyInPlace(t *testing.T) {
	for _, tc := range []struct {
		retire time.Duration
		puts   int
		age    int
	}{{-1, 1, 2}, {time.Hour, 1, 2}, {-1, 2, 2}, {time.Hour, 2, 2}, {time.Hour, 1, 1}} {
		t.Run(fmt.Sprintf("retire=%v,refused=%d,age=%d", tc.retire, tc.puts, tc.age), func(t *testing.T) {
			ctx := context.Background()
			mem, clock, la, a, b, run := limitPair(t, tc.retire)
			lateTakeOut(t, mem, la, b, run, true, func(x crdt.TxnID, n int64) (ledger.Result, error) { return a.Update(ctx, x, n) },
				func() error { _, err := a.Find(ctx); return err })
			staleRetake(t, mem, clock, la, a, b, run, tc.puts, tc.age)
		})
	}
}

// TestLimitGraceDropUnsentTakeOutOfDoubt (found by a review): a's write
// of x is held in flight; b counts x and forgets it; a's Value, still
// pending, takes x out of its state (retractLate), a take-out not sent.
// gap=1h: a1's read finds the write held and writes the take-out: x counts
// once. gap=RetiredGrace/2 and a minute: the drop gives up the write in
// doubt (a new incarnation) and the take-out with it, and the held write
// then lands, as the drop allows: x counts twice, the limit SPEC.md 6.10
// states (+5).
func TestLimitGraceDropUnsentTakeOutOfDoubt(t *testing.T) {
	for _, gap := range []time.Duration{time.Hour, 5*24*time.Hour + time.Minute} {
		t.Run(fmt.Sprintf("gap=%v", gap), func(t *testing.T) {
			ctx := context.Background()
			mem, clock, la, a, b, run := limitPair(t, time.Hour)
			retriedElsewhere(t, la, a, b, run, faulty.Hold)
			_, err := a.Value(ctx) // pending: retractLate takes x out
			require.NoError(t, err)
			clock.Add(gap)
			aw := a.Writer()
			if gap > time.Hour {
				run.upd(a, "a1", 1, tpncounter.Applied) // drops the write in doubt
				t.Logf("a writes as %s (was %s)", a.Writer(), aw)
			}
			require.NoError(t, la.Deliver(1)) // the write in doubt lands late
			la.DropHeld()
			if gap <= time.Hour {
				run.upd(a, "a1", 1, tpncounter.Applied)
			}
			run.settle(a, b)
			run.settle(a, b)
			if gap > time.Hour {
				require.Equal(t, run.want+5, stored(t, mem).Value(), "the stated limit: x counts twice")
				return
			}
			require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
		})
	}
}

// TestGraceDropRetakeDoesNotFork (found by a review): as
// TestGraceDropRetakesOnlyInPlace, but the stale read shows a's old entry
// one version before the carried one, still holding x. Taking x out of
// a's state made the carried version again with other content than the
// stored one (a fork the stored one won: +5); retake waits for a read in
// place showing the carried version: x counts once.
func TestGraceDropRetakeDoesNotFork(t *testing.T) {
	for _, age := range []int{1, 2} {
		t.Run(fmt.Sprintf("age=%d", age), func(t *testing.T) {
			ctx := context.Background()
			mem, clock, la, a, b, run := limitPair(t, time.Hour)
			retriedElsewhere(t, la, a, b, run, faulty.Hold)
			require.NoError(t, la.Deliver(1))
			la.DropHeld()
			run.upd(a, "w", 9, tpncounter.Applied) // x's record (naming a) owed
			la.plan.set(repeat(faulty.Refuse, 4), nil, nil)
			_, err := a.Find(ctx) // takes the late copy out; its write refused
			require.ErrorIs(t, err, crdt.ErrUnavailable)
			la.plan.set(nil, nil, nil)
			unwritten, _ := ledger.Holding(a)
			require.True(t, unwritten)
			aw := a.Writer()
			st := stored(t, mem)
			t.Logf("stored: a's entry %s at %d, value %d (want %d)", aw, st.Version(aw), st.Value(), run.want)

			staleRetake(t, mem, clock, la, a, b, run, 1, age)
		})
	}
}

// TestGraceDropCarryOfAFoldedEntryClears (found by a review):
// lateTakeOut, a's take-out unwritten. Once x's record leaves the retry
// window, r retires a's old entry (TestLimitGraceDropTakeOutOfARetiredEntry),
// and RetiredGrace later folds it. a's next call drops its state and
// carries the take-out; the read shows no entry (folded), so the carry is
// dropped and a holds nothing unwritten. Kept as if the read were stale,
// it stayed for good, and a Book kept the ledger open forever.
func TestGraceDropCarryOfAFoldedEntryClears(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la, a := limitLedger(t, mem, clock, "a", time.Hour)
	_, b := limitLedger(t, mem, clock, "b", -1)
	_, r := limitLedger(t, mem, clock, "r", time.Hour)
	run := &limitRun{t: t}
	lateTakeOut(t, mem, la, b, run, true, func(x crdt.TxnID, n int64) (ledger.Result, error) { return a.Update(ctx, x, n) },
		func() error { _, err := a.Find(ctx); return err })
	aw := a.Writer()
	clock.Add(25 * time.Hour)
	run.upd(r, "r1", 1, tpncounter.Applied)
	clock.Add(61 * time.Minute)
	run.upd(r, "r2", 1, tpncounter.Applied)
	clock.Add(61 * time.Minute)
	run.upd(r, "r3", 1, tpncounter.Applied)
	_, live := maps.Collect(stored(t, mem).LiveActors())[aw]
	require.False(t, live, "r retired a's old entry")
	clock.Add(10*24*time.Hour + time.Hour)
	run.upd(r, "r4", 1, tpncounter.Applied)
	run.upd(r, "r5", 1, tpncounter.Applied)
	require.Zero(t, stored(t, mem).Version(aw), "r folded a's old entry")

	run.upd(a, "a1", 1, tpncounter.Applied) // drops a's state, carrying the take-out
	for range 3 {
		run.settle(a, b, r)
		clock.Add(time.Hour)
	}
	unwritten, _ := ledger.Holding(a)
	require.False(t, unwritten, "a holds nothing unwritten after reading and writing")
}

// TestBookDropsCarryOfAFoldedEntry (found by a review):
// TestGraceDropCarryOfAFoldedEntryClears through a Book (MaxOpen 1): after
// the key's next Update and LandPending, nothing is left to write on the
// key, and the Book may evict its ledger.
func TestBookDropsCarryOfAFoldedEntry(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la := newLane(mem)
	bk, err := ledger.NewBook(la, ledger.BookOptions{MaxOpen: 1, Options: limitOptions(clock, "a", time.Hour)})
	require.NoError(t, err)
	_, b := limitLedger(t, mem, clock, "b", -1)
	_, r := limitLedger(t, mem, clock, "r", time.Hour)
	run := &limitRun{t: t}
	update := func(x crdt.TxnID, n int64) (ledger.Result, error) {
		res, err := bk.Update(ctx, advKey, x, n)
		return res.Result, err
	}
	lateTakeOut(t, mem, la, b, run, true, update, func() error { _, err := bk.Find(ctx, advKey); return err })
	clock.Add(25 * time.Hour)
	run.upd(r, "r1", 1, tpncounter.Applied)
	clock.Add(61 * time.Minute)
	run.upd(r, "r2", 1, tpncounter.Applied)
	clock.Add(61 * time.Minute)
	run.upd(r, "r3", 1, tpncounter.Applied)
	clock.Add(10*24*time.Hour + time.Hour)
	run.upd(r, "r4", 1, tpncounter.Applied)
	run.upd(r, "r5", 1, tpncounter.Applied)

	res, err := update("a1", 1)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, res.Outcome)
	run.want++
	for i := range 3 {
		clock.Add(time.Hour)
		require.NoError(t, bk.LandPending(ctx))
		_, err := bk.Value(ctx, fmt.Sprintf("other%d", i))
		require.NoError(t, err)
	}
	unwritten, _ := ledger.BookHolding(bk, advKey)
	st := bk.Stats()
	t.Logf("key's ledger holds unwritten %v; Book stats %+v", unwritten, st)
	require.False(t, unwritten, "nothing left to write on the key")
	require.Zero(t, st.Pending, "no ledger kept for a write")
}

// staleRetake: a, holding a take-out unwritten, idles past RetiredGrace/2;
// a1's first read is age states stale and its first puts are refused; after
// two settle rounds each transaction counts once.
func staleRetake(t *testing.T, mem *memory.Siblings, clock *fakeClock, la *lane, a, b *ledger.Ledger, run *limitRun, puts, age int) {
	t.Helper()
	clock.Add(5*24*time.Hour + time.Minute)
	aw := a.Writer()
	la.plan.set(repeat(faulty.Refuse, puts), []faulty.Fault{faulty.StaleBy(age)}, nil)
	res, err := a.Update(context.Background(), "a1", 1)
	la.plan.set(nil, nil, nil)
	t.Logf("a1: %v %v; writer %s (was %s)", res.Outcome, err, a.Writer(), aw)
	if err == nil {
		run.want++
	}
	run.settle(a, b)
	run.settle(a, b)
	require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counts once")
}

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

// lateTakeOut builds the late copy of TestRetiredLateCopyNotNewest
// (History and Folded length 1): a's call of x is held; b applies x and
// three more; a's held put lands late, counting x a second time; a's next
// credit owes x's record, and a's Find takes the late copy out, its write
// refused when refuse is set (the take-out then stays in a's state,
// unwritten). update and find are a's, a Ledger's or a Book's.
func lateTakeOut(t *testing.T, mem *memory.Siblings, la *lane, b *ledger.Ledger, run *limitRun, refuse bool,
	update func(crdt.TxnID, int64) (ledger.Result, error), find func() error) {
	t.Helper()
	apply := func(x crdt.TxnID, amount int64) {
		t.Helper()
		res, err := update(x, amount)
		require.NoError(t, err, x)
		require.Equal(t, tpncounter.Applied, res.Outcome, x)
		run.want += amount
	}
	run.upd(b, "open", 1000, tpncounter.Applied)
	apply("a0", 1)
	la.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
	_, err := update("x", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	run.upd(b, "x", 5, tpncounter.Applied)
	for i := range 3 {
		run.upd(b, crdt.TxnID(fmt.Sprintf("y%d", i)), 1, tpncounter.Applied)
	}
	require.NoError(t, la.Deliver(0))
	la.DropHeld()
	require.Equal(t, run.want+5, stored(t, mem).Value(), "a's late copy counts x a second time")
	apply("w", 9) // x's record (naming a) owed
	if refuse {
		la.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse, faulty.Refuse, faulty.Refuse}, nil, nil)
	}
	err = find() // takes the late copy out
	if refuse {
		require.ErrorIs(t, err, crdt.ErrUnavailable)
	}
	la.plan.set(nil, nil, nil)
}

// TestRetiredTakeOutKept: lateTakeOut, the take-out written or not. An
// hour later r's pass finds a due. Written, a's copy of x is gone and a
// retires. Unwritten, the store still holds a's late copy: the pass reads
// the records of all of a's copies, finds x late, and retires a with that
// copy left out (SPEC.md 6.9); a's next read finds its entry retired
// without every copy it took out, and continues from the store. Before
// that check the pass retired a, recording x naming a, with x counted;
// the take-out, kept and written when the entry was found retired, won
// over the retired entry; dropping it, as 221d6be did, counted x twice for
// good. Either way x counts once.
func TestRetiredTakeOutKept(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		t.Run(fmt.Sprintf("take-out refused=%v", refuse), func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			la, a := limitLedger(t, mem, clock, "a", -1)
			_, b := limitLedger(t, mem, clock, "b", -1)
			_, r := limitLedger(t, mem, clock, "r", time.Hour)
			run := &limitRun{t: t}
			lateTakeOut(t, mem, la, b, run, refuse, func(x crdt.TxnID, n int64) (ledger.Result, error) { return a.Update(ctx, x, n) },
				func() error { _, err := a.Find(ctx); return err })
			clock.Add(61 * time.Minute)
			run.upd(b, "y9", 1, tpncounter.Applied)
			aw := a.Writer()
			run.upd(r, "r1", 1, tpncounter.Applied)
			_, live := maps.Collect(stored(t, mem).LiveActors())[aw]
			require.False(t, live, "r retires a")
			require.Equal(t, run.want, stored(t, mem).Value(), "a's late copy left out")
			run.settle(a, b, r)
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
		})
	}
}

// TestRenewStaleKeepsTakeOut: lateTakeOut, with a's take-out unwritten,
// and no one retires a. a goes on reading (Value, within RetiredGrace/2 of
// each other) but writes nothing for more than RetireAfter +
// RetiredGrace/2 (a's RetireAfter is negative: 0 + 5 days). Its next
// Update's renewStale takes a new incarnation and keeps the state, whose
// write carries the old entry's take-out: x counts once. Dropping it, as
// 759a8db did, left the late copy in the old entry.
func TestRenewStaleKeepsTakeOut(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la, a := limitLedger(t, mem, clock, "a", -1)
	_, b := limitLedger(t, mem, clock, "b", -1)
	run := &limitRun{t: t}
	lateTakeOut(t, mem, la, b, run, true, func(x crdt.TxnID, n int64) (ledger.Result, error) { return a.Update(ctx, x, n) },
		func() error { _, err := a.Find(ctx); return err })
	clock.Add(4 * 24 * time.Hour)
	_, err := a.Value(ctx)
	require.NoError(t, err)
	clock.Add(24*time.Hour + time.Minute)
	aw := a.Writer()
	run.upd(a, "a1", 1, tpncounter.Applied)
	require.NotEqual(t, aw, a.Writer(), "a takes a new incarnation")
	run.settle(a, b)
	require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
}

// TestBookKeepsUnwrittenTakeOut: lateTakeOut through a Book (MaxOpen 1),
// a's take-out unwritten: it must keep the ledger open (holding). Before,
// record's take-out did not set takenOut, the Book dropped the ledger when
// another key was used, the key's next Ledger took a new incarnation, and
// the old entry kept the late copy for good: x counted twice.
func TestBookKeepsUnwrittenTakeOut(t *testing.T) {
	for _, evict := range []bool{false, true} {
		t.Run(fmt.Sprintf("evict=%v", evict), func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			la := newLane(mem)
			bk, err := ledger.NewBook(la, ledger.BookOptions{MaxOpen: 1, Options: limitOptions(clock, "a", -1)})
			require.NoError(t, err)
			_, b := limitLedger(t, mem, clock, "b", -1)
			run := &limitRun{t: t}
			update := func(x crdt.TxnID, n int64) (ledger.Result, error) {
				res, err := bk.Update(ctx, advKey, x, n)
				return res.Result, err
			}
			lateTakeOut(t, mem, la, b, run, true, update, func() error { _, err := bk.Find(ctx, advKey); return err })
			if evict {
				_, err = bk.Value(ctx, "other") // evicts advKey's ledger unless it must stay
				require.NoError(t, err)
			}
			for i := range 3 {
				res, err := update(crdt.TxnID(fmt.Sprintf("z%d", i)), 1)
				require.NoError(t, err)
				require.Equal(t, tpncounter.Applied, res.Outcome)
				run.want++
				_, err = bk.Find(ctx, advKey)
				require.NoError(t, err)
				run.upd(b, crdt.TxnID(fmt.Sprintf("zb%d", i)), 1, tpncounter.Applied)
			}
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
		})
	}
}

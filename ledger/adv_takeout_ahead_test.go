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

// TestRetiredTakeOutKept: the schedule of
// TestLimitRetiredLateCopyNotNewest, "a reads before the pass", except
// that a's write of its take-out of the late copy x is refused. a's state
// then holds the take-out (a newer version of its entry: Ahead) and the
// late copy still counts in the store. An hour later r's pass retires a at
// the stored version (x is not a's newest credit: the pass does not see it
// late) and records x naming a, so a's retired total counts x, as b's does.
//
// a's next write carries its entry with x taken out, which wins over the
// retired one: x counts once. A take-out is written, not dropped, when the
// entry is found retired (SPEC.md 6.9: the rule is a refusal's): dropping
// it, as 221d6be did, counted x twice for good.
func TestRetiredTakeOutKept(t *testing.T) {
	for _, tc := range []struct {
		name   string
		refuse bool // a's take-out write refused
	}{
		{name: "take-out written (control)"},
		{name: "take-out refused, then retired", refuse: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			mk := func(name crdt.ActorID, retire time.Duration) (*lane, *ledger.Ledger) {
				return limitLedger(t, mem, clock, name, retire)
			}
			la, a := mk("a", -1)
			_, b := mk("b", -1)
			_, r := mk("r", time.Hour)
			run := &limitRun{t: t}
			upd := run.upd
			upd(b, "open", 1000, tpncounter.Applied)
			upd(a, "a0", 1, tpncounter.Applied)

			la.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
			_, err := a.Update(ctx, "x", 5)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			run.want += 5

			upd(b, "x", 5, tpncounter.Applied)
			run.want -= 5
			for i := range 3 {
				upd(b, crdt.TxnID(fmt.Sprintf("y%d", i)), 1, tpncounter.Applied)
			}
			require.NoError(t, la.Deliver(0))
			la.DropHeld()
			require.Equal(t, run.want+5, stored(t, mem).Value(), "a's late copy counts x a second time")

			upd(a, "w", 9, tpncounter.Applied) // x's record (naming a) owed

			if tc.refuse {
				la.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse, faulty.Refuse, faulty.Refuse}, nil, nil)
			}
			_, err = a.Find(ctx) // takes the late copy out
			t.Logf("a's Find: %v; stored value %d want %d", err, stored(t, mem).Value(), run.want)
			la.plan.set(nil, nil, nil)

			clock.Add(61 * time.Minute)
			upd(b, "y9", 1, tpncounter.Applied)
			aw := a.Writer()
			upd(r, "r1", 1, tpncounter.Applied)
			_, live := maps.Collect(stored(t, mem).LiveActors())[aw]
			t.Logf("a live after r's pass: %v; value %d want %d", live, stored(t, mem).Value(), run.want)

			run.settle(a, b, r)
			t.Logf("a's writer %s -> %s", aw, a.Writer())
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
		})
	}
}

// TestRenewStaleKeepsTakeOut: as above, a's write of its take-out
// of the late copy x is refused, and no one retires a. a goes on reading
// (Value, within RetiredGrace/2 of each other) but writes nothing for
// more than RetireAfter + RetiredGrace/2 (a's RetireAfter is negative: 0
// + 5 days). Its next Update's renewStale takes a new incarnation and
// keeps the state, whose write carries the old entry's take-out: x counts
// once. Dropping it, as 759a8db did, left the late copy in the old entry.
func TestRenewStaleKeepsTakeOut(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la, a := limitLedger(t, mem, clock, "a", -1)
	_, b := limitLedger(t, mem, clock, "b", -1)
	run := &limitRun{t: t}
	upd := run.upd
	upd(b, "open", 1000, tpncounter.Applied)
	upd(a, "a0", 1, tpncounter.Applied)

	la.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
	_, err := a.Update(ctx, "x", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	upd(b, "x", 5, tpncounter.Applied)
	for i := range 3 {
		upd(b, crdt.TxnID(fmt.Sprintf("y%d", i)), 1, tpncounter.Applied)
	}
	require.NoError(t, la.Deliver(0))
	la.DropHeld()
	upd(a, "w", 9, tpncounter.Applied)

	la.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse, faulty.Refuse, faulty.Refuse}, nil, nil)
	_, err = a.Find(ctx) // the take-out of x, refused
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	la.plan.set(nil, nil, nil)

	clock.Add(4 * 24 * time.Hour)
	_, err = a.Value(ctx)
	require.NoError(t, err)
	clock.Add(24*time.Hour + time.Minute)
	aw := a.Writer()
	upd(a, "a1", 1, tpncounter.Applied)
	t.Logf("a's writer %s -> %s; value %d want %d", aw, a.Writer(), stored(t, mem).Value(), run.want)
	run.settle(a, b)
	require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
}

// TestBookKeepsUnwrittenTakeOut: the same late copy x of a, but a writes
// through a Book (MaxOpen 1). a's Find takes x out and its write is
// refused: the take-out (index.go record, flushing x's owed record) must
// keep the ledger open (holding). Before, it did not set takenOut, the
// Book dropped the ledger when another key was used, the key's next
// Ledger took a new incarnation, and the old entry kept the late copy for
// good: x counted twice.
func TestBookKeepsUnwrittenTakeOut(t *testing.T) {
	for _, evict := range []bool{false, true} {
		t.Run(fmt.Sprintf("evict=%v", evict), func(t *testing.T) { bookKeepsUnwrittenTakeOut(t, evict) })
	}
}

func bookKeepsUnwrittenTakeOut(t *testing.T, evict bool) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la := newLane(mem)
	bk, err := ledger.NewBook(la, ledger.BookOptions{MaxOpen: 1, Options: ledger.Options{Actor: "a", RetireAfter: -1, RetryCount: 1,
		Backoff: ledger.Backoff{Initial: -1}, MaxGroup: 1, Clock: clock.Now,
		Counter: tpncounter.Options{HistoryLength: 1, FoldedLength: 1}}})
	require.NoError(t, err)
	_, b := limitLedger(t, mem, clock, "b", -1)
	run := &limitRun{t: t}
	upd := run.upd
	bupd := func(x crdt.TxnID, amount int64) {
		t.Helper()
		res, err := bk.Update(ctx, advKey, x, amount)
		require.NoError(t, err, x)
		require.Equal(t, tpncounter.Applied, res.Outcome, x)
		run.want += amount
	}
	upd(b, "open", 1000, tpncounter.Applied)
	bupd("a0", 1)

	la.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
	_, err = bk.Update(ctx, advKey, "x", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	upd(b, "x", 5, tpncounter.Applied)
	for i := range 3 {
		upd(b, crdt.TxnID(fmt.Sprintf("y%d", i)), 1, tpncounter.Applied)
	}
	require.NoError(t, la.Deliver(0))
	la.DropHeld()
	bupd("w", 9)

	la.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse, faulty.Refuse, faulty.Refuse}, nil, nil)
	_, err = bk.Find(ctx, advKey)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	la.plan.set(nil, nil, nil)
	if evict {
		_, err = bk.Value(ctx, "other") // evicts advKey's ledger
		require.NoError(t, err)
	}
	t.Logf("book stats after eviction: %+v", bk.Stats())

	bupd("a1", 1)
	for i := range 2 {
		_, err := bk.Find(ctx, advKey)
		require.NoError(t, err)
		_, err = b.Find(ctx)
		require.NoError(t, err)
		bupd(crdt.TxnID(fmt.Sprintf("z%d", i)), 1)
		upd(b, crdt.TxnID(fmt.Sprintf("zb%d", i)), 1, tpncounter.Applied)
	}
	require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
}

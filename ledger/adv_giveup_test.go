package ledger_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestGiveUpThenStaleRead: a writer that gives its copy up takes it out
// of its own entry once the record naming the owner is written, whatever
// its later reads show (SPEC.md 6.11 step 6). Traced from
// TestAdvSettleRandomStaleAndLate (seed 1795982187567151938,
// COUNTERKIT_CASES=1500, full/H=F=1/reversed=false/case636), where x
// (15) counted twice before. History and folded record hold one
// transaction; a < b.
//
//  1. a's call of x is slow: a fetches, applies, its put is held.
//  2. b applies x, lands and records it (x -> b).
//  3. a's put lands: both histories hold x, a's copy is the owner (smaller
//     id); a settles, meets b's copy (the record names b, b holds x) and
//     watches its copy.
//  4. b's call of y: its first read is stale (b's x, not a's copy) and its
//     put is held (in doubt: b's write is pending, it carries b's x). Its
//     second read is fresh: b's copy does not count, so b gives it up
//     (step 6): the record x -> a is refused, the call fails.
//  5. b's call of z: the owed give-up record x -> a is written first, and
//     b takes its copy out; then b reads stale (a state without a's copy)
//     twice, merged with its pending write. Without the take-out its copy
//     is the owner there: b folds x into its total (that put lost) and
//     forgets it (that put lands), while a keeps its copy, found by the
//     record naming it: x counts twice.
//  6. Every ledger reads and writes again: x counts once, and its retries
//     are recognised.
func TestGiveUpThenStaleRead(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la, a := limitLedger(t, mem, clock, "a", -1)
	lb, b := limitLedger(t, mem, clock, "b", -1)
	require.Less(t, a.Writer(), b.Writer())
	run := &limitRun{t: t}
	run.upd(a, "open", 1000, tpncounter.Applied)

	// 1-2.
	g, done := slowUpdate(la, a, "x", 15)
	run.upd(b, "x", 15, tpncounter.Applied)
	// 3.
	ans := landSlow(t, g, done)
	t.Logf("a's call of x: %v owner %+v", ans.r.Outcome, ans.r.Owner)
	st := stored(t, mem)
	require.Equal(t, run.want, st.Value(), "x counted once while the copies meet")
	o, _ := st.Owner("x")
	require.Equal(t, a.Writer(), o.Actor, "a's late copy is the owner")

	// 4.
	lb.plan.set([]faulty.Fault{faulty.Hold}, []faulty.Fault{faulty.Stale}, []faulty.Fault{faulty.Refuse})
	_, err := b.Update(ctx, "y", 17)
	require.Error(t, err, "b's call of y fails: its give-up record is refused")
	require.Equal(t, 1, lb.Held())
	lb.DropHeld() // the write in doubt never lands (delivering it changes nothing: b writes past it)

	// 5.
	lb.plan.set([]faulty.Fault{faulty.Lose}, []faulty.Fault{faulty.StaleBy(1), faulty.StaleBy(2)}, nil)
	run.upd(b, "z", 19, tpncounter.Applied)
	run.want += 17 // y: its write in doubt is carried by z's put
	st = stored(t, mem)
	_, held := maps.Collect(st.Transactions(b.Writer()))["x"]
	require.False(t, held, "b took its copy out")
	_, held = maps.Collect(st.Transactions(a.Writer()))["x"]
	require.True(t, held, "a's copy of x counts")
	require.Equal(t, run.want, st.Value(), "x counted once")

	// 6. Every ledger reads and writes again.
	run.settle(a, b)
	for _, l := range []*ledger.Ledger{a, b} {
		r, err := l.Update(ctx, "x", 15)
		require.NoError(t, err)
		require.True(t, isRecognised(r.Outcome), "a retry of x is recognised")
	}
	require.Equal(t, run.want, stored(t, mem).Value(), "x counted once")
}

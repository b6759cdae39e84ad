package ledger_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestDroppedWriteInDoubtLandsLate (found by a review): graceTrio
// (RetiredGrace 2h). a's write of x is held in flight (ambiguous); the
// caller retries x on b, which counts it and, with a history of one,
// forgets it. For gaps×30 minutes a has every fetch fail (cut) or makes no
// call (idle); a minute later the held write lands. Within RetiredGrace/2
// a keeps its write in doubt, learns it landed and settles it: x counts
// once. Past it, a has given the write up with a new incarnation (it may
// still land, so the old entry is never written again); when it lands it
// is a late copy in an entry no ledger writes, and r's pass retires that
// entry with the copy left out (SPEC.md 6.9): x counts once. With b's
// default history b still holds x when it lands, the copies meet, and x
// counts once.
func TestDroppedWriteInDoubtLandsLate(t *testing.T) {
	for _, tc := range []struct {
		cut        bool
		gaps, hist int
	}{{true, 1, 1}, {true, 3, 1}, {false, 3, 1}, {true, 3, 0}} {
		t.Run(fmt.Sprintf("cut=%v,gaps=%d,history=%d", tc.cut, tc.gaps, tc.hist), func(t *testing.T) {
			heldDrop(t, tc.cut, tc.gaps, tc.hist)
		})
	}
}

func heldDrop(t *testing.T, cut bool, gaps int, history int) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	opts := func(name crdt.ActorID) ledger.Options {
		o := limitOptions(clock, name, -1)
		o.RetiredGrace = 2 * time.Hour
		o.Counter.HistoryLength = history
		return o
	}
	la := newLane(mem)
	a, err := ledger.New(la, advKey, opts("a"))
	require.NoError(t, err)
	b, err := ledger.New(mem, advKey, opts("b"))
	require.NoError(t, err)
	r := graceLedger(t, mem, clock, "r")
	run := &limitRun{t: t}
	retriedElsewhere(t, la, a, b, run, faulty.Hold)
	require.True(t, a.Pending())
	w0 := a.Writer()
	for range gaps {
		clock.Add(30 * time.Minute)
		if cut {
			la.plan.set(nil, repeat(faulty.Refuse, 1), nil)
			_, err := a.Value(ctx)
			require.ErrorIs(t, err, crdt.ErrUnavailable)
			la.plan.set(nil, nil, nil)
		}
	}
	t.Logf("after %v: a pending %v, writer %s -> %s", time.Duration(gaps)*30*time.Minute, a.Pending(), w0, a.Writer())
	clock.Add(time.Minute)
	require.NoError(t, la.DeliverAll()) // x's held write lands (within the grace)
	st := stored(t, mem)
	t.Logf("delivered: w0 holds x %v, b holds x %v, value %d want %d", holdsAny(st, string(w0), "x"), holdsAny(st, "b", "x"), st.Value(), run.want)
	for i := range 12 { // four hours of calls on every ledger
		clock.Add(20 * time.Minute)
		_, err := a.Update(ctx, crdt.TxnID(fmt.Sprintf("w%d", i)), 1)
		if err == nil {
			run.want++
		} else {
			t.Logf("a w%d: %v", i, err)
		}
		run.upd(b, crdt.TxnID(fmt.Sprintf("v%d", i)), 1, tpncounter.Applied)
		run.upd(r, crdt.TxnID(fmt.Sprintf("q%d", i)), 1, tpncounter.Applied)
	}
	st = stored(t, mem)
	t.Logf("end: a writer %s pending %v; w0 holds x %v; value %d want %d", a.Writer(), a.Pending(), holdsAny(st, string(w0), "x"), st.Value(), run.want)
	require.Equal(t, run.want, st.Value(), "x counts once")
}

// TestFailedFetchesIncarnateOnce (a review's check): a's write in doubt,
// then ten failed fetches over five hours: the drop takes one new
// incarnation, not one a read.
func TestFailedFetchesIncarnateOnce(t *testing.T) {
	ctx := context.Background()
	_, clock, la, a, b, _, run := graceTrio(t)
	retriedElsewhere(t, la, a, b, run, faulty.Lose)
	w0 := a.Writer()
	seen := map[crdt.ActorID]bool{w0: true}
	for range 10 {
		clock.Add(30 * time.Minute)
		la.plan.set(nil, repeat(faulty.Refuse, 1), nil)
		_, err := a.Value(ctx)
		require.ErrorIs(t, err, crdt.ErrUnavailable)
		la.plan.set(nil, nil, nil)
		seen[a.Writer()] = true
	}
	t.Logf("writers: %v", seen)
	require.LessOrEqual(t, len(seen), 2, "at most one new incarnation")
	run.upd(a, "after", 1, tpncounter.Applied)
}

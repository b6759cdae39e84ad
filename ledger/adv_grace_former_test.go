package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestLimitFormerAfterDroppedDoubt (found by a review): a's held write of
// x lands late (b counted x and forgot it); a's next call d learns it
// (x's record owed) and its own write is held in flight. 5 days 1 hour
// later a's read drops the write in doubt (it may still land) and takes a
// new incarnation, which never writes the old entry again: taking x out
// of it, as the owed record of an earlier incarnation otherwise does,
// forked it with d's write, which then landed. d's write lands and x
// counts twice: the limit SPEC.md 6.10 states for a dropped write in doubt.
func TestLimitFormerAfterDroppedDoubt(t *testing.T) {
	ctx := context.Background()
	mem, clock, la, a, b, run := limitPair(t, time.Hour)
	retriedElsewhere(t, la, a, b, run, faulty.Hold)
	require.NoError(t, la.DeliverAll()) // both attempts of x land
	w0 := a.Writer()
	t.Logf("after x lands: w0 %s version %d, value %d want %d", w0, stored(t, mem).Version(w0), stored(t, mem).Value(), run.want)

	la.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
	_, err := a.Update(ctx, "d", 7)
	t.Logf("d: %v", err)
	la.plan.set(nil, nil, nil)
	unwritten, _ := ledger.Holding(a)
	v0 := stored(t, mem).Version(w0)
	t.Logf("after d: pending %v unwritten %v, w0 stored version %d", a.Pending(), unwritten, v0)

	clock.Add(5*24*time.Hour + 61*time.Minute)
	run.upd(a, "w", 9, tpncounter.Applied)
	t.Logf("a's writer: %s -> %s; w0 version %d, w0 holds x %v", w0, a.Writer(), stored(t, mem).Version(w0), holdsAny(stored(t, mem), string(w0), "x"))
	require.Equal(t, v0, stored(t, mem).Version(w0), "the new incarnation never writes the old entry")

	require.NoError(t, la.DeliverAll()) // d's write in doubt lands after all (both attempts)
	st := stored(t, mem)
	t.Logf("after d lands: w0 version %d, w0 holds x %v holds d %v", st.Version(w0), holdsAny(st, string(w0), "x"), holdsAny(st, string(w0), "d"))
	run.want += 7 // d landed (its caller was told ambiguous)
	run.settle(a, b)
	require.Equal(t, run.want+5, stored(t, mem).Value(), "the stated limit: x counts twice, d once")
}

package ledger_test

import (
	"fmt"
	"maps"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestLimitStaleReadHidesRetirement: the limit SPEC.md 6.11 states as
// "Retirement of a writer whose write is in doubt, or that reads stale".
// The refused schedule of TestRetiredWriterAheadOfTheStore (newAheadRun,
// retire), except that c's first account read after the retirement is
// stale: it shows c's entry live at the stored version (the
// state before r's retirement). The rule "a read apart that shows its own
// entry retired" does not fire; c merges its state ahead of the store into
// that read and puts it, with the stale read's token, as a sibling of the
// retirement: c's live entry, newer than the retired one, wins (6.5) and
// brings back its copy of x, which the retirement let leave and a has
// since counted: x counts twice. A fresh read (stale by 0) shows the
// retirement, and x counts once.
func TestLimitStaleReadHidesRetirement(t *testing.T) {
	for _, age := range []int{0, 1, 2, 3} {
		t.Run(fmt.Sprintf("stale by %d", age), func(t *testing.T) {
			s := newAheadRun(t)
			s.clock.Add(61 * 60e9)
			s.retire(t)
			cw := s.c.Writer()
			s.lc.plan.set(nil, []faulty.Fault{faulty.StaleBy(age)}, nil)
			s.run.upd(s.c, "c1", 1, tpncounter.Applied)
			st := stored(t, s.mem)
			_, oldLive := maps.Collect(st.LiveActors())[cw]
			t.Logf("after c1: writer %s -> %s; old incarnation live again: %v; value %d want %d", cw, s.c.Writer(), oldLive, st.Value(), s.run.want)
			s.run.settle(s.a, s.c, s.r)
			if age == 0 {
				require.Equal(t, s.run.want, stored(t, s.mem).Value(), "each transaction counted once")
				return
			}
			require.Equal(t, s.run.want+22, stored(t, s.mem).Value(), "the stated limit: x counts twice")
		})
	}
}

// TestStaleRetiredOverLanded: c, retired by r at its stored
// version, writes again from the retired entry (lands), then a refused
// call leaves it Ahead; its next read is stale and shows the entry
// retired, while the store holds c's newer landed write. c drops its state
// and takes a new incarnation; the landed write stays in the store under
// the old one, so nothing is lost or counted twice, and a retry of the
// landed transaction is a duplicate (held, checked).
func TestStaleRetiredOverLanded(t *testing.T) {
	s := newAheadRun(t) // only for its ledgers and clock; c is Ahead
	s.clock.Add(61 * 60e9)
	s.retire(t)
	s.run.upd(s.c, "c1", 1, tpncounter.Applied) // new incarnation c'
	s.clock.Add(61 * 60e9)
	s.run.upd(s.a, "a5", 1, tpncounter.Applied)
	s.run.upd(s.r, "r2", 1, tpncounter.Applied) // r retires c'
	cw := s.c.Writer()
	_, live := maps.Collect(stored(t, s.mem).LiveActors())[cw]
	require.False(t, live, "r retired c'")
	s.run.upd(s.c, "c2", 1, tpncounter.Applied) // from the retired entry: lands
	require.Equal(t, cw, s.c.Writer())
	s.lc.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
	_, err := s.c.Update(t.Context(), "c3", 1)
	require.Error(t, err)
	s.lc.plan.set(nil, []faulty.Fault{faulty.StaleBy(1)}, nil)
	res, err := s.c.Update(t.Context(), "c2", 1) // retry of the landed c2, read stale
	require.NoError(t, err)
	t.Logf("retry of c2: %v owner %+v; writer %s -> %s", res.Outcome, res.Owner, cw, s.c.Writer())
	require.NotEqual(t, tpncounter.Applied, res.Outcome)
	s.run.settle(s.a, s.c, s.r)
	require.Equal(t, s.run.want, stored(t, s.mem).Value(), "each transaction counted once")
}

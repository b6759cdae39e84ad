package ledger_test

import (
	"context"
	"fmt"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// aheadRun is the schedule of TestRetiredWriterAheadOfTheStore, refused
// variant, up to a's copy of x landing (a1): c's entry is ahead of the
// store (a refused Put taken back out), a owns x.
type aheadRun struct {
	mem        *memory.Siblings
	clock      *fakeClock
	la, lc, lr *lane
	a, c, r    *ledger.Ledger
	run        *limitRun
}

func newAheadRun(t *testing.T) *aheadRun {
	ctx := context.Background()
	s := &aheadRun{mem: memory.NewSiblings(), clock: newFakeClock(time.Unix(1_800_000_000, 0))}
	s.la, s.a = limitLedger(t, s.mem, s.clock, "a", -1)
	s.lc, s.c = limitLedger(t, s.mem, s.clock, "c", -1)
	s.lr, s.r = limitLedger(t, s.mem, s.clock, "r", time.Hour)
	require.Less(t, s.a.Writer(), s.c.Writer())
	s.run = &limitRun{t: t}
	upd := s.run.upd
	upd(s.a, "open", 1000, tpncounter.Applied)
	upd(s.c, "c0", 1, tpncounter.Applied)

	gc, doneC := slowUpdate(s.lc, s.c, "x", 22)
	ga, doneA := slowUpdate(s.la, s.a, "x", 22)
	s.la.plan.set([]faulty.Fault{faulty.Hold}, nil, nil)
	ansC := landSlow(t, gc, doneC)
	require.Equal(t, tpncounter.Applied, ansC.r.Outcome)
	s.run.want += 22
	landSlow(t, ga, doneA)
	s.la.DropHeld()

	s.lc.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
	_, err := s.c.Update(ctx, "cy", 1)
	require.ErrorIs(t, err, crdt.ErrUnavailable)

	upd(s.a, "a1", 1, tpncounter.Applied) // a's copy of x lands with it
	return s
}

// retire has r retire c, then a forget x (as in the original test).
func (s *aheadRun) retire(t *testing.T) {
	upd := s.run.upd
	upd(s.a, "a2", 1, tpncounter.Applied)
	upd(s.r, "r1", 1, tpncounter.Applied)
	_, live := maps.Collect(stored(t, s.mem).LiveActors())[s.c.Writer()]
	require.False(t, live, "r retired c")
	upd(s.a, "a3", 1, tpncounter.Applied)
	upd(s.a, "a4", 1, tpncounter.Applied)
}

// TestAheadIncarnatedByRenewStale: c's entry is ahead (refused Put);
// c reads (Value) before r retires it, so its state is kept; by the time
// c writes again, renewStale has drawn a new incarnation (c's entry last
// changed more than RetireAfter + RetiredGrace/2 ago), so the read's
// "own entry retired" test looks at the new writer and passes, and the
// old incarnation's ahead entry, still in Local, is merged into the write:
// it won over the retired one and x counted twice. renewStale now drops
// a state ahead of the store before it takes a new incarnation.
func TestAheadIncarnatedByRenewStale(t *testing.T) {
	for _, tc := range []struct {
		name  string
		later time.Duration // after the retirement, before c writes
	}{
		{name: "c writes soon after: dropped (control)", later: time.Minute},
		{name: "c writes after renewStale's incarnation", later: 5*24*time.Hour - 2*time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newAheadRun(t)
			s.clock.Add(2 * time.Hour)
			_, err := s.c.Value(context.Background()) // read apart: c still live
			require.NoError(t, err)
			s.clock.Add(time.Minute)
			s.retire(t)
			s.clock.Add(tc.later)
			cw := s.c.Writer()
			s.run.upd(s.c, "c1", 1, tpncounter.Applied)
			require.NotEqual(t, cw, s.c.Writer(), "c takes a new incarnation")
			st := stored(t, s.mem)
			_, oldLive := maps.Collect(st.LiveActors())[cw]
			t.Logf("after c1: old incarnation %s live again: %v; value %d want %d", cw, oldLive, st.Value(), s.run.want)
			s.run.settle(s.a, s.c, s.r)
			require.Equal(t, s.run.want, stored(t, s.mem).Value(), "each transaction counted once")
		})
	}
}

// TestAheadFoldedAfterIncarnation: as above, but c only reads
// (Value, within RetiredGrace/2 of each other) until r folds the retired
// entry of c's old incarnation into the base (RetiredGrace, 10 days). c's
// state still holds that incarnation's live entry ahead of the store
// (reads apart never merge into it), and c's next write puts it back
// beside the base that already counts its total (before renewStale
// dropped a state ahead of the store: c0 and x counted twice).
func TestAheadFoldedAfterIncarnation(t *testing.T) {
	ctx := context.Background()
	s := newAheadRun(t)
	s.clock.Add(2 * time.Hour)
	_, err := s.c.Value(ctx)
	require.NoError(t, err)
	s.clock.Add(time.Minute)
	s.retire(t)
	old := s.c.Writer()
	// c's first read after the retirement comes after renewStale's
	// incarnation (own entry changed > RetiredGrace/2 ago), within
	// RetiredGrace/2 of its last read; then c reads every 4 days.
	s.clock.Add(5*24*time.Hour - 2*time.Hour)
	_, err = s.c.Value(ctx)
	require.NoError(t, err)
	require.NotEqual(t, old, s.c.Writer(), "renewStale drew a new incarnation")
	for range 2 {
		s.clock.Add(4 * 24 * time.Hour)
		_, err := s.c.Value(ctx)
		require.NoError(t, err)
	}
	s.run.upd(s.r, "r2", 1, tpncounter.Applied) // r's pass folds c's retired entry
	st := stored(t, s.mem)
	p, n := st.Bases()
	t.Logf("after r2: version of %s %d, bases %+v %+v, value %d want %d", old, st.Version(old), p, n, st.Value(), s.run.want)
	require.Zero(t, st.Version(old), "folded")
	s.run.upd(s.c, "c1", 1, tpncounter.Applied)
	st = stored(t, s.mem)
	t.Logf("after c1: version of %s %d; value %d want %d", old, st.Version(old), st.Value(), s.run.want)
	require.Equal(t, s.run.want, st.Value(), "each transaction counted once")
}

// TestWriterDuringIncarnation: Writer (and Sharded.Writer, "no I/O") reads
// the writer id while an Update's read takes a new incarnation (SPEC.md
// 6.9), after a retirement or through renewStale's grace rule; go test
// -race caught it reading the field without l.mu.
func TestWriterDuringIncarnation(t *testing.T) {
	for _, retired := range []bool{true, false} {
		t.Run(fmt.Sprintf("retired=%v", retired), func(t *testing.T) {
			s := newAheadRun(t)
			if retired {
				s.clock.Add(61 * time.Minute)
				s.retire(t)
			} else {
				s.clock.Add(6 * 24 * time.Hour)
			}
			w := s.c.Writer()
			var stop atomic.Bool
			done := make(chan struct{})
			go func() {
				defer close(done)
				for !stop.Load() {
					_ = s.c.Writer()
				}
			}()
			s.run.upd(s.c, "c1", 1, tpncounter.Applied)
			stop.Store(true)
			<-done
			require.Greater(t, s.c.Writer(), w, "the next incarnation sorts after")
		})
	}
}

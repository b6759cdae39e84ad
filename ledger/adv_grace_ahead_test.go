package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestGraceDropAheadThenStaleRead (found by a review): the schedule of
// TestGraceDropThenStaleRead, but l's state is ahead of the store when
// renewStale drops it (a refused Find, or a refused Update): the version
// the store holds is not known, so l takes a new incarnation, and the
// stale read that follows cannot fork its entry (b was lost).
func TestGraceDropAheadThenStaleRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		find bool
	}{{"refused find", true}, {"refused update", false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			ln := newLane(mem)
			o := ledger.Options{Actor: "l", RetireAfter: time.Hour, RetiredGrace: 2 * time.Hour, RetryCount: 1,
				Backoff: ledger.Backoff{Initial: -1}, MaxGroup: 1, Counter: tpncounter.Options{HistoryLength: 2, FoldedLength: 2}}
			clock.opts(&o)
			l, err := ledger.New(ln, advKey, o)
			require.NoError(t, err)
			run := &limitRun{t: t}
			run.upd(l, "a", 10, tpncounter.Applied)
			run.upd(l, "b", 20, tpncounter.Applied)
			w := l.Writer()
			vb := stored(t, mem).Version(w)
			ln.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
			if tc.find {
				_, err = l.Find(ctx)
			} else {
				_, err = l.Update(ctx, "r", 7)
			}
			require.Error(t, err)
			ln.plan.set(nil, nil, nil)
			require.Equal(t, vb, stored(t, mem).Version(w), "nothing landed")
			clock.Add(70 * time.Minute) // > RetiredGrace/2, < RetireAfter + RetiredGrace/2
			ln.plan.set(nil, []faulty.Fault{faulty.StaleBy(1)}, nil)
			run.upd(l, "c", 30, tpncounter.Applied)
			t.Logf("writer %s then %s; stored value %d, want %d", w, l.Writer(), stored(t, mem).Value(), run.want)
			require.Equal(t, run.want, stored(t, mem).Value(), "a, b and c each counted once")
		})
	}
}

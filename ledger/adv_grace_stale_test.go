package ledger_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestGraceDropThenStaleRead (found by a review): a ledger whose last
// read began more than RetiredGrace/2 ago, and whose entry changed less
// than RetireAfter + RetiredGrace/2 ago, drops its state and reads the
// store alone, keeping its incarnation (renewStale) only if the read shows
// its entry at the version dropped. When that read is stale (a replica
// that has not seen its last write), it takes a new incarnation: its entry
// at an older version would fork (two states of one seq, of which merge
// keeps one) and lose b.
func TestGraceDropThenStaleRead(t *testing.T) {
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
	clock.Add(70 * time.Minute) // > RetiredGrace/2, < RetireAfter + RetiredGrace/2
	ln.plan.set(nil, []faulty.Fault{faulty.StaleBy(1)}, nil)
	run.upd(l, "c", 30, tpncounter.Applied)
	t.Logf("writer %s then %s; stored value %d, want %d", w, l.Writer(), stored(t, mem).Value(), run.want)
	require.Equal(t, run.want, stored(t, mem).Value(), "a, b and c each counted once")
}

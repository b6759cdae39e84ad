package ledger_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestStaleRetirement: a retirement pass over a stale state must not
// bring back a copy its actor gave up. c and a both apply debit x: a's
// put is slow and lands after c landed and recorded x, so the copies
// meet, a answers duplicate and watches its copy, which counts (the
// smaller id). c then credits y: its copy of x does not count, so it
// records x naming a (SPEC.md 6.11 step 6) and takes its copy out of its
// N entry, a newer version of it. An hour later r writes from an account
// read one state stale (from before a's copy landed): c's newest credit
// and debit are recorded naming c, so r records c's transactions and
// retires c at the version it read, older than c's live one, which wins
// (6.5): x counts once. Before the take-out, only c's P entry compacted,
// its N entry kept x at the same seq, and the retired N entry won: x
// counted twice. With c idle after x (no record names a), a's watch
// takes its copy out; with a fresh read, r declines to retire c.
func TestStaleRetirement(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		cFree, laterDebit, fresh bool
	}{
		{name: "x c's newest debit"},
		{name: "x not c's newest debit", laterDebit: true},
		{name: "c idle: a's watch takes its copy out", cFree: true},
		{name: "r reads fresh: c is not retired", laterDebit: true, fresh: true},
	} {
		cFree := tc.cFree
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			la := newLane(mem)
			lr, staleNext := staleOnce(mem)
			a := watchLedger(t, la, clock, "a", -1)
			c := watchLedger(t, mem, clock, "c", -1)
			r := watchLedger(t, lr, clock, "r", time.Hour)
			run := &limitRun{t: t}
			upd := run.upd
			upd(c, "open", 1000, tpncounter.Applied)

			// a's call of x: fetch, apply, put held before it lands.
			g, done := slowUpdate(la, a, "x", -1)
			upd(c, "x", -1, tpncounter.Applied) // c lands and records x first
			if tc.laterDebit {
				upd(c, "w", -2, tpncounter.Applied) // c's newest debit: x is not
			}
			upd(r, "r1", 1, tpncounter.Applied) // r's first pass sees c (P open, N x)
			ans := landSlow(t, g, done)
			t.Logf("a's call of x: %v owner %+v", ans.r.Outcome, ans.r.Owner)
			require.Equal(t, tpncounter.Duplicate, ans.r.Outcome, "a's copy met c's")
			require.Equal(t, run.want, stored(t, mem).Value(), "x counted once while the copies meet")

			if !cFree {
				// c writes a credit: gives its copy of x up (record x -> a)
				// and takes it out of its N entry.
				upd(c, "y", 5, tpncounter.Applied)
				require.Equal(t, run.want, stored(t, mem).Value())
			}

			clock.Add(61 * time.Minute)
			staleNext.Store(!tc.fresh) // r's next account read: one state back
			upd(r, "r2", 1, tpncounter.Applied)

			run.settle(a, c, r) // every ledger reads and writes again
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
		})
	}
}

// staleOnce returns a store over mem whose next account fetch after
// stale.Store(true) answers one state back.
func staleOnce(mem *memory.Siblings) (lr *faulty.Siblings, stale *atomic.Bool) {
	stale = new(atomic.Bool)
	return faulty.NewSiblings(mem, faulty.Options{Policy: func(c faulty.Call) faulty.Fault {
		if c.Method == faulty.MethodFetch && !ledger.IsRecordKey(c.Key) && stale.CompareAndSwap(true, false) {
			return faulty.StaleBy(1)
		}
		return faulty.Pass
	}}), stale
}

// limitRun is the bookkeeping of a limit test's schedule: upd makes an
// Update that must answer outcome and counts in want the amount it
// applies; settle has every ledger read (Find) and write again, twice.
type limitRun struct {
	t      *testing.T
	want   int64
	rounds int // of settle, which names its transactions by round
}

func (r *limitRun) upd(l *ledger.Ledger, x crdt.TxnID, amount int64, outcome tpncounter.Outcome) {
	r.t.Helper()
	res, err := l.Update(context.Background(), x, amount)
	require.NoError(r.t, err, x)
	require.Equal(r.t, outcome, res.Outcome, x)
	if outcome == tpncounter.Applied {
		r.want += amount
	}
}

func (r *limitRun) settle(ls ...*ledger.Ledger) {
	r.t.Helper()
	r.rounds++
	for i, l := range append(ls, ls...) {
		_, err := l.Find(context.Background())
		require.NoError(r.t, err)
		r.upd(l, crdt.TxnID(fmt.Sprintf("z%d.%d", r.rounds, i)), 1, tpncounter.Applied)
	}
}

// limitLedger makes ledger name of a limit test over mem, on a lane of its
// own (COUNTERKIT_WATCH_TRACE traces its store calls): history and folded
// record of one transaction, RetireAfter retire, the test's clock.
func limitLedger(t *testing.T, mem store.Siblings, clock *fakeClock, name crdt.ActorID, retire time.Duration) (*lane, *ledger.Ledger) {
	t.Helper()
	ln := newLane(mem)
	if os.Getenv("COUNTERKIT_WATCH_TRACE") != "" {
		ln.trace = func(format string, args ...any) { t.Logf("%s: %s", name, fmt.Sprintf(format, args...)) }
	}
	l, err := ledger.New(ln, advKey, limitOptions(clock, name, retire))
	require.NoError(t, err)
	return ln, l
}

// limitOptions are a limit test's ledger options: history and folded
// record of one transaction, RetireAfter retire, the test's clock.
func limitOptions(clock *fakeClock, name crdt.ActorID, retire time.Duration) ledger.Options {
	return ledger.Options{Actor: name, RetireAfter: retire, RetryCount: 1,
		Backoff: ledger.Backoff{Initial: -1}, MaxGroup: 1, Clock: clock.Now,
		Counter: tpncounter.Options{HistoryLength: 1, FoldedLength: 1}}
}

// slowUpdate starts l.Update(x, amount), whose account put ln holds, and
// returns once the put is held: the put, and the call's answer.
func slowUpdate(ln *lane, l *ledger.Ledger, x crdt.TxnID, amount int64) (*slowPut, <-chan slowAnswer) {
	g := ln.slowNext(newSlowPut())
	done := make(chan slowAnswer, 1)
	go func() { res, err := l.Update(context.Background(), x, amount); done <- slowAnswer{res, err} }()
	<-g.held
	return g, done
}

type slowAnswer struct {
	r   ledger.Result
	err error
}

package ledger_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestRetireWithARetirementRecordRefusedTwice (traced by a helper from
// TestAdvWatchRandom, COUNTERKIT_SEED=9002 COUNTERKIT_CASES=1000,
// H=F=1/case684, a loss): a retirement pass must not retire an actor while
// one of its records is unwritten (SPEC.md 6.11 step 5), also when that
// record was already owed from an earlier pass.
//
// a's call of x is slow: c lands and records x (naming c) first, then a's
// put lands, the copies meet (a answers duplicate and watches its copy,
// holder c), and a's copy counts (the smaller id). a writes on and folds
// x; c stays idle. An hour later r writes r2: its first attempt's pass
// records c's transactions, both record Puts refused (open naming c, x
// naming a, the owner), and its account Put lands but loses its
// acknowledgement; the second attempt's pass writes open's record but x's
// is refused again. recordRetiring judged success by whether l.unindexed
// grew (2 owed before, 1 after), so it reported c recorded and r retired
// c: c's copy of x left without counting (the owner's is folded, 6.10)
// while no record named a. a's watch then found c past its record's
// version without x and took its own copy out: x counted by no one (-100).
// recordRetiring now judges by the records' errors.
func TestRetireWithARetirementRecordRefusedTwice(t *testing.T) {
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	trace := func(name string) func(string, ...any) {
		if os.Getenv("COUNTERKIT_WATCH_TRACE") == "" {
			return nil
		}
		return func(format string, args ...any) { t.Logf("%s: %s", name, fmt.Sprintf(format, args...)) }
	}
	la := newLane(mem)
	la.trace = trace("a")
	lc := newLane(mem)
	lc.trace = trace("c")

	// r's store: while armed, refuses every Put of x's record, the first
	// Put of open's record, and the acknowledgement of the first account Put
	// (it lands).
	var mu sync.Mutex
	armed, openRefused, accountRefused := false, false, false
	xKey, openKey := ledger.RecordKey(advKey, "x"), ledger.RecordKey(advKey, "open")
	lr := &lane{Siblings: faulty.NewSiblings(mem, faulty.Options{Policy: func(c faulty.Call) faulty.Fault {
		mu.Lock()
		defer mu.Unlock()
		if !armed || c.Method != faulty.MethodPut {
			return faulty.Pass
		}
		switch {
		case c.Key == xKey:
			return faulty.Refuse
		case c.Key == openKey && !openRefused:
			openRefused = true
			return faulty.Refuse
		case !ledger.IsRecordKey(c.Key) && !accountRefused:
			accountRefused = true
			return faulty.LoseAck
		}
		return faulty.Pass
	}}), mem: mem}
	lr.trace = trace("r")

	mk := func(ln *lane, name crdt.ActorID, retire time.Duration) *ledger.Ledger {
		l, err := ledger.New(ln, advKey, limitOptions(clock, name, retire))
		require.NoError(t, err)
		return l
	}
	a, c, r := mk(la, "a", -1), mk(lc, "c", -1), mk(lr, "r", time.Hour)
	run := &limitRun{t: t}
	upd := run.upd

	upd(c, "open", 1000, tpncounter.Applied)
	g, done := slowUpdate(la, a, "x", 100)
	upd(c, "x", 100, tpncounter.Applied) // c lands and records x first
	ans := landSlow(t, g, done)
	require.Equal(t, tpncounter.Duplicate, ans.r.Outcome, "a's copy met c's")
	upd(r, "r1", 1, tpncounter.Applied) // r's first pass sees c
	upd(a, "w1", 1, tpncounter.Applied)
	upd(a, "w2", 1, tpncounter.Applied)
	owner, ok := stored(t, mem).Owner("x")
	require.True(t, ok)
	require.Equal(t, a.Writer(), owner.Actor, "a's copy counts")
	require.True(t, owner.Folded, "a folded x")
	require.Equal(t, run.want, stored(t, mem).Value(), "x counted once")

	clock.Add(61 * time.Minute)
	upd(a, "w3", 1, tpncounter.Applied) // a writes: not idle
	mu.Lock()
	armed = true
	mu.Unlock()
	_, err := r.Find(context.Background()) // writes: a retirement pass
	mu.Lock()
	armed = false
	mu.Unlock()
	t.Logf("r's Find: %v; c live: %v", err, liveOf(stored(t, mem), []crdt.ActorID{c.Writer()}))
	rec, ok := recordOf(t, mem, "x")
	t.Logf("x's record: %+v (%v)", rec, ok)
	if len(liveOf(stored(t, mem), []crdt.ActorID{c.Writer()})) == 0 {
		t.Errorf("c retired while its record of x, naming a, is unwritten")
	}

	// Every ledger reads and writes again (a's watch judges its copy).
	for i, l := range []*ledger.Ledger{a, r, c, a, r, c} {
		_, err := l.Find(context.Background())
		require.NoError(t, err)
		upd(l, crdt.TxnID(fmt.Sprintf("z%d", i)), 1, tpncounter.Applied)
	}
	require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once (x is 100)")
}

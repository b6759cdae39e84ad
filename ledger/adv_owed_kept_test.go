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
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestOwedRecordKeptBesideTheCallsRecord (traced by a helper from
// TestOutboxRunsEachEffectOnce's double counts). History and folded
// record hold one transaction; a groups two Updates (MaxGroup 2).
//
// a's cycle for w reads the account and waits before its Put; b applies
// x (7): it lands, and b's record Put waits; x and z queue on a. w lands;
// a's group [x, z] reads the account one state back (without b's copy:
// equally, a read made before b's copy landed), finds no record of x,
// applies x and z: the Put is lost (in doubt). The retry reads fresh: x is
// known from b's copy (the call answers duplicate, owner b), z is a
// duplicate of the pending write, and the Put carrying the pending write
// (a's copy of x: the owner once the copies meet, a's id is the smaller)
// lands. owe records x naming a's own copy, to be confirmed (SPEC.md 6.11
// step 3: "A txn of a pending write whose call was not acknowledged is
// recorded ... once the ledger learns that the write landed"), but the
// cycle's record of the call, naming b (the owner the call saw), is
// written next. record() deleted l.unindexed[x] with it, so a never
// confirmed, settled or watched its copy; b then wrote from lagging reads
// without a's copy, folding x into its total and forgetting it: x counted
// twice through every later Find. The owed record of the other copy now
// stays owed, and a's confirmation settles its copy: once.
func TestOwedRecordKeptBesideTheCallsRecord(t *testing.T) {
	t.Run("memory", func(t *testing.T) { owedRecordKeptBeside(t, memory.NewSiblings()) })
	t.Run("one row per actor", func(t *testing.T) { owedRecordKeptBeside(t, &ledger.RowStore{}) })
}

func owedRecordKeptBeside(t *testing.T, mem store.Siblings) {
	ctx := context.Background()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la := newLane(mem)
	o := limitOptions(clock, "a", -1)
	o.MaxGroup = 2
	a, err := ledger.New(la, advKey, o)
	require.NoError(t, err)
	lb, b := limitLedger(t, mem, clock, "b", -1)
	if os.Getenv("COUNTERKIT_WATCH_TRACE") != "" {
		la.trace = func(format string, args ...any) { t.Logf("a: %s", fmt.Sprintf(format, args...)) }
	}
	require.Less(t, a.Writer(), b.Writer())
	run := &limitRun{t: t}
	run.upd(a, "a0", 1, tpncounter.Applied) // a's lane reads the empty account

	// a's cycle for w reads the account (without x) and waits before its
	// Put, while b's x lands (b's record Put waits) and x and z queue on a.
	aPaused, aRelease := make(chan struct{}), make(chan struct{})
	var aOnce sync.Once
	la.mu.Lock()
	la.before = func(method, key string) {
		if method == faulty.MethodPut && !ledger.IsRecordKey(key) {
			aOnce.Do(func() { close(aPaused); <-aRelease })
		}
	}
	la.mu.Unlock()
	answers := make(chan error, 3)
	results := map[crdt.TxnID]ledger.Result{}
	var rmu sync.Mutex
	start := func(x crdt.TxnID, amount int64) {
		go func() {
			r, err := a.Update(ctx, x, amount)
			rmu.Lock()
			results[x] = r
			rmu.Unlock()
			answers <- err
		}()
	}
	start("w", 1)
	<-aPaused

	bPaused, bRelease := make(chan struct{}), make(chan struct{})
	var bOnce sync.Once
	lb.mu.Lock()
	lb.before = func(method, key string) {
		if method == faulty.MethodPut && ledger.IsRecordKey(key) {
			bOnce.Do(func() { close(bPaused); <-bRelease })
		}
	}
	lb.mu.Unlock()
	bdone := make(chan slowAnswer, 1)
	go func() { r, err := b.Update(ctx, "x", 7); bdone <- slowAnswer{r, err} }()
	<-bPaused

	start("x", 7)
	waitFor(t, func() bool { return ledger.Queued(a) >= 1 }, "x queued on a")
	start("z", 1)
	waitFor(t, func() bool { return ledger.Queued(a) >= 2 }, "x and z queued on a")
	// w's put passes; the group's first attempt reads one state back
	// (without b's x) and its put is lost; then everything passes.
	la.plan.set([]faulty.Fault{faulty.Pass, faulty.Lose}, []faulty.Fault{faulty.StaleBy(1)}, nil)
	close(aRelease)
	for range 3 {
		require.NoError(t, <-answers)
	}
	run.want += 1 + 1 + 7 // w, z, x
	t.Logf("a's x: %v owner %+v; z: %v", results["x"].Outcome, results["x"].Owner, results["z"].Outcome)
	require.Equal(t, tpncounter.Duplicate, results["x"].Outcome, "a's call of x answered from b's copy")
	st := stored(t, mem)
	require.True(t, holdsTxn(st, a.Writer(), "x"), "a's pending copy of x landed")
	ow, _ := st.Owner("x")
	require.Equal(t, a.Writer(), ow.Actor, "a's copy counts")
	un, watching := ledger.Holding(a)
	t.Logf("a holds unwritten %v, watching %v", un, watching)

	close(bRelease)
	ans := <-bdone
	require.NoError(t, ans.err)
	require.Equal(t, run.want, stored(t, mem).Value(), "x counted once while the copies meet")

	// b writes from reads that lag behind a's copy until it forgets x.
	for i := 1; i <= 6 && holdsTxn(stored(t, mem), b.Writer(), "x"); i++ {
		lb.plan.set(nil, []faulty.Fault{faulty.StaleBy(i)}, nil)
		res, err := b.Update(ctx, crdt.TxnID(fmt.Sprintf("y%d", i)), 1)
		require.NoError(t, err, "y%d", i)
		require.Equal(t, tpncounter.Applied, res.Outcome)
		run.want++
	}
	lb.plan.set(nil, nil, nil)
	require.False(t, holdsTxn(stored(t, mem), b.Writer(), "x"), "b folded x into its total and forgot it")
	run.settle(a, b)
	require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
}

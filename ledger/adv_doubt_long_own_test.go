package ledger_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestLongDoubtKeptBesideItsOwnLandedCopy: the schedule of
// TestLongDoubtKeptWhenItWouldCount, but a's last read is fresh: it shows
// a's own earlier put of x landed beside b's copy, while a's pending
// write (a later, lost put) is not yet held by it. a's copy owns beside
// b's, so a keeps it (SPEC.md 6.11 step 4 judges the owner among the
// fetched copies and its own); taken out, x was lost once b wrote its
// owed give-up record.
func TestLongDoubtKeptBesideItsOwnLandedCopy(t *testing.T) {
	got, want := longDoubtGiveUpRace(t, false)
	require.Equal(t, want, got, "each transaction counted once")
}

// TestLongDoubtKeptWhenFolded: c's copy of x, in doubt, is folded in
// c's pending write (history 1, folded record 2: a later Find folds it)
// before the retry's copy on b (b < c) lands. c's folded copy owns beside
// b's history copy, so b gives its copy up to c (record lost, owed). After
// RetireAfter/2 c reads stale, b's copy alone: its own folded copy still
// owns, so c keeps it. Judged by the fetched copies alone (b < c), it was
// taken out and x lost.
func TestLongDoubtKeptWhenFolded(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	mk := func(name crdt.ActorID) (*lane, *ledger.Ledger) {
		ln := newLane(mem)
		ln.trace = func(format string, args ...any) { t.Logf("%s: %s", name, fmt.Sprintf(format, args...)) }
		o := limitOptions(clock, name, time.Hour)
		o.Counter.FoldedLength = 2
		l, err := ledger.New(ln, advKey, o)
		require.NoError(t, err)
		return ln, l
	}
	lc, c := mk("c")
	lb, b := mk("b")
	require.Less(t, b.Writer(), c.Writer())
	run := &limitRun{t: t}
	upd := run.upd
	upd(c, "c0", 1, tpncounter.Applied)
	upd(b, "b0", 1, tpncounter.Applied)

	lc.plan.set([]faulty.Fault{faulty.Lose, faulty.Lose}, nil, nil)
	_, err := c.Update(ctx, "x", 7)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "x in doubt on c")
	lc.plan.set([]faulty.Fault{faulty.Lose, faulty.Lose}, nil, nil)
	_, err = c.Update(ctx, "y", 2)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "y in doubt on c")
	lc.plan.set([]faulty.Fault{faulty.Hold, faulty.Lose}, nil, nil)
	_, err = c.Find(ctx) // folds x in c's pending write; held
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)

	upd(b, "x", 7, tpncounter.Applied) // the retry, recorded naming b
	lc.plan.set([]faulty.Fault{faulty.Lose, faulty.Lose}, nil, nil)
	_, err = c.Find(ctx) // reads b's copy (c's folded copy owns); lost
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.NoError(t, lc.Deliver(0)) // c's held put lands: x folded by c
	require.True(t, c.Pending())
	st := stored(t, mem)
	o, _ := st.Owner("x")
	t.Logf("owner of x in the store: %+v", o)

	// b gives its copy up to c's; its record of that is lost.
	lb.plan.set(nil, nil, []faulty.Fault{faulty.Lose})
	_, err = b.Update(ctx, "b1", 1)
	require.Error(t, err, "b owes the record of x naming c")

	clock.Add(31 * time.Minute)
	lc.plan.set(nil, []faulty.Fault{faulty.StaleBy(1)}, nil) // b's copy without c's
	_, _ = c.Update(ctx, "c1", 1)
	run.settle(c, b)
	run.want += 2 // y landed with c's held put
	run.addLanded(mem, "c1", "b1")
	require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
}

// TestGiveUpJudgedAfterItsWriterRetired: a's copy of x, in doubt,
// lands beside the retry's copy on b (a < b: a's counts). b reads both and
// gives its copy up to a's; the record of that is lost (owed). An hour
// later c's pass, from a read without a's copy, retires b with x counted
// in b's total. a, in doubt for RetireAfter/2, reads one state stale (b's
// copy without its own) and keeps its copy, which would count. b reads the
// account before it writes its owed record (SPEC.md 6.11 step 6): its
// entry is retired with x counted, so the record names b, and a's copy,
// found late, is taken out. Written from b's older state, the record
// named a and kept a's copy: x counted twice for good.
func TestGiveUpJudgedAfterItsWriterRetired(t *testing.T) {
	ctx := context.Background()
	mem, la, lb, lc, a, b, c, run, clock := giveUpTrio(t)
	upd := run.upd

	la.plan.set([]faulty.Fault{faulty.Hold, faulty.Lose}, nil, nil)
	_, err := a.Update(ctx, "x", 7)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "x in doubt on a")
	upd(b, "x", 7, tpncounter.Applied)  // the retry, recorded naming b
	upd(c, "c1", 1, tpncounter.Applied) // c reads b's copy, not a's
	la.plan.set([]faulty.Fault{faulty.Lose, faulty.Lose}, nil, nil)
	_, err = a.Find(ctx) // a reads b's copy; lost
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.NoError(t, la.Deliver(0)) // a's held put lands: two copies
	require.True(t, a.Pending())

	// b gives its copy up to a's; its record of that is lost.
	lb.plan.set(nil, nil, []faulty.Fault{faulty.Lose})
	_, err = b.Update(ctx, "b1", 1)
	require.Error(t, err, "b owes the record of x naming a")
	run.addLanded(mem, "b1")

	clock.Add(61 * time.Minute)
	lc.plan.set(nil, []faulty.Fault{faulty.StaleBy(1)}, nil) // b's copy without a's
	upd(c, "c2", 1, tpncounter.Applied)                      // c's pass retires b, x in its total
	st := stored(t, mem)
	_, bLive := maps.Collect(st.LiveActors())[b.Writer()]
	t.Logf("after c2: b live %v, value %d", bLive, st.Value())

	la.plan.set([]faulty.Fault{faulty.Lose, faulty.Lose}, []faulty.Fault{faulty.StaleBy(1), faulty.StaleBy(1)}, nil)
	_, err = a.Find(ctx) // long doubt, stale read: kept (was: taken out)
	t.Logf("a's long-doubt Find: %v", err)

	_, err = b.Find(ctx) // b writes its owed record naming a
	t.Logf("b's Find: %v", err)
	run.settle(a, b, c)
	run.settle(a, b, c)
	st = stored(t, mem)
	o, _ := st.Owner("x")
	t.Logf("x owner %+v", o)
	require.Equal(t, run.want, st.Value(), "each transaction counted once")
}

// TestGiveUpJudgedAfterItsWriterRetiredFresh: the schedule of
// TestGiveUpJudgedAfterItsWriterRetired with no stale read, c's pass
// write held in flight instead: a's held put of x and c's held pass
// (retiring b with x in its total, from a read without a's copy) land in
// that order around b's give-up to a's copy. a, in doubt for RetireAfter,
// reads before either lands and keeps its copy; b's owed record, judged
// against a fresh read, names b. "resent": a's first put of x is lost and
// a sends it again after RetireAfter (held briefly), so no put is in
// flight for long.
func TestGiveUpJudgedAfterItsWriterRetiredFresh(t *testing.T) {
	for _, resent := range []bool{false, true} {
		t.Run(fmt.Sprint("resent=", resent), func(t *testing.T) {
			ctx := context.Background()
			mem, la, lb, lc, a, b, c, run, clock := giveUpTrio(t)
			first := []faulty.Fault{faulty.Hold, faulty.Lose}
			if resent {
				first = []faulty.Fault{faulty.Lose, faulty.Lose}
			}
			la.plan.set(first, nil, nil)
			_, err := a.Update(ctx, "x", 7)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "x in doubt on a")
			run.upd(b, "x", 7, tpncounter.Applied) // the retry, recorded naming b

			clock.Add(61 * time.Minute)
			if resent {
				la.plan.set([]faulty.Fault{faulty.Hold, faulty.Lose}, nil, nil)
				_, err = a.Find(ctx) // long doubt, fresh read of b's copy: kept, sent again, held
				require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			} else {
				_, err = a.Value(ctx) // long doubt, fresh read of b's copy: kept
				require.NoError(t, err)
			}
			lc.plan.set([]faulty.Fault{faulty.Hold, faulty.Lose}, nil, nil)
			_, err = c.Update(ctx, "c2", 1) // c's pass retires b, x in its total; held
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			require.NoError(t, la.Deliver(0)) // a's held put lands beside b's copy

			lb.plan.set(nil, nil, []faulty.Fault{faulty.Lose})
			_, err = b.Update(ctx, "b1", 1) // b gives its copy up to a's; record owed
			require.Error(t, err)
			run.addLanded(mem, "b1")
			require.NoError(t, lc.Deliver(0)) // c's pass lands: b retired, x in its total
			run.want++                        // c2 landed

			_, err = b.Find(ctx) // b reads (its entry retired), then writes its owed record
			t.Logf("b's Find: %v", err)
			run.settle(a, b, c)
			run.settle(a, b, c)
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
		})
	}
}

// giveUpTrio makes the ledgers of the give-up tests over one memory store:
// a and c retire idle writers after an hour, b never does; c credits 1000
// and a and b 1 each, so that each has an entry.
func giveUpTrio(t *testing.T) (mem *memory.Siblings, la, lb, lc *lane, a, b, c *ledger.Ledger, run *limitRun, clock *fakeClock) {
	mem = memory.NewSiblings()
	clock = newFakeClock(time.Unix(1_800_000_000, 0))
	la, a = limitLedger(t, mem, clock, "a", time.Hour)
	lb, b = limitLedger(t, mem, clock, "b", -1)
	lc, c = limitLedger(t, mem, clock, "c", time.Hour)
	require.Less(t, a.Writer(), b.Writer())
	run = &limitRun{t: t}
	run.upd(c, "open", 1000, tpncounter.Applied)
	run.upd(a, "a0", 1, tpncounter.Applied)
	run.upd(b, "b0", 1, tpncounter.Applied)
	return mem, la, lb, lc, a, b, c, run, clock
}

package ledger_test

import (
	"context"
	"fmt"
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

// TestStaleRetirementRecordNotKept (found by a review): c holds x live;
// a's copy of x (folded, so it counts) reaches the store after r first saw
// c. An hour later r writes: attempt 1 reads stale (no a), its pass
// records x naming c, refused (owed naming c), and its account put is
// refused; attempt 2 reads fresh and records x naming a, the owner (/1:
// written; /2: refused, so c is not retired until a later pass writes it).
// The record written settles the owed one: only a ledger's own copy's owed
// record stays beside another's (TestOwedRecordKeptBesideTheCallsRecord).
// When every owed record of another writer stayed too, the stale record
// naming c was written after c retired, beside the one naming a.
func TestStaleRetirementRecordNotKept(t *testing.T) {
	for _, refusedX := range []int{1, 2} {
		t.Run(fmt.Sprint(refusedX), func(t *testing.T) { staleRetirementRecord(t, refusedX) })
	}
}

func staleRetirementRecord(t *testing.T, refusedX int) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	const cID, aID = crdt.ActorID("m-c"), crdt.ActorID("a-a")
	want := storeState(t, mem, []advHold{{cID, "x", 100}})
	var mu sync.Mutex
	phase := 0 // 1: armed
	xKey := ledger.RecordKey(advKey, "x")
	fetches, xputs, accputs := 0, 0, 0
	fs := faulty.NewSiblings(mem, faulty.Options{Policy: func(c faulty.Call) faulty.Fault {
		mu.Lock()
		defer mu.Unlock()
		if phase != 1 {
			return faulty.Pass
		}
		switch {
		case c.Method == faulty.MethodFetch && c.Key == advKey:
			fetches++
			if fetches == 1 {
				return faulty.Stale
			}
		case c.Method == faulty.MethodPut && c.Key == xKey:
			xputs++
			if xputs <= refusedX {
				return faulty.Refuse
			}
		case c.Method == faulty.MethodPut && c.Key == advKey:
			accputs++
			if accputs == 1 {
				return faulty.Refuse
			}
		}
		return faulty.Pass
	}})
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := newFakeClock(t0)
	r := advLedger(t, fs, clock, "r", time.Hour)
	_, err := r.Credit(ctx, "r1", 1)
	require.NoError(t, err)
	want++

	// a's state: x folded under two later transactions.
	{
		sibs, token, err := mem.Fetch(ctx, advKey)
		require.NoError(t, err)
		cur, err := tpncounter.New(tpncounter.Options{})
		require.NoError(t, err)
		for _, b := range sibs {
			one, _ := tpncounter.New(tpncounter.Options{})
			require.NoError(t, one.UnmarshalBinary(b))
			require.NoError(t, cur.Merge(one))
		}
		ac, err := tpncounter.New(tpncounter.Options{HistoryLength: 1, FoldedLength: 1})
		require.NoError(t, err)
		for _, h := range []advHold{{aID, "x", 100}, {aID, "y1", 5}, {aID, "y2", 7}} {
			_, err := ac.Apply(h.actor, h.txn, h.amount)
			require.NoError(t, err)
		}
		require.NoError(t, cur.Merge(ac))
		o, ok := cur.Owner("x")
		require.True(t, ok)
		t.Logf("owner of x: %+v", o)
		b, err := cur.MarshalBinary()
		require.NoError(t, err)
		require.NoError(t, mem.Put(ctx, advKey, aID, b, token))
		want += 12
		require.Equal(t, want, stored(t, mem).Value())
	}

	clock.Add(61 * time.Minute)
	mu.Lock()
	phase = 1
	mu.Unlock()
	_, err = r.Credit(ctx, "r2", 1)
	mu.Lock()
	phase = 2
	t.Logf("r2: %v (fetches %d, x puts %d, account puts %d)", err, fetches, xputs, accputs)
	mu.Unlock()
	if err == nil {
		want++
	}
	rec, ok := recordOf(t, mem, "x")
	if len(liveOf(stored(t, mem), []crdt.ActorID{cID})) == 0 && (!ok || rec.Writer != aID) {
		t.Errorf("c retired by r2 while x's record naming a is unwritten: %+v (%v)", rec, ok)
	}
	t.Logf("after r2: c live %v; x's record %+v (%v)", liveOf(stored(t, mem), []crdt.ActorID{cID}), rec, ok)
	for i, x := range []crdt.TxnID{"r3", "r4", "r5"} {
		clock.Add(10 * time.Minute)
		_, err = r.Credit(ctx, x, 1)
		require.NoError(t, err, i)
		want++
		rec, ok := recordOf(t, mem, "x")
		sibs, _, _ := mem.Fetch(ctx, xKey)
		for _, b := range sibs {
			var rr ledger.Record
			_ = rr.UnmarshalBinary(b)
			t.Logf("  sibling: %+v", rr)
		}
		t.Logf("after %s: c live %v; x's record %+v (%v)", x, liveOf(stored(t, mem), []crdt.ActorID{cID}), rec, ok)
	}
	require.Equal(t, want, stored(t, mem).Value())
	require.Empty(t, liveOf(stored(t, mem), []crdt.ActorID{cID}), "c retires once x's record is written")
	requireRetriesKnown(t, mem, clock, []advHold{{cID, "x", 100}}, want)
	sibs, _, err := mem.Fetch(ctx, xKey)
	require.NoError(t, err)
	namesA := false
	for _, b := range sibs {
		var rr ledger.Record
		require.NoError(t, rr.UnmarshalBinary(b))
		namesA = namesA || rr.Writer == aID
		// SPEC 6.11 step 5: the record names the owner when another
		// actor's copy of the same amount counts; this one is attempt 1's
		// (stale read) owed record, flushed after c retired.
		require.NotEqual(t, cID, rr.Writer, "x's records after c retired: a live record names retired c, not the owner a: %+v", rr)
	}
	require.True(t, namesA, "no record of x names a")
}

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

// TestShardedHeldCopyAfterRace: two first uses raced (n=4 and n=2,
// both markers stored, n=2 still trusting its check). n=4's credit of x
// puts x on its sub-key, and the Put is held in the network (ambiguous);
// its retry reads the sub-key without x, and before its record lookup n=2
// applies x on its own sub-key and records it. n=4 answers duplicate
// (from n=2's record, another sub-key) and writes a record naming n=2's
// incarnation but keyed with its own sub-key (SPEC.md 6.11 Encoding: the
// key is the one whose state holds the writer's entry). Then the held Put
// lands. SPEC.md 6.12 Limit: n=4's copy has no record of its own, so it
// defers to n=2's: x must count once, and nothing may be left stuck. On
// the current code n=4's copy stays (x counts twice, outside every clause
// of the Limit: n=4 read n=2's record before recording anything) and
// n=4's sub-key fails unavailable for good (the bogus record is judged a
// stale read of its own key).
func TestShardedHeldCopyAfterRace(t *testing.T) {
	for _, when := range []int{1, 2} { // n=2 acts before n=4's first or second record lookup of the retry
		t.Run(map[int]string{1: "before the pending lookup", 2: "between the lookups"}[when], func(t *testing.T) {
			ctx := context.Background()
			clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			fs, s4, s2 := racedLayouts(t, clock)
			x := splitTxn("x-")
			sub4, rec := s4.Key(s4.Shard(x)), ledger.RecordKey("hot", x)
			fs.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.Hold), faulty.MethodPut), func(k string) bool { return k == sub4 }))
			lookups, subFetches := 0, 0
			var s2err error
			var r2 ledger.Result
			fs.SetHook(func(ctx context.Context, c faulty.Call, after bool) error {
				if after || c.Method != faulty.MethodFetch {
					return nil
				}
				fire := false
				switch c.Key {
				case sub4:
					subFetches++
					fire = when == 1 && subFetches == 2
				case rec:
					lookups++
					fire = when == 2 && lookups == 2
				}
				if fire {
					fs.SetHook(nil)
					r2, s2err = s2.Credit(ctx, x, 7)
				}
				return nil
			})
			r4, err := s4.Credit(ctx, x, 7)
			fs.SetHook(nil)
			fs.SetPolicy(nil)
			require.NoError(t, s2err)
			require.Equal(t, tpncounter.Applied, r2.Outcome, "n=2 applies x")
			t.Logf("n=4: %v owner %+v err %v; held %d", r4.Outcome, r4.Owner, err, fs.Held())
			for _, r := range rsRecordsOf(t, fs, rec) {
				if r.Key == sub4 && r.Writer == s2.Writer(x) {
					t.Errorf("a record names n=2's incarnation %s on n=4's sub-key %s: %+v", s2.Writer(x), sub4, r)
				}
			}
			require.NoError(t, fs.DeliverAll(), "n=4's held Put of x lands")
			clock.Add(2 * ledger.LayoutRecheck)
			_, err = s2.Credit(ctx, "late", 1)
			require.ErrorIs(t, err, crdt.ErrInvalidConfig)
			for i := range 2 {
				_, err = s4.FindAll(ctx)
				if err != nil {
					t.Errorf("FindAll %d on n=4: %v", i, err)
				}
			}
			v, err := s4.Value(ctx)
			require.NoError(t, err)
			if v != 30+7 {
				t.Errorf("value %d, want %d: x counted twice", v, 30+7)
			}
		})
	}
}

func rsRecordsOf(t *testing.T, fs *faulty.Siblings, key string) []ledger.Record {
	t.Helper()
	vals, _, err := fs.Fetch(context.Background(), key)
	require.NoError(t, err)
	var out []ledger.Record
	for _, v := range vals {
		var r ledger.Record
		require.NoError(t, r.UnmarshalBinary(v))
		out = append(out, r)
	}
	return out
}

// TestShardedHeldCopyFirstUse is the schedule the enumeration
// (TestShardedRaceEnumerated) found, on a new account: L (n=4) and S
// (n=2) race first uses and both credit x, on sub-keys 2 and 0. L's Put
// of x is held in the network; its retry reads sub-key 2 without x and
// looks up x's record for its pending write (step 4: none yet); S, whose
// read of the account key missed L's marker, applies x on sub-key 0 and
// records it; L's lookup for the call (step 1) finds S's record: L answers
// duplicate, but (1) leaves x in its pending write, which step 4 would
// have taken out had the record come one read earlier, and (2) writes a
// record naming S's incarnation with key acct/2 (6.11 Encoding: the key
// is the one whose state holds the writer's entry). The held Put then
// lands. L's copy has no record of its own and must defer to S's (SPEC.md
// 6.12 Limit; 6.11 steps 3 and 4): x counts once. On the current code L's
// copy stays and x counts twice, outside every clause of the Limit (L read
// S's record before anything recorded its own copy; no restart; no
// retirement), still after L restarts and its idle writer retires; and
// the misnamed record, judged as a stale read of acct/2, makes every write
// of L to acct/2 fail unavailable until L restarts.
func TestShardedHeldCopyFirstUse(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	inner := memory.NewSiblings()
	var mu sync.Mutex
	faults := map[string][]faulty.Fault{}
	next := func(c faulty.Call) faulty.Fault {
		mu.Lock()
		defer mu.Unlock()
		k := c.Method + " " + c.Key
		if q := faults[k]; len(q) > 0 {
			faults[k] = q[1:]
			return q[0]
		}
		return faulty.Pass
	}
	fs := faulty.NewSiblings(inner, faulty.Options{Policy: next, RecordWrites: true})
	opts := func(a crdt.ActorID) ledger.Options {
		return ledger.Options{Actor: a, Clock: clock.Now, Backoff: ledger.Backoff{Initial: -1}, RetryCount: 1}
	}
	S, err := ledger.NewSharded(fs, "acct", 2, opts("s"))
	require.NoError(t, err)
	L, err := ledger.NewSharded(fs, "acct", 4, opts("l"))
	require.NoError(t, err)
	x := splitTxn("x")
	subL, subS, rec := L.Key(L.Shard(x)), S.Key(S.Shard(x)), ledger.RecordKey("acct", x)
	t.Logf("x=%s: L's sub-key %s, S's %s", x, subL, subS)
	faults["Put "+subL] = []faulty.Fault{faulty.Hold}
	faults["Fetch acct"] = []faulty.Fault{faulty.Pass, faulty.Stale} // L's first read; S's read misses L's marker
	lookups := 0
	var rS ledger.Result
	var errS error
	fs.SetHook(func(ctx context.Context, c faulty.Call, after bool) error {
		if !after && c.Method == faulty.MethodFetch && c.Key == rec {
			if lookups++; lookups == 3 { // L's retry: after its pending write's lookup
				fs.SetHook(nil)
				rS, errS = S.Credit(ctx, x, 7)
			}
		}
		return nil
	})
	rL, errL := L.Credit(ctx, x, 7)
	fs.SetHook(nil)
	require.NoError(t, errS)
	require.Equal(t, tpncounter.Applied, rS.Outcome, "S applies x on %s", subS)
	t.Logf("L: %v owner %+v err %v; held %d", rL.Outcome, rL.Owner, errL, fs.Held())
	require.Equal(t, 1, fs.Held(), "L's Put of x is in flight")
	for _, r := range rsRecordsOf(t, fs, rec) {
		if r.Key == subL && r.Writer != L.Writer(x) {
			t.Errorf("a record names %s, not L's incarnation, on L's sub-key %s: %+v", r.Writer, subL, r)
		}
	}
	require.NoError(t, fs.DeliverAll(), "L's held Put of x lands")
	clock.Add(2 * ledger.LayoutRecheck)
	for i := range 2 {
		_, err = S.FindAll(ctx)
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "S, the smaller, is refused")
		if _, err = L.FindAll(ctx); err != nil {
			t.Errorf("FindAll %d on L: %v", i, err)
		}
	}
	v, err := L.Value(ctx)
	require.NoError(t, err)
	if v != 7 {
		t.Errorf("value %d, want 7: x counted %d times", v, v/7)
	}
	var y crdt.TxnID
	for i := 0; L.Shard(y) != L.Shard(x); i++ {
		y = crdt.TxnID(fmt.Sprint("y", i))
	}
	r, err := L.Credit(ctx, y, 1)
	if err != nil {
		t.Errorf("a new credit through L on %s: %v %v", subL, r.Outcome, err)
	}
	want := int64(7)
	if err == nil {
		want++
	}
	// L restarts; RetireAfter later its idle incarnation retires.
	clock.Add(ledger.DefaultRetireAfter + time.Minute)
	L2, err := ledger.NewSharded(fs, "acct", 4, opts("l"))
	require.NoError(t, err)
	for range 3 {
		_, err = L2.FindAll(ctx)
		require.NoError(t, err)
	}
	v, err = L2.Value(ctx)
	require.NoError(t, err)
	if v != want {
		t.Errorf("after L restarts and its idle writer retires: value %d, want %d (x counted twice for good)", v, want)
	}
}

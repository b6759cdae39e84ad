package ledger_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// racedLayouts is twoLayouts with n=4 written through fs too, by a process
// of its own (actor A): s2 still trusts its check of the marker.
func racedLayouts(t *testing.T, clock *fakeClock) (fs *faulty.Siblings, s4, s2 *ledger.Sharded) {
	t.Helper()
	_, fs, _, s2 = twoLayouts(t, clock)
	s4, err := ledger.NewSharded(fs, "hot", 4, ledger.Options{Actor: "A", Clock: clock.Now, Backoff: ledger.Backoff{Initial: -1}, RetryCount: 1})
	require.NoError(t, err)
	return fs, s4, s2
}

// onRecordLookup makes fn run once, right after the first fetch of x's
// record through fs: n=4's lookup, before it applies x.
func onRecordLookup(fs *faulty.Siblings, x crdt.TxnID, fn func(ctx context.Context)) {
	rec := ledger.RecordKey("hot", x)
	fired := false
	fs.SetHook(func(ctx context.Context, c faulty.Call, after bool) error {
		if after && !fired && c.Method == faulty.MethodFetch && c.Key == rec {
			fired = true
			fn(ctx)
		}
		return nil
	})
}

// splitTxn returns a transaction whose sub-key differs under 2 and 4.
func splitTxn(prefix string) crdt.TxnID {
	for i := 0; ; i++ {
		x := crdt.TxnID(fmt.Sprint(prefix, i))
		if ledger.ShardOf(x, 2) != ledger.ShardOf(x, 4) {
			return x
		}
	}
}

// After two first uses with different n raced (SPEC.md 6.12 "Limit"), a
// transaction x may reach both layouts; the larger n, which goes on
// writing, must neither be left unable to write x's sub-key nor count x
// twice once a record of it exists. A record names its key (format
// version 2, SPEC.md 6.11): one of another key answers a retry, takes a
// pending copy out (step 4), and makes an unrecorded copy defer (step 3),
// but is never judged against this key's state, where its writer never
// appears (before records named their key, every read was a stale read
// for good). Here n=4's credit of x answers ambiguous_write (its record
// Put refused), then n=2 applies x on its own sub-key and records it;
// n=4's owed record then defers to n=2's: x counts once.
func TestShardedRaceRecordPutRefused(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fs, s4, s2 := racedLayouts(t, clock)
	x := splitTxn("x-")
	rec := ledger.RecordKey("hot", x)
	fs.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.Refuse, faulty.Refuse, faulty.Refuse), faulty.MethodPut), func(k string) bool { return k == rec }))
	_, err := s4.Credit(ctx, x, 7)
	fs.SetPolicy(nil)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "n=4's record Put refused")
	r, err := s2.Credit(ctx, x, 7) // within the second
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, r.Outcome, "n=2 finds no record")
	writesOn(t, clock, s4, s2, x)
}

// The same race with no fault at all: x is delivered to both layouts at
// once (n=2 lands and records x while n=4's call is between its record
// lookup and its record step). n=4's copy landed, but its record comes
// second: it defers to n=2's and answers duplicate.
func TestShardedRaceNoFault(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fs, s4, s2 := racedLayouts(t, clock)
	x := splitTxn("x-")
	var s2err error
	onRecordLookup(fs, x, func(ctx context.Context) { _, s2err = s2.Credit(ctx, x, 7) })
	r, err := s4.Credit(ctx, x, 7)
	fs.SetHook(nil)
	require.NoError(t, s2err)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, r.Outcome)
	writesOn(t, clock, s4, s2, x)
}

// The same race through a pending write (SPEC.md 6.11 step 4): n=4's Put
// carrying x is lost (ambiguous, pending), n=2 applies and records x;
// n=4's next read takes x out of its pending write rather than judging
// n=2's record stale.
func TestShardedRacePending(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fs, s4, s2 := racedLayouts(t, clock)
	x := splitTxn("x-")
	sub := s4.Key(ledger.ShardOf(x, 4))
	fs.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.Lose, faulty.Lose), faulty.MethodPut), func(k string) bool { return k == sub }))
	_, err := s4.Credit(ctx, x, 7)
	fs.SetPolicy(nil)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.True(t, s4.Pending())
	_, err = s2.Credit(ctx, x, 7)
	require.NoError(t, err)
	_, err = s4.FindAll(ctx)
	require.NoError(t, err)
	require.False(t, s4.Pending())
	writesOn(t, clock, s4, s2, x)
}

// The smaller n's copy in doubt, after the larger applied and recorded x:
// n=2's Put of x is lost (or held), and an hour later a retry of x reaches
// n=4, which finds no record and applies it. When n=2 next reads (refused,
// landing what it holds first; or FindAll), its pending x is taken out,
// since a record of another key names it; a held Put that lands late
// leaves an unrecorded copy, which defers to n=4's record. x counts once.
func TestShardedRaceSmallerPendingTakenOut(t *testing.T) {
	for _, mode := range []string{"refusal", "FindAll", "held Put lands late"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			fs, s4, s2 := racedLayouts(t, clock)
			x := splitTxn("x-")
			sub2 := s2.Key(ledger.ShardOf(x, 2))
			first := faulty.Lose
			if mode == "held Put lands late" {
				first = faulty.Hold
			}
			fs.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(first, faulty.Lose, faulty.Lose), faulty.MethodPut), func(k string) bool { return k == sub2 }))
			_, err := s2.Credit(ctx, x, 7)
			fs.SetPolicy(nil)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			require.True(t, s2.Pending())

			clock.Add(time.Hour)
			r, err := s4.Credit(ctx, x, 7)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Applied, r.Outcome, "n=4 never saw x")
			switch mode {
			case "refusal":
				_, err = s2.Credit(ctx, "other", 1)
			case "FindAll":
				_, err = s2.FindAll(ctx)
			case "held Put lands late":
				require.NoError(t, fs.DeliverAll())
				_, err = s2.Credit(ctx, "other", 1)
			}
			require.ErrorIs(t, err, crdt.ErrInvalidConfig)
			v, err := s4.Value(ctx)
			require.NoError(t, err)
			require.Equal(t, int64(30+7), v, "x counted once")
		})
	}
}

// Racing calls of x with two amounts: n=4 credits x with 7 while n=2,
// during n=4's record lookup, lands x with 9 and records it. n=4's copy has
// no record of its key, so it defers to n=2's whatever its amount: it is
// answered superseded (owner: n=2's copy of 9), and x counts once, with 9.
func TestShardedRaceConflictingAmounts(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fs, s4, s2 := racedLayouts(t, clock)
	x := splitTxn("x-")
	var s2err error
	onRecordLookup(fs, x, func(ctx context.Context) { _, s2err = s2.Credit(ctx, x, 9) })
	r, err := s4.Credit(ctx, x, 7)
	fs.SetHook(nil)
	require.NoError(t, s2err)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Superseded, r.Outcome)
	require.Equal(t, int64(9), r.Owner.Amount)
	clock.Add(2 * ledger.LayoutRecheck)
	r, err = s4.Credit(ctx, x, 9)
	require.NoError(t, err)
	require.NotEqual(t, tpncounter.Applied, r.Outcome)
	_, err = s4.Credit(ctx, x, 7)
	require.ErrorIs(t, err, crdt.ErrConflictingTransaction)
	v, err := s4.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(30+9), v)
}

// The smaller n's call of x lands on its sub-key but ends ambiguous_write
// (its acknowledgement lost, or its record Put refused), so no record of
// x exists. An hour later the retry reaches the larger n (also after the
// smaller restarted and was refused with nothing to land): the larger
// reads x's sub-key under the smaller layout first (SPEC.md 6.12), finds
// the copy, and answers duplicate. x counts once.
func TestShardedRaceSmallerCopyUnrecorded(t *testing.T) {
	for _, c := range []struct {
		name    string
		fault   string
		restart bool
	}{
		{"ack lost", "loseack", false},
		{"ack lost, n=2 restarts and is refused", "loseack", true},
		{"record put refused", "recfail", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			fs, s4, s2 := racedLayouts(t, clock)
			x := splitTxn("x-")
			sub, rec := s2.Key(s2.Shard(x)), ledger.RecordKey("hot", x)
			switch c.fault {
			case "loseack":
				fs.SetPolicy(faulty.Keys(faulty.Script(faulty.Pass, faulty.LoseAck, faulty.Refuse, faulty.Refuse), func(k string) bool { return k == sub }))
			case "recfail":
				fs.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.Refuse, faulty.Refuse, faulty.Refuse, faulty.Refuse), faulty.MethodPut), func(k string) bool { return k == rec }))
			}
			_, err := s2.Credit(ctx, x, 7)
			fs.SetPolicy(nil)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)

			clock.Add(time.Hour)
			if c.restart {
				s2, err = ledger.NewSharded(fs, "hot", 2, ledger.Options{Actor: "B", Clock: clock.Now})
				require.NoError(t, err)
				_, err = s2.Credit(ctx, x, 7)
				require.ErrorIs(t, err, crdt.ErrInvalidConfig, "the restarted n=2 is refused")
			}
			r, err := s4.Credit(ctx, x, 7)
			require.NoError(t, err)
			require.NotEqual(t, tpncounter.Applied, r.Outcome, "x's copy is in the store: the retry is recognised")
			_, err = s4.Credit(ctx, x, 8)
			require.ErrorIs(t, err, crdt.ErrConflictingTransaction)
			v, err := s4.Value(ctx)
			require.NoError(t, err)
			require.Equal(t, int64(30+7), v, "x counted once")
		})
	}
}

// writesOn checks the account after the race of x (7), a second later:
// n=2 is refused; a retry of x through n=4 is not applied again; a credit
// of another transaction on x's n=4 sub-key lands; the value is the
// credits before the race (a1 10, b1 20), x once, and that credit.
func writesOn(t *testing.T, clock *fakeClock, s4, s2 *ledger.Sharded, x crdt.TxnID) {
	t.Helper()
	ctx := context.Background()
	clock.Add(2 * ledger.LayoutRecheck)
	_, err := s2.Credit(ctx, "late", 1)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	r, err := s4.Credit(ctx, x, 7)
	require.NoError(t, err, "a retry of %s", x)
	require.NotEqual(t, tpncounter.Applied, r.Outcome, "a retry of %s applied again", x)
	var y crdt.TxnID
	for i := 0; ; i++ {
		if y = crdt.TxnID(fmt.Sprint("y-", i)); ledger.ShardOf(y, 4) == ledger.ShardOf(x, 4) {
			break
		}
	}
	_, err = s4.Credit(ctx, y, 3)
	require.NoError(t, err, "n=4 credits %s on sub-key %d", y, ledger.ShardOf(y, 4))
	v, err := s4.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(30+7+3), v)
}

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
// transaction x delivered to both within the second may count twice, but
// the larger n, which goes on writing, must not be left unable to write
// x's sub-key: the record n=2 wrote names another key (format version 2,
// SPEC.md 6.11), which answers a retry but is not judged against this
// key's state. Before records named their key, n=4 judged it a stale read
// for good, and every later call on that sub-key failed. Here n=4's
// credit of x answers ambiguous_write (its record Put refused), then n=2
// applies x on its own sub-key and records it.
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
	_, err = s2.Credit(ctx, x, 7) // within the second: the Limit
	require.NoError(t, err)
	writesOn(t, clock, s4, s2, x)
}

// The same race with no fault at all: x is delivered to both layouts at
// once (n=2 lands and records x while n=4's call is between its record
// lookup and its record step): both count it (the Limit), and n=4 writes
// on.
func TestShardedRaceNoFault(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fs, s4, s2 := racedLayouts(t, clock)
	x := splitTxn("x-")
	rec := ledger.RecordKey("hot", x)
	var fired bool
	var s2err error
	fs.SetHook(func(ctx context.Context, c faulty.Call, after bool) error {
		if after && !fired && c.Method == faulty.MethodFetch && c.Key == rec {
			fired = true // n=4's lookup of x's record: now n=2's copy lands
			_, s2err = s2.Credit(ctx, x, 7)
		}
		return nil
	})
	r, err := s4.Credit(ctx, x, 7)
	fs.SetHook(nil)
	require.NoError(t, s2err)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, r.Outcome)
	writesOn(t, clock, s4, s2, x)
}

// The same race through a pending write (SPEC.md 6.11 step 4): n=4's Put
// carrying x is lost (ambiguous, pending), n=2 applies and records x;
// n=4's next read lands its write rather than judging n=2's record stale.
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
	require.NoError(t, err, "n=4 lands its pending write")
	require.False(t, s4.Pending())
	writesOn(t, clock, s4, s2, x)
}

// writesOn checks the account after the race of x (7), a second later:
// n=2 is refused; a retry of x through n=4 is not applied again; a credit
// of another transaction on x's n=4 sub-key lands; the value is the
// credits before the race (a1 10, b1 20) and x's, which counted once or
// twice (the Limit) and no more.
func writesOn(t *testing.T, clock *fakeClock, s4, s2 *ledger.Sharded, x crdt.TxnID) {
	t.Helper()
	ctx := context.Background()
	clock.Add(2 * ledger.LayoutRecheck)
	_, err := s2.Credit(ctx, "late", 1)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	before, err := s4.Value(ctx)
	require.NoError(t, err)
	require.Contains(t, []int64{30 + 7, 30 + 14}, before)
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
	after, err := s4.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, before+3, after)
	t.Logf("x counted %d times", (before-30)/7)
}

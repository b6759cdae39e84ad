package tpncounter

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
)

// atTime is a TxnTime for test ids of the form "name@seconds".
func atTime(x crdt.TxnID) (time.Time, bool) {
	_, sec, ok := strings.Cut(string(x), "@")
	if !ok {
		return time.Time{}, false
	}
	n, err := strconv.Atoi(sec)
	if err != nil || n <= 0 {
		return time.Time{}, false
	}
	return time.Unix(int64(n), 0).UTC(), true
}

func timed(t testing.TB, hl, fl int) *Counter {
	c, err := New(Options{HistoryLength: hl, FoldedLength: fl, TxnTime: atTime})
	require.NoError(t, err)
	return c
}

// TestTimedRetryAfterWindowIsRefused is TestRetryAfterWindow with timed
// transactions: the retry that untimed counters count twice is refused.
func TestTimedRetryAfterWindowIsRefused(t *testing.T) {
	c := timed(t, 2, 2)
	apply(t, c, "a", "x@10", 10)
	for i := 0; i < 4; i++ {
		apply(t, c, "a", crdt.TxnID(fmt.Sprintf("y%d@%d", i, 11+i)), 1)
		if i == 2 {
			require.Equal(t, DuplicateFolded, apply(t, c, "b", "x@10", 10), "late but inside the window: recognised")
		}
	}
	require.True(t, c.Horizon().IsZero(), "nothing forgotten yet")
	_, err := c.Compact("a")
	require.NoError(t, err)
	require.Equal(t, Unknown, c.Status("x@10"), "x was forgotten after h+f later writes")
	require.Equal(t, time.Unix(10, 0).UTC(), c.Horizon())
	before := c.Clone()
	_, err = c.Apply("b", "x@10", 10)
	require.ErrorIs(t, err, crdt.ErrOutsideWindow)
	require.ErrorContains(t, err, "may have been counted already")
	require.True(t, c.Equal(before), "state unchanged")
	require.Equal(t, int64(14), c.Value(), "counted once, not 24")

	// A new transaction after the horizon is applied; one at or before it is
	// refused even though it is new: the counter cannot tell it from a
	// forgotten one.
	require.Equal(t, Applied, apply(t, c, "b", "z@11", 5))
	_, err = c.Apply("b", "w@10", 5)
	require.ErrorIs(t, err, crdt.ErrOutsideWindow)
	// Debits are checked against the later of both halves' horizons: the
	// losing write of a credit/debit conflict is forgotten in the other
	// half, so an old debit is refused too, and a debit after it applied.
	_, err = c.Apply("b", "d@1", -1)
	require.ErrorIs(t, err, crdt.ErrOutsideWindow)
	require.Equal(t, Applied, apply(t, c, "b", "d@12", -1))
}

func TestTimedRejectsIDsWithoutTime(t *testing.T) {
	c := timed(t, 2, 2)
	for _, x := range []crdt.TxnID{"plain", "x@0", "x@-3", "x@y"} {
		_, err := c.Apply("a", x, 1)
		require.ErrorIs(t, err, crdt.ErrInvalidTxnID, x)
		g, err := NewGCounter(Options{TxnTime: atTime})
		require.NoError(t, err)
		_, err = g.Apply("a", x, 1)
		require.ErrorIs(t, err, crdt.ErrInvalidTxnID, x)
	}
	require.Zero(t, c.p.Len())
}

// TestHorizonTravelsWithEntries: the horizon is part of the state, so a
// replica that merges in an entry that forgot x refuses x too, and the
// horizon survives encoding.
func TestHorizonTravelsWithEntries(t *testing.T) {
	a := timed(t, 1, 1)
	apply(t, a, "a", "x@5", 3)
	apply(t, a, "a", "y@6", 3)
	apply(t, a, "a", "z@7", 3)
	_, err := a.Compact("a")
	require.NoError(t, err)
	require.Equal(t, time.Unix(5, 0).UTC(), a.Horizon())
	e, _ := a.Positive().Entry("a")
	require.Equal(t, time.Unix(5, 0).UTC(), e.Forgot)

	b := timed(t, 1, 1)
	require.NoError(t, b.Merge(a))
	require.Equal(t, a.Horizon(), b.Horizon())
	_, err = b.Apply("b", "x@5", 3)
	require.ErrorIs(t, err, crdt.ErrOutsideWindow)

	data, err := a.MarshalBinary()
	require.NoError(t, err)
	d := timed(t, 1, 1)
	require.NoError(t, d.UnmarshalBinary(data))
	require.Equal(t, a.Horizon(), d.Horizon())
	require.True(t, d.Equal(a))
	_, err = d.Apply("b", "x@5", 3)
	require.ErrorIs(t, err, crdt.ErrOutsideWindow)

	// Replacing the entry that held the horizon with an older fork lowers
	// it again (Merge keeps the larger entry, so only an undo does this).
	g := a.Positive()
	g.swap("a", g.entries["a"], &entry{seq: 1, total: 3})
	require.True(t, g.Horizon().IsZero())
}

func TestTimeUUID(t *testing.T) {
	// RFC 4122's DNS namespace id is a version 1 UUID.
	at, ok := TimeUUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	require.True(t, ok)
	require.Equal(t, time.Date(1998, 2, 4, 22, 13, 53, 151182400, time.UTC), at)
	for _, x := range []crdt.TxnID{
		"6ba7b810-9dad-41d1-80b4-00c04fd430c8", // version 4
		"6ba7b8109dad11d180b400c04fd430c8",     // no dashes
		"{6ba7b810-9dad-11d1-80b4-00c04fd430c8}",
		"urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8",
		"txn-1",
	} {
		_, ok := TimeUUID(x)
		require.False(t, ok, x)
	}
}

// TestFutureSkew: a transaction stamped too far ahead of the clock is
// refused, so one bad clock cannot push the horizon into the future.
func TestFutureSkew(t *testing.T) {
	now := time.Unix(1000, 0)
	c, err := New(Options{TxnTime: atTime, FutureSkew: time.Minute, Clock: func() time.Time { return now }})
	require.NoError(t, err)
	require.Equal(t, Applied, apply(t, c, "a", "x@1060", 1), "exactly FutureSkew ahead is accepted")
	_, err = c.Apply("a", "y@1061", 1)
	require.ErrorIs(t, err, crdt.ErrOutsideWindow)
	require.ErrorContains(t, err, "after now")
	g, err := NewGCounter(Options{TxnTime: atTime, FutureSkew: time.Second, Clock: func() time.Time { return now }})
	require.NoError(t, err)
	_, err = g.Apply("a", "z@1002", 1)
	require.ErrorIs(t, err, crdt.ErrOutsideWindow)
	require.Zero(t, g.Len())

	_, err = New(Options{FutureSkew: -time.Second})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	// Without FutureSkew nothing is checked against the clock.
	d := timed(t, 2, 2)
	require.Equal(t, Applied, apply(t, d, "a", "far@9000000000", 1))
}

func TestTimeUUIDRange(t *testing.T) {
	// Version 1 UUIDs whose 60-bit timestamps lie before 1970 or after 2262
	// (the int64 nanosecond range) have no time.
	for _, x := range []crdt.TxnID{
		"00000000-0000-1000-8000-000000000000", // 1582-10-15
		"ffffffff-ffff-1fff-8000-000000000000", // 5236
		"6ba7b810-9dad-11d1-00b4-00c04fd430c8", // variant bits 00
	} {
		_, ok := TimeUUID(x)
		require.False(t, ok, x)
	}
	_, ok := TimeUUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	require.True(t, ok)
}

// TestForgettingOutOfRangeTimeKeepsHorizon: a transaction that reached a
// timed counter without a valid time (here written by an untimed counter,
// with a time after 2262 that would overflow int64 nanoseconds) does not
// move the horizon when it is forgotten. Found by review: the horizon
// wrapped to 2216 and every later transaction was refused.
func TestForgettingOutOfRangeTimeKeepsHorizon(t *testing.T) {
	un, err := New(Options{HistoryLength: 1, FoldedLength: 1})
	require.NoError(t, err)
	for _, x := range []crdt.TxnID{"old@99999999999", "y@20", "z@21"} {
		apply(t, un, "a", x, 1)
	}
	data, err := un.MarshalBinary()
	require.NoError(t, err)
	c := timed(t, 1, 1)
	require.NoError(t, c.UnmarshalBinary(data))
	apply(t, c, "b", "ok@1000", 1)
	_, err = c.Compact("a")
	require.NoError(t, err)
	require.Equal(t, Unknown, c.Status("old@99999999999"), "forgotten")
	require.True(t, c.Horizon().IsZero(), "horizon %v", c.Horizon())
	require.Equal(t, Applied, apply(t, c, "b", "new@1700000000", 1))
}

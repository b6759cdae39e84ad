package cassandra

import (
	"context"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestIntegrationSiblingsTTL: a records DB with a SiblingsTTL of 12 s (its
// own tables) on the server. It refuses a negative TTL and one above
// 630720000 seconds in Cassandra 4.0's words; a Put is read until it
// expires and not after; a later Put of the same actor gives the row a
// full TTL again; a Put whose token names TTL'd rows deletes exactly those
// versions; a TTL of 0 bound to the statement is none; a ledger using the
// DB as ledger.Options.Records recognises a retry inside its window, and
// its record is gone after the TTL while the account, in a DB without a
// TTL, stays. On a cluster the body waits for real (about 25 s). Cassandra
// counts a TTL from the second of the write, truncated, so a row is only
// sure to be read up to TTL less a second, and sure to be gone TTL after
// its write; the checks allow a second more either way for the difference
// between the test host's clock and the server's, and the body checks,
// from the times it measured, that each check ran where its rows are sure
// to be live or gone (the first writes may take up to 3 s, the second
// writes up to 2 s: a cold server prepares every statement on its first
// use). The model moves its clock instead; TestModelSiblingsTTLBoundary
// pins the exact second.
func TestIntegrationSiblingsTTL(t *testing.T) { eachTarget(t, integrationSiblingsTTL) }

func integrationSiblingsTTL(t *testing.T, tg *target) {
	ctx := context.Background()
	const ttl = 12 * time.Second
	// margin is the difference allowed between the test host's clock and
	// the server's.
	const margin = time.Second
	// live and gone are, on the test host's clock, the last instant a row
	// written at w is sure to be read and the first it is sure to be gone.
	live := func(w time.Time) time.Time { return w.Add(ttl - time.Second - margin) }
	gone := func(w time.Time) time.Time { return w.Add(ttl + margin) }
	rec := tg.freshDB(t, Options{SiblingsTTL: ttl, Now: tg.now})
	s := rec.Siblings()
	require.Equal(t, ttl-time.Second, s.TTL(), "the shortest a row lives")

	// The server refuses, past New's checks, what New refuses, and
	// writes nothing.
	raw := func(key string, ttl int) error {
		st := stmt{cql: s.cql(siblingsInsertTTL), args: []any{key, "a", []byte("v"), tg.now().UnixMicro(), ttl}, key: key}
		return rec.write(ctx, OpSiblingsPut, []stmt{st})
	}
	refused := func(err error, msg string) {
		t.Helper()
		require.ErrorIs(t, err, crdt.ErrMisconfiguredStore)
		var inv *gocql.RequestErrInvalid
		require.ErrorAs(t, err, &inv)
		require.Equal(t, msg, inv.Message())
	}
	bad := uniqueKey(t, "bad")
	refused(raw(bad, -1), "A TTL must be greater or equal to 0, but was -1")
	refused(raw(bad, 630720001), "ttl is too large. requested (630720001) maximum (630720000)")
	requireRows(t, s, bad)

	expiring, refreshed, superseded, forever := uniqueKey(t, "expiring"), uniqueKey(t, "refreshed"), uniqueKey(t, "superseded"), uniqueKey(t, "forever")
	acc := tg.newDB(t, Options{Now: tg.now})
	account := uniqueKey(t, "acct")
	l, err := ledger.New(acc.Siblings(), account, ledger.Options{Actor: "svc", Clock: tg.now, RetryWindow: time.Second, Records: s})
	require.NoError(t, err)
	record := ledger.RecordKey(account, "t1")

	t0 := tg.now()
	require.NoError(t, s.Put(ctx, expiring, "a", []byte("e1"), nil))
	require.NoError(t, s.Put(ctx, refreshed, "a", []byte("r1"), nil))
	require.NoError(t, s.Put(ctx, superseded, "a", []byte("a1"), nil))
	require.NoError(t, s.Put(ctx, superseded, "b", []byte("b1"), nil))
	require.NoError(t, raw(forever, 0))
	res, err := l.Credit(ctx, "t1", 5)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, res.Outcome)
	res, err = l.Credit(ctx, "t1", 5)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, res.Outcome, "a retry inside the window")
	written := tg.now()
	require.Less(t, written.Sub(t0), 3*time.Second, "the first writes must take under 3 s for the timings below")
	siblings := func(key string) int {
		t.Helper()
		got, _, err := s.Fetch(ctx, key)
		require.NoError(t, err)
		return len(got)
	}
	require.Equal(t, 1, siblings(record), "the transaction's record")
	require.Empty(t, tg.siblingRows(t, acc, record), "the record is not in the accounts' table")

	// TTL-5s after the writes started: every row is read (a row lives
	// more than TTL-1s after its write).
	tg.sleepUntil(t0.Add(ttl - 5*time.Second))
	requireRows(t, s, expiring, "e1")
	requireRows(t, s, forever, "v")
	require.Equal(t, 1, siblings(record))

	// Refresh: the actor's next Put gives its row a full TTL. Supersede:
	// d's Put with a token naming a's and b's rows deletes those
	// versions; b's row written after the Fetch survives.
	w2 := tg.now()
	require.Greater(t, w2.Sub(written), 4*time.Second, "the second writes must start 4 s after the first ended, for the checks below")
	tok := requireRows(t, s, refreshed, "r1")
	require.NoError(t, s.Put(ctx, refreshed, "a", []byte("r2"), tok))
	tok = requireRows(t, s, superseded, "a1", "b1")
	require.NoError(t, s.Put(ctx, superseded, "b", []byte("b2"), nil))
	require.NoError(t, s.Put(ctx, superseded, "d", []byte("d1"), tok))
	requireRows(t, s, superseded, "b2", "d1")
	require.Equal(t, map[crdt.ActorID]string{"b": "b2", "d": "d1"}, tg.siblingRows(t, rec, superseded))
	w2end := tg.now()
	require.True(t, w2end.Before(live(t0)), "the second writes must end while the first rows are sure to live (they took %v)", w2end.Sub(w2))

	// Once the first writes are sure to be gone: those rows are gone, the
	// record too; the rows written since are read; the account still
	// counts the transaction once.
	tg.sleepUntil(gone(written))
	requireRows(t, s, expiring)
	require.Empty(t, tg.siblingRows(t, rec, expiring))
	require.Zero(t, siblings(record), "the record expired")
	requireRows(t, s, refreshed, "r2")
	requireRows(t, s, superseded, "b2", "d1")
	requireRows(t, s, forever, "v")
	res, err = l.Credit(ctx, "t1", 5)
	require.NoError(t, err)
	require.NotEqual(t, tpncounter.Applied, res.Outcome, "the counter still holds the transaction")
	v, err := l.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(5), v)
	require.True(t, tg.now().Before(live(w2)), "the checks must end while the second rows are sure to live")

	// Once the second writes are sure to be gone: they are gone; the row
	// written with TTL 0 stays.
	tg.sleepUntil(gone(w2end))
	requireRows(t, s, refreshed)
	requireRows(t, s, superseded)
	require.Empty(t, tg.siblingRows(t, rec, superseded))
	requireRows(t, s, forever, "v")
}

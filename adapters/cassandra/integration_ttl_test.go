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

// TestIntegrationSiblingsTTL: a records DB with a SiblingsTTL of 6 s (its
// own tables) on the server. It refuses a negative TTL and one above
// 630720000 seconds in Cassandra 4.0's words; a Put is read until it
// expires and not after; a later Put of the same actor gives the row a
// full TTL again; a Put whose token names TTL'd rows deletes exactly those
// versions; a TTL of 0 bound to the statement is none; a ledger using the
// DB as ledger.Options.Records recognises a retry inside its window, and
// its record is gone after the TTL while the account, in a DB without a
// TTL, stays. On a cluster the body waits for real (about 12 s; the checks
// allow half a second between the test host's clock and the server's, and
// the reads after the second writes' expiry check up to 2 s, since those
// rows live more than TTL − 1 s after the second writes, which start
// TTL − 2 s + margin after the first);
// the model moves its clock instead. Cassandra counts a TTL from the
// second of the write, truncated, so a row is only sure to be read up to
// TTL less a second; TestModelSiblingsTTLBoundary pins the exact second.
func TestIntegrationSiblingsTTL(t *testing.T) { eachTarget(t, integrationSiblingsTTL) }

func integrationSiblingsTTL(t *testing.T, tg *target) {
	ctx := context.Background()
	const ttl = 6 * time.Second // 4 s left the reads below half a second
	const margin = 500 * time.Millisecond
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
	require.Less(t, written.Sub(t0), margin, "the first writes must take under %v for the timings below", margin)
	siblings := func(key string) int {
		t.Helper()
		got, _, err := s.Fetch(ctx, key)
		require.NoError(t, err)
		return len(got)
	}
	require.Equal(t, 1, siblings(record), "the transaction's record")
	require.Empty(t, tg.siblingRows(t, acc, record), "the record is not in the accounts' table")

	// TTL-2s after the writes: every row is read (a row lives more than
	// TTL-1s after its write).
	tg.sleepUntil(t0.Add(ttl - 2*time.Second))
	requireRows(t, s, expiring, "e1")
	requireRows(t, s, forever, "v")
	require.Equal(t, 1, siblings(record))

	// Refresh: the actor's next Put gives its row a full TTL. Supersede:
	// d's Put with a token naming a's and b's rows deletes those
	// versions; b's row written after the Fetch survives.
	tg.sleepUntil(t0.Add(ttl - 2*time.Second + margin))
	w2 := tg.now()
	tok := requireRows(t, s, refreshed, "r1")
	require.NoError(t, s.Put(ctx, refreshed, "a", []byte("r2"), tok))
	tok = requireRows(t, s, superseded, "a1", "b1")
	require.NoError(t, s.Put(ctx, superseded, "b", []byte("b2"), nil))
	require.NoError(t, s.Put(ctx, superseded, "d", []byte("d1"), tok))
	requireRows(t, s, superseded, "b2", "d1")
	require.Equal(t, map[crdt.ActorID]string{"b": "b2", "d": "d1"}, tg.siblingRows(t, rec, superseded))
	w2end := tg.now()
	require.Less(t, w2end.Sub(w2), margin, "the second writes must take under %v for the timings below", margin)

	// TTL+margin after the first writes: those rows are gone, the record
	// too; the rows written since are read; the account still counts the
	// transaction once.
	tg.sleepUntil(written.Add(ttl + margin))
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

	// TTL+margin after the second writes: they are gone; the row written
	// with TTL 0 stays.
	tg.sleepUntil(w2end.Add(ttl + margin))
	requireRows(t, s, refreshed)
	requireRows(t, s, superseded)
	require.Empty(t, tg.siblingRows(t, rec, superseded))
	requireRows(t, s, forever, "v")
}

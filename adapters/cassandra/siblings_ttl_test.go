package cassandra

// Options.SiblingsTTL: validation, the statement, and rows that expire on
// the model of Cassandra's rules, at the second Cassandra expires them.
// The same expectations with real waiting, on both targets:
// TestIntegrationSiblingsTTL.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestSiblingsTTLOption: New takes SiblingsTTL in whole seconds rounded
// up, refuses a negative one and one above Cassandra's maximum, and a
// DB with one binds it to every Put's INSERT.
func TestSiblingsTTLOption(t *testing.T) {
	for _, c := range []struct {
		ttl  time.Duration
		want time.Duration // effective TTL; -1: refused
	}{
		{0, 0},
		{time.Nanosecond, time.Second},
		{time.Millisecond, time.Second},
		{time.Second, time.Second},
		{time.Second + time.Nanosecond, 2 * time.Second},
		{1500 * time.Millisecond, 2 * time.Second},
		{ledger.DefaultExpireAfter, 25 * time.Hour},
		{MaxSiblingsTTL - time.Nanosecond, MaxSiblingsTTL},
		{MaxSiblingsTTL, MaxSiblingsTTL},
		{MaxSiblingsTTL + time.Nanosecond, -1},
		{MaxSiblingsTTL + time.Second, -1},
		{1<<63 - 1, -1},
		{-time.Nanosecond, -1},
		{-time.Hour, -1},
	} {
		db, err := newDB(nil, "ks", Options{SiblingsTTL: c.ttl})
		if c.want < 0 {
			require.ErrorIs(t, err, crdt.ErrInvalidConfig, "%v", c.ttl)
			require.Nil(t, db)
			continue
		}
		require.NoError(t, err, "%v", c.ttl)
		s := db.Siblings()
		kept := time.Duration(0) // the shortest a row lives: a second less
		if c.want > 0 {
			kept = max(c.want-time.Second, time.Nanosecond)
		}
		var exp store.Expiring = s
		require.Equal(t, kept, exp.TTL(), "%v", c.ttl)

		stmts, err := s.putStmts("k", "a", []byte("v"), nil)
		require.NoError(t, err)
		require.Len(t, stmts, 1)
		if c.want == 0 {
			require.Equal(t, `INSERT INTO "ks"."counterkit_siblings" (key, actor, value) VALUES (?, ?, ?) USING TIMESTAMP ?`, stmts[0].cql)
			require.Len(t, stmts[0].args, 4)
			continue
		}
		require.Equal(t, `INSERT INTO "ks"."counterkit_siblings" (key, actor, value) VALUES (?, ?, ?) USING TIMESTAMP ? AND TTL ?`, stmts[0].cql)
		require.Equal(t, int(c.want/time.Second), stmts[0].args[4], "%v", c.ttl)
	}
	require.Equal(t, 630720000*time.Second, MaxSiblingsTTL)

	// New applies the check too (the nil session is refused first).
	_, err := New(&gocql.Session{}, "ks", Options{SiblingsTTL: -time.Second})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)

	// The deletes a Put sends carry no TTL.
	db, err := newDB(nil, "ks", Options{SiblingsTTL: time.Hour})
	require.NoError(t, err)
	tok, err := encodeToken([]tokenEntry{{actor: "b", ts: 5}})
	require.NoError(t, err)
	stmts, err := db.Siblings().putStmts("k", "a", []byte("v"), seal(tok, db.tables[tableSiblings], "k"))
	require.NoError(t, err)
	require.Len(t, stmts, 2)
	require.Equal(t, `DELETE FROM "ks"."counterkit_siblings" USING TIMESTAMP ? WHERE key = ? AND actor = ?`, stmts[1].cql)

	// Partitions are unaffected.
	require.NotContains(t, db.Partitions().mutationStmt(store.Mutation{Partition: "p", Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 1}).cql, "TTL")
}

// ttlModel returns a Siblings store with SiblingsTTL ttl on a fresh model,
// its DB's clock (the model node's too) at start.
func ttlModel(t *testing.T, ttl time.Duration, start time.Time) (*Siblings, *cqlModel, *stepClock) {
	t.Helper()
	c := &stepClock{t: start}
	db, err := newDB(nil, "ks", Options{SiblingsTTL: ttl, Now: c.Now})
	require.NoError(t, err)
	m := newCQLModel(db)
	return m.siblings(db), m, c
}

// requireRows fetches key and requires exactly want (values in actor
// order; none: no siblings and a nil token).
func requireRows(t *testing.T, s *Siblings, key string, want ...string) store.Token {
	t.Helper()
	got, tok, err := s.Fetch(context.Background(), key)
	require.NoError(t, err)
	var vals []string
	for _, v := range got {
		vals = append(vals, string(v))
	}
	require.Equal(t, want, vals)
	if len(want) == 0 {
		require.Nil(t, tok)
	}
	return tok
}

// TestModelSiblingsTTLBoundary: a row written with a TTL of T seconds at
// second S of the server's clock (its time truncated) expires at S+T, as
// Cassandra decides: a cell is expired when its localExpirationTime
// (S+T) <= nowInSeconds. So it is read up to S+T less a nanosecond and
// not from S+T on: a row written at a whole second lives exactly T, one
// written later in the second up to a second less.
func TestModelSiblingsTTLBoundary(t *testing.T) {
	ctx := context.Background()
	const ttl = 10 * time.Second
	for _, frac := range []time.Duration{0, 300 * time.Millisecond, time.Second - time.Nanosecond} {
		sec := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		s, _, c := ttlModel(t, ttl, sec.Add(frac))
		require.NoError(t, s.Put(ctx, "k", "a", []byte("v"), nil))
		for _, p := range []struct {
			at      time.Duration // after the write's second
			visible bool
		}{
			{0, true},
			{ttl - time.Second, true},
			{ttl - time.Nanosecond, true},
			{ttl, false},
			{ttl + time.Second, false},
			{time.Hour, false},
		} {
			c.mu.Lock()
			c.t = sec.Add(p.at)
			c.mu.Unlock()
			if p.at < frac {
				continue
			}
			if p.visible {
				requireRows(t, s, "k", "v")
			} else {
				requireRows(t, s, "k")
			}
		}
	}
}

// TestModelSiblingsTTLExpiry: a Put with a TTL is read (with its
// WRITETIME, in the token) before it expires and not after; a later Put of
// the same actor writes the row again with a full TTL; a Put whose token
// names TTL'd rows still deletes exactly those versions; an expired row
// is scanned as a tombstone by reads; a DB without a TTL on the same model
// writes rows that stay.
func TestModelSiblingsTTLExpiry(t *testing.T) {
	ctx := context.Background()
	const ttl = 10 * time.Second
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, m, c := ttlModel(t, ttl, start)

	require.NoError(t, s.Put(ctx, "k", "a", []byte("a1"), nil))
	c.Add(ttl - time.Second)
	requireRows(t, s, "k", "a1")
	c.Add(2 * time.Second) // TTL+1s
	requireRows(t, s, "k")
	require.Empty(t, m.siblingRows(s.db, "k"))

	// Refresh: the actor's next Put (here at 6s, with its Fetch's token)
	// gives its row a full TTL again.
	c.Add(time.Hour)
	t0 := c.Now()
	require.NoError(t, s.Put(ctx, "r", "a", []byte("r1"), nil))
	c.Add(6 * time.Second)
	tok := requireRows(t, s, "r", "r1")
	require.NoError(t, s.Put(ctx, "r", "a", []byte("r2"), tok))
	c.Add(ttl - 2*time.Second) // 4s after the first row's expiry
	require.Equal(t, t0.Add(14*time.Second), c.Now())
	requireRows(t, s, "r", "r2")
	c.Add(time.Second) // 15s = TTL−1s after the second Put
	requireRows(t, s, "r", "r2")
	c.Add(2 * time.Second) // TTL+1s after it
	requireRows(t, s, "r")
	// A blind Put of the same actor refreshes it too.
	require.NoError(t, s.Put(ctx, "r", "a", []byte("r3"), nil))
	c.Add(ttl - time.Second)
	requireRows(t, s, "r", "r3")

	// Supersede: d's Put with a token naming a and b (both TTL'd) deletes
	// those versions; b's row written after the Fetch survives, with its
	// own TTL.
	require.NoError(t, s.Put(ctx, "x", "a", []byte("a1"), nil))
	require.NoError(t, s.Put(ctx, "x", "b", []byte("b1"), nil))
	c.Add(2 * time.Second)
	tok = requireRows(t, s, "x", "a1", "b1")
	require.NoError(t, s.Put(ctx, "x", "b", []byte("b2"), nil))
	require.NoError(t, s.Put(ctx, "x", "d", []byte("d1"), tok))
	requireRows(t, s, "x", "b2", "d1")
	require.Equal(t, map[crdt.ActorID]string{"b": "b2", "d": "d1"}, m.siblingRows(s.db, "x"))
	c.Add(ttl - time.Second)
	requireRows(t, s, "x", "b2", "d1")
	c.Add(2 * time.Second)
	requireRows(t, s, "x")

	// A DB without a TTL on the same tables: its rows stay.
	plain, err := newDB(nil, "ks", Options{Now: c.Now})
	require.NoError(t, err)
	m.attach(plain)
	require.NoError(t, plain.Siblings().Put(ctx, "p", "a", []byte("forever"), nil))
	c.Add(100 * 365 * 24 * time.Hour)
	requireRows(t, plain.Siblings(), "p", "forever")

	// Expired rows are scanned as tombstones: past
	// tombstone_failure_threshold of them a read fails.
	p := m.tables[s.db.tables[tableSiblings]].part("many")
	for i := range modelTombstoneFail {
		p.cells[fmt.Sprint("e", i)] = modelCell{value: []byte("v"), ts: 1, expires: 1}
	}
	p.cells["live"] = modelCell{value: []byte("v"), ts: 1}
	p.sorted = nil
	requireRows(t, s, "many", "v")
	p.cells["e-one-more"] = modelCell{value: []byte("v"), ts: 1, expires: 1}
	p.sorted = nil
	_, _, err = s.Fetch(ctx, "many")
	require.ErrorIs(t, err, crdt.ErrUnavailable)
}

// TestModelTTLReconcile: cells with equal timestamps reconcile as in
// Cassandra 4.0 (Cells.reconcile, CASSANDRA-14592): an expiring cell
// beats one that does not expire, the later expiry beats the earlier,
// then the greater value; an expired cell keeps shadowing a write below
// its timestamp.
func TestModelTTLReconcile(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	_, m, c := ttlModel(t, time.Hour, start)
	db, err := newDB(nil, "ks", Options{Now: c.Now})
	require.NoError(t, err)
	s := m.siblings(db)
	ins := func(v string, ts int64, ttl ...int) {
		t.Helper()
		st := stmt{cql: s.cql(siblingsInsert), args: []any{"k", "a", []byte(v), ts}, key: "k"}
		if len(ttl) > 0 {
			st = stmt{cql: s.cql(siblingsInsertTTL), args: []any{"k", "a", []byte(v), ts, ttl[0]}, key: "k"}
		}
		require.NoError(t, db.write(context.Background(), OpSiblingsPut, []stmt{st}))
	}
	// An expiring cell beats a greater value at the same timestamp, in
	// either order of arrival.
	ins("b", 10)
	ins("a", 10, 100)
	requireRows(t, s, "k", "a")
	ins("c", 10)
	requireRows(t, s, "k", "a")
	// Of two expiring cells, the later expiry.
	c.Add(time.Second)
	ins("0", 10, 100)
	requireRows(t, s, "k", "0")
	ins("z", 10, 50)
	requireRows(t, s, "k", "0")
	// Equal expiries: the greater value.
	ins("1", 10, 100)
	requireRows(t, s, "k", "1")
	// Expired, it shadows a write below its timestamp, not one above.
	c.Add(101 * time.Second)
	requireRows(t, s, "k")
	ins("late", 9)
	requireRows(t, s, "k")
	ins("new", 11)
	requireRows(t, s, "k", "new")
}

// TestModelTTLRefusals: the model refuses, as Cassandra 4.0 does in
// Attributes.getTimeToLive, a negative TTL and one above 630720000
// seconds; and, by 4.0's default expiration date overflow policy
// (REJECT), one whose expiry passes 2038-01-19T03:14:07Z. TTL 0 is none.
// Nothing is written.
func TestModelTTLRefusals(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, m, c := ttlModel(t, time.Hour, start)
	ins := func(key string, ttl int) error {
		return s.db.write(ctx, OpSiblingsPut, []stmt{{cql: s.cql(siblingsInsertTTL), args: []any{key, "a", []byte("v"), int64(1), ttl}, key: key}})
	}
	refused := func(err error, msg string) {
		t.Helper()
		require.ErrorIs(t, err, crdt.ErrMisconfiguredStore)
		var inv *gocql.RequestErrInvalid
		require.ErrorAs(t, err, &inv)
		require.Equal(t, msg, inv.Message())
	}
	refused(ins("k", -1), "A TTL must be greater or equal to 0, but was -1")
	refused(ins("k", 630720001), "ttl is too large. requested (630720001) maximum (630720000)")
	left := int(modelMaxExpiration - start.Unix()) // seconds to 2038-01-19T03:14:07Z
	refused(ins("k", left+1), `Request on table ks.counterkit_siblings with ttl of `+strconv.Itoa(left+1)+` seconds exceeds maximum supported expiration `+
		`date of 2038-01-19T03:14:06+00:00. In order to avoid this use a lower TTL, change the expiration date overflow policy `+
		`or upgrade to a version where this limitation is fixed. See CASSANDRA-14092 for more details.`)
	refused(ins("k", 630720000), `Request on table ks.counterkit_siblings with ttl of 630720000 seconds exceeds maximum supported expiration `+
		`date of 2038-01-19T03:14:06+00:00. In order to avoid this use a lower TTL, change the expiration date overflow policy `+
		`or upgrade to a version where this limitation is fixed. See CASSANDRA-14092 for more details.`)
	_, writes := m.counts()
	require.Zero(t, writes)
	requireRows(t, s, "k")

	require.NoError(t, ins("k", left))
	require.NoError(t, ins("zero", 0))
	c.Add(time.Duration(left) * time.Second)
	requireRows(t, s, "k")
	requireRows(t, s, "zero", "v")

	// The adapter's own Put at MaxSiblingsTTL, which New accepts, is
	// refused by a 4.0 server in 2026: the row would expire after 2038.
	s2, _, _ := ttlModel(t, MaxSiblingsTTL, start)
	err := s2.Put(ctx, "k", "a", []byte("v"), nil)
	require.ErrorIs(t, err, crdt.ErrMisconfiguredStore)
	require.False(t, errors.Is(err, crdt.ErrAmbiguousWrite))
}

// TestModelLedgerRecordsExpire: a ledger whose records store
// (ledger.Options.Records) is a DB with SiblingsTTL ledger.DefaultExpireAfter
// works end to end: a retry inside the window is a Duplicate, the record
// is read until the TTL less a second and gone a second after it, and a
// retry then is not counted again (the counter still holds it).
func TestModelLedgerRecordsExpire(t *testing.T) {
	ctx := context.Background()
	c := &stepClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	accDB, err := newDB(nil, "ks", Options{Now: c.Now})
	require.NoError(t, err)
	recDB, err := newDB(nil, "ks", Options{TablePrefix: "counterkit_records_", SiblingsTTL: ledger.DefaultExpireAfter, Now: c.Now})
	require.NoError(t, err)
	m := newCQLModel(accDB)
	m.createTables(recDB)
	m.attach(accDB)
	m.attach(recDB)
	recs := recDB.Siblings()

	l, err := ledger.New(accDB.Siblings(), "acct", ledger.Options{Actor: "svc", Clock: c.Now, Records: recs})
	require.NoError(t, err)
	res, err := l.Credit(ctx, "t1", 5)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, res.Outcome)
	key := ledger.RecordKey("acct", "t1")
	requireRecord := func(want bool) {
		t.Helper()
		got, _, err := recs.Fetch(ctx, key)
		require.NoError(t, err)
		require.Equal(t, want, len(got) > 0, "record at %v", c.Now())
		require.Equal(t, want, len(m.siblingRows(recDB, key)) > 0)
	}
	requireRecord(true)
	require.Empty(t, m.siblingRows(accDB, key), "the record is not in the accounts' table")

	c.Add(time.Hour)
	res, err = l.Credit(ctx, "t1", 5)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, res.Outcome)
	c.Add(ledger.DefaultExpireAfter - time.Hour - time.Second)
	requireRecord(true)
	c.Add(2 * time.Second)
	requireRecord(false)

	// The account stays: its store has no TTL.
	c.Add(365 * 24 * time.Hour)
	res, err = l.Credit(ctx, "t1", 5)
	require.NoError(t, err)
	require.NotEqual(t, tpncounter.Applied, res.Outcome)
	v, err := l.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(5), v)
}

// TestModelServerClockDecides: the node's clock, not the clock of the
// client whose request it serves, dates a TTL'd row's expiry and checks
// the TTL against 2038, as a server's own clock does. A client whose clock
// is 2037-06 writes a row with a TTL of a year to a 2026 node, which
// accepts it (the same client clock on a 2037-06 node is refused), and
// reads it back; a client a day ahead still reads a row with a TTL of a
// minute, and a client a day behind does not read it once the node's
// clock has passed its expiry.
func TestModelServerClockDecides(t *testing.T) {
	ctx := context.Background()
	const year = 365 * 24 * time.Hour
	node := &stepClock{t: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	nodeDB, err := newDB(nil, "ks", Options{Now: node.Now})
	require.NoError(t, err)
	m := newCQLModel(nodeDB)
	client := func(skew time.Duration, ttl time.Duration) *Siblings {
		db, err := newDB(nil, "ks", Options{SiblingsTTL: ttl, Now: func() time.Time { return node.Now().Add(skew) }})
		require.NoError(t, err)
		m.attach(db)
		return db.Siblings()
	}
	future := time.Date(2037, 6, 1, 0, 0, 0, 0, time.UTC).Sub(node.Now())

	ahead := client(future, year)
	require.NoError(t, ahead.Put(ctx, "k2037", "a", []byte("v"), nil), "a 2026 node accepts a TTL of a year")
	requireRows(t, ahead, "k2037", "v")

	late := &stepClock{t: time.Date(2037, 6, 1, 0, 0, 0, 0, time.UTC)}
	lateDB, err := newDB(nil, "ks", Options{SiblingsTTL: year, Now: late.Now})
	require.NoError(t, err)
	err = newCQLModel(lateDB).siblings(lateDB).Put(ctx, "k2037", "a", []byte("v"), nil)
	require.ErrorIs(t, err, crdt.ErrMisconfiguredStore, "a 2037-06 node refuses it")
	require.ErrorContains(t, err, "CASSANDRA-14092")

	dayAhead, dayBehind := client(24*time.Hour, time.Minute), client(-24*time.Hour, time.Minute)
	require.NoError(t, dayAhead.Put(ctx, "kmin", "a", []byte("m"), nil))
	requireRows(t, dayAhead, "kmin", "m")
	requireRows(t, dayBehind, "kmin", "m")
	node.Add(time.Minute)
	requireRows(t, dayBehind, "kmin")
	requireRows(t, dayAhead, "kmin")
}

package cassandra

// Unit tests that need no cluster: identifier validation, statement
// building, error mapping, consistency choice and the write clock. They run
// in CI; the integration suite (integration_test.go) needs CASSANDRA_HOSTS.

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/tally"
)

// testSeed returns COUNTERKIT_SEED or a clock seed, and logs how to replay.
func testSeed(t testing.TB) int64 {
	t.Helper()
	seed := time.Now().UnixNano()
	if s := os.Getenv("COUNTERKIT_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, "COUNTERKIT_SEED")
		seed = v
	}
	t.Logf("seed %d (replay: COUNTERKIT_SEED=%d go test -run '^%s$' .)", seed, seed, t.Name())
	return seed
}

// testCases scales n by COUNTERKIT_CASES (a positive multiplier).
func testCases(t testing.TB, n int) int {
	t.Helper()
	if s := os.Getenv("COUNTERKIT_CASES"); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, "COUNTERKIT_CASES")
		require.Greater(t, f, 0.0, "COUNTERKIT_CASES")
		n = int(float64(n) * f)
		if n < 1 {
			n = 1
		}
	}
	return n
}

func TestCheckIdentifier(t *testing.T) {
	ok := []string{"a", "ks", "counterkit_it", "a_1_b", "x" + strings.Repeat("9", MaxIdentifierLen-1), "select"}
	for _, name := range ok {
		require.NoError(t, CheckIdentifier(name), name)
	}
	bad := []string{
		"", "1ks", "_ks", "Ks", "ksA", "ks-1", "ks.t", `ks"`, `ks"; DROP KEYSPACE x; --`,
		"ks t", "ks\n", "ks\x00", "kś", strings.Repeat("a", MaxIdentifierLen+1), "'ks'",
	}
	for _, name := range bad {
		err := CheckIdentifier(name)
		require.Error(t, err, "%q", name)
		require.ErrorIs(t, err, crdt.ErrInvalidIdentifier, "%q", name)
	}
}

// TestCheckIdentifierModel compares CheckIdentifier with a regular
// expression model on random strings drawn from an alphabet rich in the
// characters that matter (quotes, dots, case, digits, non-ASCII).
func TestCheckIdentifierModel(t *testing.T) {
	model := regexp.MustCompile(`^[a-z][a-z0-9_]{0,47}$`)
	rng := rand.New(rand.NewSource(testSeed(t)))
	alphabet := []rune(`abz019_AZ."'; -ś` + "\x00\n")
	n := testCases(t, 20000)
	for i := 0; i < n; i++ {
		l := rng.Intn(52)
		if rng.Intn(4) == 0 {
			l = MaxIdentifierLen - 1 + rng.Intn(3)
		}
		var b strings.Builder
		for j := 0; j < l; j++ {
			if rng.Intn(3) > 0 {
				b.WriteByte(byte('a' + rng.Intn(26)))
			} else {
				b.WriteRune(alphabet[rng.Intn(len(alphabet))])
			}
		}
		name := b.String()
		err := CheckIdentifier(name)
		require.Equal(t, model.MatchString(name), err == nil, "%q: %v", name, err)
		if err == nil {
			require.Equal(t, 2, strings.Count(quote(name), `"`))
		}
	}
}

func TestCheckKey(t *testing.T) {
	require.Equal(t, crdt.MaxKeyLen, MaxKeyLen)
	require.Same(t, crdt.ErrInvalidKey, ErrInvalidKey)
	require.NoError(t, checkKey("k"))
	require.NoError(t, checkKey(`it's "fine"; DROP TABLE x`)) // keys are bound, never formatted
	require.NoError(t, checkKey("naïve/ключ"))
	require.NoError(t, checkKey(strings.Repeat("k", MaxKeyLen)))
	bad := []string{"", strings.Repeat("k", MaxKeyLen+1), strings.Repeat("k", 1024), "\xff", "a\x00b", "tab\there", "del\x7f", "c1\u0085"}
	for _, k := range bad {
		err := checkKey(k)
		require.ErrorIs(t, err, ErrInvalidKey, "%q", k)
		require.ErrorIs(t, err, crdt.ErrInvalidKey, "%q", k)
		require.ErrorIs(t, err, crdt.ErrInvalidIdentifier, "%q", k)
	}
	// checkKey is crdt.ValidateKey: the same verdict on every key, valid
	// or not.
	for _, k := range append(bad, "k", "account/42", strings.Repeat("é", MaxKeyLen/2)) {
		require.Equal(t, crdt.ValidateKey("counter key", k) == nil, checkKey(k) == nil, "%q", k)
	}
}

func TestSchemaStatements(t *testing.T) {
	stmts, err := Schema("shop", "")
	require.NoError(t, err)
	require.Len(t, stmts, len(allTables))
	for i, tbl := range allTables {
		require.Contains(t, stmts[i], `CREATE TABLE IF NOT EXISTS "shop"."counterkit_`+tbl+`" (`)
	}
	require.Contains(t, stmts[3], "CLUSTERING ORDER BY (id DESC, kind ASC)")
	require.Contains(t, stmts[4], "CLUSTERING ORDER BY (updateid DESC, type ASC, version ASC)")

	stmts, err = Schema("shop", "app_")
	require.NoError(t, err)
	require.Contains(t, stmts[0], `"shop"."app_state"`)

	for _, c := range []struct{ ks, prefix string }{
		{`shop"; DROP KEYSPACE shop; --`, ""},
		{"Shop", ""},
		{"shop", "App_"},
		{"shop", "x.y"},
		{"shop", strings.Repeat("p", MaxIdentifierLen)},
	} {
		_, err := Schema(c.ks, c.prefix)
		require.ErrorIs(t, err, crdt.ErrInvalidIdentifier, "%+v", c)
	}

	ks, err := CreateKeyspaceStatement("counterkit_it", 1)
	require.NoError(t, err)
	require.Equal(t, `CREATE KEYSPACE IF NOT EXISTS "counterkit_it" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, ks)
	_, err = CreateKeyspaceStatement("bad-name", 1)
	require.ErrorIs(t, err, crdt.ErrInvalidIdentifier)
	_, err = CreateKeyspaceStatement("ok", 0)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
}

func TestNewValidates(t *testing.T) {
	_, err := New(nil, "ks", Options{})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	_, err = newDB(nil, "bad ks", Options{})
	require.ErrorIs(t, err, crdt.ErrInvalidIdentifier)
	_, err = newDB(nil, "ks", Options{TablePrefix: "Bad"})
	require.ErrorIs(t, err, crdt.ErrInvalidIdentifier)
	_, err = newDB(nil, "ks", Options{LogPageSize: -1})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	_, err = newDB(nil, "ks", Options{Consistency: map[Op]gocql.Consistency{OpTallyGCRead: gocql.Quorum}})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)

	db, err := newDB(nil, "ks", Options{Consistency: map[Op]gocql.Consistency{OpStateLoad: gocql.All, OpStateSave: gocql.One}})
	require.NoError(t, err)
	require.Equal(t, gocql.All, db.Consistency(OpStateLoad))
	require.Equal(t, gocql.One, db.Consistency(OpStateSave))
	require.Equal(t, gocql.Quorum, db.Consistency(OpLedgerPut))
	require.Equal(t, gocql.All, db.Consistency(OpTallyGCRead))
	require.Equal(t, "ks", db.Keyspace())
}

func TestDefaultConsistency(t *testing.T) {
	require.NoError(t, CheckConsistency(nil))
	for _, op := range sortedOps() {
		want := gocql.Quorum
		if op == OpTallyGCRead {
			want = gocql.All
		}
		require.Equal(t, want, DefaultConsistency(op), op.String())
		require.NotContains(t, op.String(), "Op(", "every operation has a name")
	}
}

func TestCheckConsistency(t *testing.T) {
	type levels = map[Op]gocql.Consistency
	good := []levels{
		// DC-local state; the Tx commit at EACH_QUORUM overlaps both the
		// LOCAL_QUORUM state load and the other (QUORUM) reads.
		{OpStateLoad: gocql.LocalQuorum, OpStateSave: gocql.LocalQuorum, OpTxCommit: gocql.EachQuorum},
		{OpStateLoad: gocql.All, OpStateSave: gocql.One},
		{OpStateLoad: gocql.One, OpStateSave: gocql.All, OpTxCommit: gocql.All},
		{OpLedgerFetch: gocql.EachQuorum, OpLedgerPut: gocql.Quorum},
		{OpTallyRead: gocql.One, OpShardWrite: gocql.One, OpLogDelete: gocql.One},
		{OpLogAppend: gocql.One, OpLogRead: gocql.All},
		{OpTallyGCRead: gocql.Any}, // Any means "default"
	}
	for _, l := range good {
		require.NoError(t, CheckConsistency(l), "%v", l)
	}
	bad := []levels{
		{OpTallyGCRead: gocql.Quorum},
		{OpStateLoad: gocql.One},
		{OpStateSave: gocql.LocalOne},
		{OpLedgerFetch: gocql.Two},
		{OpLogAppend: gocql.One},
		{OpLogRead: gocql.One},
		{OpBalanceIncrement: gocql.One},
		{OpBalanceRead: gocql.LocalOne},
		{OpBalanceMergeWrite: gocql.One},
		{OpStateSave: gocql.Serial},
		{OpLogRead: gocql.LocalSerial},
		{OpLogRead: gocql.Consistency(0x77)},
		{Op(0): gocql.Quorum},
		{opEnd: gocql.Quorum},
	}
	for _, l := range bad {
		require.ErrorIs(t, CheckConsistency(l), crdt.ErrInvalidConfig, "%v", l)
	}
}

// TestOverlapModel checks overlaps against replica arithmetic for a single
// data center with RF 3 and 5: a read and a write overlap iff the replica
// counts they need sum to more than RF (quorum = RF/2+1).
func TestOverlapModel(t *testing.T) {
	levels := []gocql.Consistency{gocql.One, gocql.Two, gocql.Three, gocql.Quorum, gocql.All, gocql.LocalQuorum, gocql.EachQuorum, gocql.LocalOne}
	need := func(c gocql.Consistency, rf int) int {
		switch c {
		case gocql.One, gocql.LocalOne:
			return 1
		case gocql.Two:
			return 2
		case gocql.Three:
			return 3
		case gocql.All:
			return rf
		default:
			return rf/2 + 1
		}
	}
	for _, r := range levels {
		for _, w := range levels {
			always := true
			for _, rf := range []int{3, 5} {
				if need(r, rf)+need(w, rf) <= rf {
					always = false
				}
			}
			if overlaps(r, w) {
				require.True(t, always, "overlaps(%v,%v) claims overlap that replica arithmetic denies", r, w)
			}
			// The conservative rule may refuse pairs like TWO+TWO at RF 3;
			// it must accept ALL with anything and same-locality quorums.
			if r == gocql.All || w == gocql.All || (globalQuorum(r) && globalQuorum(w)) || (localQuorum(r) && localQuorum(w)) {
				require.True(t, overlaps(r, w), "%v,%v", r, w)
			}
		}
	}
}

func TestErrorMapping(t *testing.T) {
	cases := []struct {
		err         error
		write, read error
	}{
		{&gocql.RequestErrUnavailable{Consistency: gocql.Quorum, Required: 2, Alive: 1}, crdt.ErrUnavailable, crdt.ErrUnavailable},
		{&gocql.RequestErrOverloaded{}, crdt.ErrUnavailable, crdt.ErrUnavailable},
		{&gocql.RequestErrBootstrapping{}, crdt.ErrUnavailable, crdt.ErrUnavailable},
		{gocql.ErrNoConnections, crdt.ErrUnavailable, crdt.ErrUnavailable},
		{gocql.ErrNoStreams, crdt.ErrUnavailable, crdt.ErrUnavailable},
		{gocql.ErrSessionClosed, crdt.ErrUnavailable, crdt.ErrUnavailable},
		{&gocql.RequestErrWriteTimeout{WriteType: "SIMPLE"}, crdt.ErrAmbiguousWrite, crdt.ErrUnavailable},
		{&gocql.RequestErrWriteTimeout{WriteType: "BATCH_LOG"}, crdt.ErrAmbiguousWrite, crdt.ErrUnavailable},
		{&gocql.RequestErrWriteFailure{}, crdt.ErrAmbiguousWrite, crdt.ErrUnavailable},
		{&gocql.RequestErrCASWriteUnknown{}, crdt.ErrAmbiguousWrite, crdt.ErrUnavailable},
		{gocql.ErrTimeoutNoResponse, crdt.ErrAmbiguousWrite, crdt.ErrUnavailable},
		{gocql.ErrConnectionClosed, crdt.ErrAmbiguousWrite, crdt.ErrUnavailable},
		{context.DeadlineExceeded, crdt.ErrAmbiguousWrite, crdt.ErrUnavailable},
		{context.Canceled, crdt.ErrAmbiguousWrite, crdt.ErrUnavailable},
		{&gocql.RequestErrReadTimeout{}, crdt.ErrUnavailable, crdt.ErrUnavailable},
		{&gocql.RequestErrReadFailure{}, crdt.ErrUnavailable, crdt.ErrUnavailable},
		{&gocql.RequestErrSyntax{}, crdt.ErrMisconfiguredStore, crdt.ErrMisconfiguredStore},
		{&gocql.RequestErrInvalid{}, crdt.ErrMisconfiguredStore, crdt.ErrMisconfiguredStore},
		{&gocql.RequestErrConfig{}, crdt.ErrMisconfiguredStore, crdt.ErrMisconfiguredStore},
		{&gocql.RequestErrUnauthorized{}, crdt.ErrMisconfiguredStore, crdt.ErrMisconfiguredStore},
		{&gocql.RequestErrCredentials{}, crdt.ErrMisconfiguredStore, crdt.ErrMisconfiguredStore},
		{&gocql.RequestErrAlreadyExists{}, crdt.ErrMisconfiguredStore, crdt.ErrMisconfiguredStore},
		{&gocql.RequestErrFunctionFailure{}, crdt.ErrMisconfiguredStore, crdt.ErrMisconfiguredStore},
		{invalidRequest("Batch too large"), crdt.ErrTooLarge, crdt.ErrTooLarge},
		{invalidRequest("Rejected an oversized mutation (17000000/16777216) for keyspace: ks. Top keys are: t.k"), crdt.ErrTooLarge, crdt.ErrTooLarge},
		{invalidRequest("unconfigured table counterkit_state"), crdt.ErrMisconfiguredStore, crdt.ErrMisconfiguredStore},
		{gocql.ErrTooManyStmts, crdt.ErrTooLarge, crdt.ErrTooLarge},
		{errors.New("something new"), crdt.ErrAmbiguousWrite, crdt.ErrUnavailable},
	}
	sentinels := []error{crdt.ErrUnavailable, crdt.ErrAmbiguousWrite, crdt.ErrMisconfiguredStore, crdt.ErrTooLarge}
	for _, c := range cases {
		for _, write := range []bool{true, false} {
			want := c.read
			if write {
				want = c.write
			}
			// Also through an extra layer of wrapping, as the driver sometimes does.
			for _, in := range []error{c.err, fmt.Errorf("gocql: %w", c.err)} {
				err := wrapErr("op", write, in)
				require.ErrorIs(t, err, want, "%T write=%v", c.err, write)
				for _, s := range sentinels {
					if s != want {
						require.NotErrorIs(t, err, s, "%T write=%v wraps exactly one sentinel", c.err, write)
					}
				}
				require.ErrorIs(t, err, c.err, "driver error still reachable")
				var e *Error
				require.ErrorAs(t, err, &e)
				require.Equal(t, "op", e.Op)
				require.Contains(t, err.Error(), "op")
			}
		}
	}
	// errors.As reaches the typed driver error with its fields.
	err := wrapErr("ledger put", true, &gocql.RequestErrWriteTimeout{Received: 1, BlockFor: 2, WriteType: "SIMPLE"})
	var wt *gocql.RequestErrWriteTimeout
	require.ErrorAs(t, err, &wt)
	require.Equal(t, 2, wt.BlockFor)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.NoError(t, wrapErr("x", true, nil))
}

func TestExecCanceledContextIsUnavailable(t *testing.T) {
	db, err := newDB(nil, "ks", Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// The context is checked before anything is sent (there is no session
	// here), so the write is known not to have happened.
	err = db.exec(ctx, OpStateSave, "INSERT")
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.ErrorIs(t, err, context.Canceled)
	err = db.batch(ctx, OpTxCommit, []stmt{{cql: "a"}, {cql: "b"}})
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	_, err = db.States().Load(ctx, "k")
	require.ErrorIs(t, err, crdt.ErrUnavailable)
}

func TestSaveStatement(t *testing.T) {
	db, err := newDB(nil, "shop", Options{TablePrefix: "ck_"})
	require.NoError(t, err)
	st := db.States()
	key := `k'); DROP TABLE x; --`
	state := gEnc(t, map[crdt.ActorID]int64{"actor-1": 2})
	s, err := st.saveStmt(key, "actor-1", state)
	require.NoError(t, err)
	require.Equal(t, `INSERT INTO "shop"."ck_state" (key, actor, state) VALUES (?, ?, ?) USING TIMESTAMP ?`, s.cql)
	require.NotContains(t, s.cql, "DROP")
	require.Len(t, s.args, 4)
	require.Equal(t, key, s.args[0])
	require.Equal(t, "actor-1", s.args[1])
	require.Equal(t, state, s.args[2])
	ts1 := s.args[3].(int64)

	s2 := st.rows.saveStmt(key, "actor-1", state, ts1+1000)
	require.Greater(t, s2.args[3].(int64), ts1+1000, "timestamp is above the floor")

	for _, c := range []struct {
		key   string
		actor crdt.ActorID
		state []byte
		want  error
	}{
		{"", "a", state, crdt.ErrInvalidIdentifier},
		{"k", "", state, crdt.ErrInvalidActor},
		{"k", "a\x00", state, crdt.ErrInvalidActor},
		{"k", "a", nil, crdt.ErrCorruptEncoding},
		{"k", "a", []byte{1}, crdt.ErrCorruptEncoding},
		{"k", "a", make([]byte, maxStateBytes+1), crdt.ErrTooLarge},
	} {
		_, err := st.saveStmt(c.key, c.actor, c.state)
		require.ErrorIs(t, err, c.want, "%q %q", c.key, c.actor)
	}
	require.Equal(t, `INSERT INTO "shop"."ck_ledger" (key, actor, value) VALUES (?, ?, ?) USING TIMESTAMP ?`, db.Ledger().rows.insertCQL())
	require.Equal(t, `DELETE FROM "shop"."ck_ledger" USING TIMESTAMP ? WHERE key = ? AND actor = ?`, db.Ledger().rows.deleteCQL())
	require.Equal(t, `SELECT actor, value, WRITETIME(value) FROM "shop"."ck_ledger" WHERE key = ?`, db.Ledger().rows.selectCQL())
}

// TestClockMonotonic drives the clock with a wall clock that jumps back and
// forth and with observed timestamps, against a model: every timestamp is
// above the previous one, above every observed one, and above the floor.
func TestClockMonotonic(t *testing.T) {
	rng := rand.New(rand.NewSource(testSeed(t)))
	wall := time.Unix(1_700_000_000, 0)
	c := clock{now: func() time.Time { return wall }}
	var last, observed int64
	for i := 0; i < testCases(t, 5000); i++ {
		wall = wall.Add(time.Duration(rng.Intn(2000)-1000) * time.Microsecond)
		switch rng.Intn(3) {
		case 0:
			o := wall.UnixMicro() + int64(rng.Intn(5000)-1000)
			c.observe(o)
			if o > observed {
				observed = o
			}
		default:
			floor := int64(0)
			if rng.Intn(2) == 0 {
				floor = wall.UnixMicro() + int64(rng.Intn(3000))
			}
			ts := c.next(floor)
			require.Greater(t, ts, last)
			require.Greater(t, ts, observed)
			require.Greater(t, ts, floor)
			require.GreaterOrEqual(t, ts, wall.UnixMicro())
			last = ts
		}
	}
}

func TestTxCollectsAndBounds(t *testing.T) {
	db, err := newDB(nil, "ks", Options{})
	require.NoError(t, err)
	tx := db.Tx()
	require.NoError(t, tx.Commit(context.Background()), "empty tx sends nothing")
	state := gEnc(t, map[crdt.ActorID]int64{"a": 1})
	require.ErrorIs(t, tx.SaveState("", "a", state), crdt.ErrInvalidIdentifier)
	require.ErrorIs(t, tx.SaveState("k", "a", []byte{1}), crdt.ErrCorruptEncoding, "Check applies in a Tx too")
	require.Equal(t, 0, tx.Len(), "invalid input leaves the tx unchanged")
	for i := 0; i < MaxTxStatements; i++ {
		require.NoError(t, tx.SaveState(fmt.Sprintf("k%d", i), "a", state))
	}
	require.ErrorIs(t, tx.SaveState("k", "a", state), crdt.ErrTooLarge)
	require.Equal(t, MaxTxStatements, tx.Len())
}

func testID(t testing.TB, at time.Time, seq uint16) deltalog.ID {
	t.Helper()
	return deltalog.IDFromParts(at, seq, 0x0102030405)
}

func TestLogStatements(t *testing.T) {
	db, err := newDB(nil, "ks", Options{})
	require.NoError(t, err)
	l := db.Log()
	id := testID(t, time.Unix(1_700_000_000, 0), 7)
	stmts, err := l.insertStmts([]deltalog.Entry{
		{Counter: "c1", Cell: deltalog.Cell{ID: id, Kind: deltalog.KindRegular, Delta: 5}},
		{Counter: "c2", Cell: deltalog.Cell{ID: id, Kind: deltalog.KindRegular, Delta: -3}},
	})
	require.NoError(t, err)
	require.Len(t, stmts, 2)
	require.Equal(t, `INSERT INTO "ks"."counterkit_log" (key, id, kind, cell) VALUES (?, ?, ?, ?) USING TIMESTAMP ?`, stmts[0].cql)
	require.Len(t, stmts[1].args, 5)
	require.Equal(t, stmts[0].args[4].(int64)+1, stmts[1].args[4], "consecutive timestamps in entry order: a later entry for the same cell wins")
	require.Equal(t, "c2", stmts[1].args[0])
	require.Equal(t, gocql.UUID(id), stmts[1].args[1])
	require.Equal(t, int8('r'), stmts[1].args[2])
	var back deltalog.Cell
	require.NoError(t, back.UnmarshalBinary(stmts[1].args[3].([]byte)))
	require.Equal(t, int64(-3), back.Delta)

	// One bad entry refuses the whole insert.
	for _, bad := range []deltalog.Entry{
		{Counter: "", Cell: deltalog.Cell{ID: id, Kind: deltalog.KindRegular, Delta: 1}},
		{Counter: "c", Cell: deltalog.Cell{ID: id, Kind: deltalog.KindRegular, Delta: 0}},
		{Counter: "c", Cell: deltalog.Cell{Kind: deltalog.KindRegular, Delta: 1}},
		{Counter: "c", Cell: deltalog.Cell{ID: id, Kind: 'x', Delta: 1}},
	} {
		_, err := l.insertStmts([]deltalog.Entry{{Counter: "ok", Cell: deltalog.Cell{ID: id, Kind: deltalog.KindRegular, Delta: 1}}, bad})
		require.Error(t, err, "%+v", bad)
	}
	_, err = l.insertStmts(make([]deltalog.Entry, MaxLogEntries+1))
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	// Validation happens before the context or the session is touched.
	require.ErrorIs(t, l.DeleteCovered(context.Background(), "c", deltalog.ID{}), crdt.ErrInvalidTxnID)
	require.ErrorIs(t, l.DeleteCounter(context.Background(), ""), crdt.ErrInvalidIdentifier)
	require.ErrorIs(t, l.Scan(context.Background(), "", func(deltalog.Cell) bool { return true }), crdt.ErrInvalidIdentifier)
}

func TestTallyStatements(t *testing.T) {
	db, err := newDB(nil, "ks", Options{})
	require.NoError(t, err)
	ts := db.Tally()
	s, err := ts.putStmt("k", tally.EncodedShard{Mutator: "m1", Data: []byte{1}}, 42)
	require.NoError(t, err)
	require.Equal(t, `INSERT INTO "ks"."counterkit_tally_shard" (key, mutator, state) VALUES (?, ?, ?) USING TIMESTAMP ?`, s.cql)
	require.Equal(t, []any{"k", "m1", []byte{1}, int64(42)}, s.args)
	for _, c := range []struct {
		key string
		s   tally.EncodedShard
		ts  int64
		err error
	}{
		{"", tally.EncodedShard{Mutator: "m", Data: []byte{1}}, 1, crdt.ErrInvalidIdentifier},
		{"k", tally.EncodedShard{Mutator: "", Data: []byte{1}}, 1, crdt.ErrInvalidActor},
		{"k", tally.EncodedShard{Mutator: "m", Data: nil}, 1, crdt.ErrCorruptEncoding},
		{"k", tally.EncodedShard{Mutator: "m", Data: []byte{1}}, 0, crdt.ErrInvalidConfig},
		{"k", tally.EncodedShard{Mutator: "m", Data: make([]byte, tally.MaxEncodedSize+1)}, 1, crdt.ErrTooLarge},
	} {
		_, err := ts.putStmt(c.key, c.s, c.ts)
		require.ErrorIs(t, err, c.err)
	}
	ctx := context.Background()
	require.ErrorIs(t, ts.ApplyGC(ctx, "k", tally.GCBatch{WriteTS: 0, Tally: []byte{1}}), crdt.ErrInvalidConfig)
	require.ErrorIs(t, ts.ApplyGC(ctx, "k", tally.GCBatch{WriteTS: 1}), crdt.ErrCorruptEncoding)
	require.ErrorIs(t, ts.ApplyGC(ctx, "k", tally.GCBatch{WriteTS: 1, Tally: []byte{1}, Delete: []crdt.ActorID{"ok", ""}}), crdt.ErrInvalidActor)
	_, _, err = ts.Read(ctx, "", true)
	require.ErrorIs(t, err, crdt.ErrInvalidIdentifier)
}

func TestBalanceStatements(t *testing.T) {
	db, err := newDB(nil, "ks", Options{})
	require.NoError(t, err)
	b := db.Balance()
	id := testID(t, time.Unix(1_700_000_000, 0), 1)
	ver := testID(t, time.Unix(1_700_000_100, 0), 2)
	n := balance.Row{UpdateID: id, Kind: balance.KindNormal, Amount: 5}
	stmts, onlyN, err := b.writeStmts([]balance.Mutation{{Account: "a", Row: n}})
	require.NoError(t, err)
	require.True(t, onlyN)
	require.Equal(t, `INSERT INTO "ks"."counterkit_balance" (id, updateid, type, version, row) VALUES (?, ?, ?, ?, ?) USING TIMESTAMP ?`, stmts[0].cql)
	require.Equal(t, "a", stmts[0].args[0])
	require.Equal(t, int8('N'), stmts[0].args[2])
	require.Equal(t, gocql.UUID{}, stmts[0].args[3], "N rows carry the zero version")

	stmts, onlyN, err = b.writeStmts([]balance.Mutation{
		{Account: "a", Row: n},
		{Account: "a", Row: balance.Row{UpdateID: id, Kind: balance.KindTombstone, Version: ver}, Delete: true},
	})
	require.NoError(t, err)
	require.False(t, onlyN, "a delete is a merge write")
	require.Equal(t, `DELETE FROM "ks"."counterkit_balance" USING TIMESTAMP ? WHERE id = ? AND updateid = ? AND type = ? AND version = ?`, stmts[1].cql)
	require.Equal(t, stmts[0].args[5].(int64)+1, stmts[1].args[0], "consecutive timestamps in mutation order")
	// A later Write is stamped above every statement of an earlier one.
	later, _, err := b.writeStmts([]balance.Mutation{{Account: "a", Row: n}})
	require.NoError(t, err)
	require.Greater(t, later[0].args[5].(int64), stmts[1].args[0].(int64))

	for _, bad := range []balance.Mutation{
		{Account: "", Row: n},
		{Account: "a", Row: balance.Row{UpdateID: id, Kind: balance.KindNormal}},
		{Account: "a", Row: balance.Row{Kind: balance.KindNormal, Amount: 1}},
		{Account: "a", Row: balance.Row{UpdateID: id, Kind: 'X'}, Delete: true},
	} {
		_, _, err := b.writeStmts([]balance.Mutation{{Account: "a", Row: n}, bad})
		require.Error(t, err, "%+v", bad)
	}
	tx := db.Tx()
	require.Error(t, tx.WriteBalance(balance.Mutation{Account: "a", Row: balance.Row{UpdateID: id, Kind: balance.KindNormal}}))
	require.Equal(t, 0, tx.Len())
	require.NoError(t, tx.WriteBalance(balance.Mutation{Account: "a", Row: n}))
	require.NoError(t, tx.InsertLog(deltalog.Entry{Counter: "c", Cell: deltalog.Cell{ID: id, Kind: deltalog.KindRegular, Delta: 1}}))
	require.NoError(t, tx.PutShard("k", tally.EncodedShard{Mutator: "m", Data: []byte{1}}, 5))
	require.NoError(t, tx.SaveState("k", "a", gEnc(t, map[crdt.ActorID]int64{"a": 1})))
	require.Equal(t, 4, tx.Len())
}

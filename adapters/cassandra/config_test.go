package cassandra

// Unit tests that need no cluster: identifier validation, statement
// building, error mapping, consistency choice and the write clock. They run
// in CI; the integration suite (integration_test.go) needs CASSANDRA_HOSTS.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
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
	// Cassandra's own keyspaces, refused up front; names around them pass.
	for _, name := range []string{"system", "system_schema", "system_auth", "system_distributed", "system_traces", "system_views", "system_virtual_schema"} {
		err := CheckIdentifier(name)
		require.ErrorIs(t, err, crdt.ErrInvalidIdentifier, "%q", name)
		require.ErrorContains(t, err, "system keyspace", "%q", name)
		_, err = New(&gocql.Session{}, name, Options{})
		require.ErrorIs(t, err, crdt.ErrInvalidIdentifier, "New with keyspace %q", name)
		_, err = CreateKeyspaceStatement(name, 1)
		require.ErrorIs(t, err, crdt.ErrInvalidIdentifier, "CreateKeyspaceStatement(%q)", name)
	}
	for _, name := range []string{"systems", "system_", "my_system", "system_schema2", "systemauth"} {
		require.NoError(t, CheckIdentifier(name), name)
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
		require.Equal(t, model.MatchString(name) && !slices.Contains(systemKeyspaces, name), err == nil, "%q: %v", name, err)
		if err == nil {
			require.Equal(t, 2, strings.Count(quote(name), `"`))
		}
	}
}

func TestCheckKey(t *testing.T) {
	require.Equal(t, crdt.MaxKeyLen, MaxKeyLen)
	require.Same(t, crdt.ErrInvalidKey, ErrInvalidKey)
	require.NoError(t, checkKey("key", "k"))
	require.NoError(t, checkKey("key", `it's "fine"; DROP TABLE x`)) // keys are bound, never formatted
	require.NoError(t, checkKey("key", "naïve/ключ"))
	require.NoError(t, checkKey("key", strings.Repeat("k", MaxKeyLen)))
	bad := []string{"", strings.Repeat("k", MaxKeyLen+1), strings.Repeat("k", 1024), "\xff", "a\x00b", "tab\there", "del\x7f", "c1\u0085"}
	for _, k := range bad {
		err := checkKey("partition key", k)
		require.Contains(t, err.Error(), "partition key")
		require.ErrorIs(t, err, ErrInvalidKey, "%q", k)
		require.ErrorIs(t, err, crdt.ErrInvalidKey, "%q", k)
		require.ErrorIs(t, err, crdt.ErrInvalidIdentifier, "%q", k)
	}
	// The reads check keys with crdt.ValidateKey: the same verdict on
	// every key, valid or not.
	for _, k := range append(bad, "k", "account/42", strings.Repeat("é", MaxKeyLen/2)) {
		require.Equal(t, crdt.ValidateKey("key", k) == nil, checkKey("key", k) == nil, "%q", k)
	}
}

func TestSchemaStatements(t *testing.T) {
	stmts, err := Schema("shop", "")
	require.NoError(t, err)
	require.Equal(t, []string{
		`CREATE TABLE IF NOT EXISTS "shop"."counterkit_siblings" (
	key   text,
	actor text,
	value blob,
	PRIMARY KEY ((key), actor)
)`,
		`CREATE TABLE IF NOT EXISTS "shop"."counterkit_partitions" (
	partition text,
	key       blob,
	value     blob,
	PRIMARY KEY ((partition), key)
)`,
	}, stmts)
	for _, s := range stmts {
		require.NotContains(t, s, "CLUSTERING ORDER", "ascending is Cassandra's default order")
		require.NotContains(t, s, "STATIC")
	}

	stmts, err = Schema("shop", "app_")
	require.NoError(t, err)
	require.Contains(t, stmts[0], `"shop"."app_siblings"`)
	require.Contains(t, stmts[1], `"shop"."app_partitions"`)

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
	_, err = newDB(nil, "ks", Options{ScanPageSize: -1})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	_, err = newDB(nil, "ks", Options{Consistency: map[Op]gocql.Consistency{OpPartitionReadComplete: gocql.Quorum}})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)

	db, err := newDB(nil, "ks", Options{Consistency: map[Op]gocql.Consistency{OpSiblingsFetch: gocql.All, OpSiblingsPut: gocql.One}})
	require.NoError(t, err)
	require.Equal(t, gocql.All, db.Consistency(OpSiblingsFetch))
	require.Equal(t, gocql.One, db.Consistency(OpSiblingsPut))
	require.Equal(t, gocql.Quorum, db.Consistency(OpPartitionApply))
	require.Equal(t, gocql.All, db.Consistency(OpPartitionReadComplete))
	require.Equal(t, "ks", db.Keyspace())
	require.Equal(t, DefaultScanPageSize, db.pageSize)
}

func TestDefaultConsistency(t *testing.T) {
	require.NoError(t, CheckConsistency(nil))
	require.Len(t, sortedOps(), int(opEnd)-1, "every operation has a name")
	for _, op := range sortedOps() {
		want := gocql.Quorum
		if op == OpPartitionReadComplete {
			want = gocql.All
		}
		require.Equal(t, want, DefaultConsistency(op), op.String())
		require.NotContains(t, op.String(), "Op(")
	}
	require.True(t, OpSiblingsPut.isWrite())
	require.True(t, OpPartitionApply.isWrite())
	require.False(t, OpSiblingsFetch.isWrite())
	require.False(t, OpPartitionRead.isWrite())
	require.False(t, OpPartitionReadComplete.isWrite())
}

func TestCheckConsistency(t *testing.T) {
	type levels = map[Op]gocql.Consistency
	good := []levels{
		{OpSiblingsFetch: gocql.LocalQuorum, OpSiblingsPut: gocql.LocalQuorum},
		{OpSiblingsFetch: gocql.All, OpSiblingsPut: gocql.One},
		{OpSiblingsFetch: gocql.One, OpSiblingsPut: gocql.All},
		{OpSiblingsFetch: gocql.EachQuorum, OpSiblingsPut: gocql.Quorum},
		{OpPartitionRead: gocql.LocalQuorum, OpPartitionApply: gocql.EachQuorum},
		{OpPartitionRead: gocql.All, OpPartitionApply: gocql.One},
		{OpPartitionReadComplete: gocql.Any}, // Any means "default"
		{OpPartitionReadComplete: gocql.All},
	}
	for _, l := range good {
		require.NoError(t, CheckConsistency(l), "%v", l)
	}
	bad := []levels{
		{OpPartitionReadComplete: gocql.Quorum},
		{OpPartitionReadComplete: gocql.EachQuorum},
		{OpSiblingsFetch: gocql.One},
		{OpSiblingsPut: gocql.LocalOne},
		{OpSiblingsFetch: gocql.Two},
		{OpSiblingsFetch: gocql.LocalQuorum}, // against the default QUORUM put
		{OpPartitionApply: gocql.One},
		{OpPartitionRead: gocql.One},
		{OpPartitionRead: gocql.LocalOne},
		{OpPartitionRead: gocql.LocalQuorum, OpPartitionApply: gocql.Quorum},
		{OpSiblingsPut: gocql.Serial},
		{OpPartitionRead: gocql.LocalSerial},
		{OpPartitionRead: gocql.Consistency(0x77)},
		{Op(0): gocql.Quorum},
		{opEnd: gocql.Quorum},
	}
	for _, l := range bad {
		require.ErrorIs(t, CheckConsistency(l), crdt.ErrInvalidConfig, "%v", l)
	}
	err := CheckConsistency(levels{OpPartitionRead: gocql.One})
	require.Contains(t, err.Error(), "partition read at ONE does not overlap partition apply at QUORUM")
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
			global := []gocql.Consistency{gocql.Quorum, gocql.EachQuorum}
			local := []gocql.Consistency{gocql.LocalQuorum, gocql.EachQuorum}
			if r == gocql.All || w == gocql.All || (slices.Contains(global, r) && slices.Contains(global, w)) ||
				(slices.Contains(local, r) && slices.Contains(local, w)) {
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
		{invalidRequest("Request is too big: length 17826000 exceeds maximum allowed length 16777216."), crdt.ErrTooLarge, crdt.ErrTooLarge},
		{invalidRequest("unconfigured table counterkit_partitions"), crdt.ErrMisconfiguredStore, crdt.ErrMisconfiguredStore},
		{gocql.ErrTooManyStmts, crdt.ErrTooLarge, crdt.ErrTooLarge},
		{gocql.ErrFrameTooBig, crdt.ErrTooLarge, crdt.ErrTooLarge}, // a frame over 256 MiB: every retry fails alike
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
	err := wrapErr("siblings put", true, &gocql.RequestErrWriteTimeout{Received: 1, BlockFor: 2, WriteType: "SIMPLE"})
	var wt *gocql.RequestErrWriteTimeout
	require.ErrorAs(t, err, &wt)
	require.Equal(t, 2, wt.BlockFor)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.NoError(t, wrapErr("x", true, nil))
}

func TestWriteCanceledContextIsUnavailable(t *testing.T) {
	db := unitDB(t)
	sent := 0
	db.send = func(context.Context, Op, []stmt) error { sent++; return nil }
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// The context is checked before anything is sent, so the write is
	// known not to have happened.
	err := db.write(ctx, OpSiblingsPut, []stmt{{cql: "a"}})
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.ErrorIs(t, err, context.Canceled)
	err = db.write(ctx, OpPartitionApply, []stmt{{cql: "a"}, {cql: "b"}})
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.NoError(t, db.write(context.Background(), OpPartitionApply, nil), "nothing to send")
	require.Zero(t, sent)
	require.NoError(t, db.write(context.Background(), OpPartitionApply, []stmt{{cql: "a"}}))
	require.Equal(t, 1, sent)
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

// isWrite reports whether statements of op can change stored data.
func (o Op) isWrite() bool {
	return o == OpSiblingsPut || o == OpPartitionApply
}

// sortedOps returns every named operation, in order.
func sortedOps() []Op { return slices.Sorted(maps.Keys(opNames)) }

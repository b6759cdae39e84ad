package cassandratest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/cassandra"
	"github.com/counterkit/counterkit/adapters/cassandra/cassandratest"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// clock is a settable clock for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// invalidMessage returns the message of err's InvalidRequest, or fails.
func invalidMessage(t *testing.T, err error) string {
	t.Helper()
	var inv *gocql.RequestErrInvalid
	require.ErrorAs(t, err, &inv)
	return inv.Message()
}

// Protocol v4 and v5 both carry a value above one v5 segment (128 KiB)
// each way.
func TestProtocolVersions(t *testing.T) {
	srv := cassandratest.Start(t, cassandratest.Options{})
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	for _, v := range []int{4, 5} {
		s := session(t, srv, "", func(c *gocql.ClusterConfig) { c.ProtoVersion = v })
		ks := fmt.Sprintf("v%d", v)
		keyspaceWithSchema(t, s, ks, 1)
		db, err := cassandra.New(s, ks, cassandra.Options{})
		require.NoError(t, err)
		ctx := context.Background()
		require.NoError(t, db.Partitions().Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("k"), Value: big, Timestamp: 1}}))
		rows, err := db.Partitions().Snapshot(ctx, "p", 10, store.ReadComplete)
		require.NoError(t, err)
		require.Len(t, rows, 1)
		require.Equal(t, big, rows[0].Value, "protocol v%d", v)
	}
}

// The rows of system_schema.columns for CreateSchema's tables are the
// rows TestShapeOfSchemaColumns (cmd/counterkit/check_test.go) feeds
// shapeOf as Cassandra 4.0's; system_schema.keyspaces, tables and
// system_views.settings answer what `counterkit check cassandra` reads.
func TestSystemSchema(t *testing.T) {
	srv := cassandratest.Start(t, cassandratest.Options{})
	s := session(t, srv, "")
	keyspaceWithSchema(t, s, "ks", 1)
	ctx := context.Background()
	type col struct {
		name, kind string
		position   int
		typ, order string
	}
	want := map[string][]col{
		"counterkit_siblings": {
			{"actor", "clustering", 0, "text", "asc"},
			{"key", "partition_key", 0, "text", "none"},
			{"value", "regular", -1, "blob", "none"},
		},
		"counterkit_partitions": {
			{"key", "clustering", 0, "blob", "asc"},
			{"partition", "partition_key", 0, "text", "none"},
			{"value", "regular", -1, "blob", "none"},
		},
	}
	for table, rows := range want {
		iter := s.Query(`SELECT column_name, kind, position, type, clustering_order FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?`,
			"ks", table).IterContext(ctx)
		var got []col
		var c col
		for iter.Scan(&c.name, &c.kind, &c.position, &c.typ, &c.order) {
			got = append(got, c)
		}
		require.NoError(t, iter.Close())
		require.ElementsMatch(t, rows, got, table)

		var grace, ttl int
		require.NoError(t, s.Query(`SELECT gc_grace_seconds, default_time_to_live FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?`,
			"ks", table).ScanContext(ctx, &grace, &ttl))
		require.Equal(t, []int{864000, 0}, []int{grace, ttl})
	}
	iter := s.Query(`SELECT column_name FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?`, "ks", "other").IterContext(ctx)
	require.Zero(t, iter.NumRows(), "no rows: no table")
	require.NoError(t, iter.Close())

	var replication map[string]string
	require.NoError(t, s.Query(`SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?`, "ks").ScanContext(ctx, &replication))
	require.Equal(t, map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "1"}, replication)
	err := s.Query(`SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?`, "nope").ScanContext(ctx, &replication)
	require.ErrorIs(t, err, gocql.ErrNotFound)

	var sync string
	require.NoError(t, s.Query(`SELECT value FROM system_views.settings WHERE name = 'commitlog_sync'`).ScanContext(ctx, &sync))
	require.Equal(t, "periodic", sync)

	require.NoError(t, s.Query(`DROP KEYSPACE IF EXISTS "ks"`).ExecContext(ctx))
	require.ErrorIs(t, s.Query(`SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?`, "ks").ScanContext(ctx, &replication), gocql.ErrNotFound)
}

// A session with a Keyspace sends USE on connect; an unknown keyspace is
// refused as Cassandra refuses it.
func TestUseKeyspace(t *testing.T) {
	srv := cassandratest.Start(t, cassandratest.Options{})
	s := session(t, srv, "")
	keyspaceWithSchema(t, s, "ks", 1)
	in := session(t, srv, "ks")
	iter := in.Query(`SELECT actor FROM counterkit_siblings WHERE key = ?`, "k").Iter()
	require.NoError(t, iter.Close())

	c := gocql.NewCluster(srv.Addr())
	c.Keyspace = "missing"
	logs := &captured{}
	c.Logger = logs
	_, err := c.CreateSession()
	require.Error(t, err)
	require.Contains(t, logs.String(), "Keyspace 'missing' does not exist")
}

// captured is a gocql logger keeping what it is given.
type captured struct {
	mu sync.Mutex
	b  strings.Builder
}

func (c *captured) log(msg string, fields []gocql.LogField) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintln(&c.b, msg, fields)
}

func (c *captured) String() string { c.mu.Lock(); defer c.mu.Unlock(); return c.b.String() }

func (c *captured) Error(m string, f ...gocql.LogField)   { c.log(m, f) }
func (c *captured) Warning(m string, f ...gocql.LogField) { c.log(m, f) }
func (c *captured) Info(m string, f ...gocql.LogField)    { c.log(m, f) }
func (c *captured) Debug(m string, f ...gocql.LogField)   { c.log(m, f) }

// The counter table of counterkit-compare: two increments, then a read,
// give their sum; an absent key has no row.
func TestCounterTable(t *testing.T) {
	srv := cassandratest.Start(t, cassandratest.Options{})
	s := session(t, srv, "")
	ctx := context.Background()
	stmt, err := cassandra.CreateKeyspaceStatement("ks", 1)
	require.NoError(t, err)
	require.NoError(t, s.Query(stmt).ExecContext(ctx))
	require.NoError(t, s.Query(`CREATE TABLE IF NOT EXISTS "ks"."t" (k text PRIMARY KEY, c counter)`).ExecContext(ctx))
	for _, d := range []int64{5, -2} {
		require.NoError(t, s.Query(`UPDATE "ks"."t" SET c = c + ? WHERE k = ?`, d, "a").Idempotent(false).ExecContext(ctx))
	}
	var c int64
	require.NoError(t, s.Query(`SELECT c FROM "ks"."t" WHERE k = ?`, "a").ScanContext(ctx, &c))
	require.Equal(t, int64(3), c)
	require.ErrorIs(t, s.Query(`SELECT c FROM "ks"."t" WHERE k = ?`, "b").ScanContext(ctx, &c), gocql.ErrNotFound)
	require.Contains(t, invalidMessage(t, s.Query(`INSERT INTO "ks"."t" (k, c) VALUES (?, ?)`, "a", int64(1)).ExecContext(ctx)),
		"INSERT statements are not allowed on counter tables")
}

// Refusals reach the adapter as on the model: the same server messages,
// mapped to the same sentinels.
func TestRefusals(t *testing.T) {
	srv := cassandratest.Start(t, cassandratest.Options{})
	s := session(t, srv, "")
	keyspaceWithSchema(t, s, "ks", 1)
	ctx := context.Background()
	db, err := cassandra.New(s, "ks", cassandra.Options{})
	require.NoError(t, err)

	// A table that does not exist (tables of another prefix).
	other, err := cassandra.New(s, "ks", cassandra.Options{TablePrefix: "other_"})
	require.NoError(t, err)
	_, _, err = other.Siblings().Fetch(ctx, "k")
	require.ErrorIs(t, err, crdt.ErrMisconfiguredStore)
	require.Equal(t, "unconfigured table other_siblings", invalidMessage(t, err))
	err = other.Partitions().Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 1}})
	require.ErrorIs(t, err, crdt.ErrMisconfiguredStore)

	// A batch over 100 partitions of 2 KiB rows: Apply refuses it itself
	// (store.MaxSpanningBatchBytes); sent as one LOGGED batch of the
	// adapter's statements, the server refuses it whole.
	data := make([]byte, 2048)
	var muts []store.Mutation
	b := s.Batch(gocql.LoggedBatch)
	for i := range 100 {
		m := store.Mutation{Partition: fmt.Sprintf("big%d", i), Op: store.OpPut, Key: []byte("k"), Value: data, Timestamp: 100}
		muts = append(muts, m)
		b.Query(`INSERT INTO "ks"."counterkit_partitions" (partition, key, value) VALUES (?, ?, ?) USING TIMESTAMP ?`, m.Partition, m.Key, m.Value, m.Timestamp)
	}
	require.ErrorIs(t, db.Partitions().Apply(ctx, muts), crdt.ErrTooLarge)
	require.Equal(t, "Batch too large", invalidMessage(t, b.ExecContext(ctx)))
	rows, err := db.Partitions().Snapshot(ctx, "big0", 1, store.ReadComplete)
	require.NoError(t, err)
	require.Empty(t, rows, "the refused batch applied nothing")
	// The same rows in one partition are one mutation: accepted.
	for i := range muts {
		muts[i].Partition, muts[i].Key = "one", []byte(fmt.Sprintf("k%03d", i))
	}
	require.NoError(t, db.Partitions().Apply(ctx, muts))

	// Keys Cassandra refuses, past the adapter's own checks.
	require.ErrorIs(t, db.Siblings().Put(ctx, "", "a", []byte("v"), nil), crdt.ErrInvalidKey)
	for _, c := range []struct {
		cql  string
		args []any
		msg  string
	}{
		{`INSERT INTO "ks"."counterkit_siblings" (key, actor, value) VALUES (?, ?, ?) USING TIMESTAMP ?`, []any{"", "a", []byte("v"), int64(1)}, "Key may not be empty"},
		{`INSERT INTO "ks"."counterkit_siblings" (key, actor, value) VALUES (?, ?, ?) USING TIMESTAMP ?`, []any{strings.Repeat("k", 65536), "a", []byte("v"), int64(1)}, "Key length of 65536 is longer than maximum of 65535"},
		{`INSERT INTO "ks"."counterkit_siblings" (key, actor, value) VALUES (?, ?, ?) USING TIMESTAMP ?`, []any{"k\xff", "a", []byte("v"), int64(1)}, "String didn't validate."},
		{`INSERT INTO "ks"."counterkit_siblings" (key, actor, value) VALUES (?, ?, ?) USING TIMESTAMP ?`, []any{"k", nil, []byte("v"), int64(1)}, "Invalid null value in condition for column actor"},
		{`DELETE FROM "ks"."counterkit_partitions" USING TIMESTAMP ? WHERE partition = ?`, []any{int64(1), nil}, "Invalid null value in condition for column partition"},
		{`INSERT INTO "ks"."counterkit_siblings" (key, actor, value) VALUES (?, ?, ?) USING TIMESTAMP ? AND TTL ?`, []any{"k", "a", []byte("v"), int64(1), -1}, "A TTL must be greater or equal to 0, but was -1"},
		{`SELECT actor FROM "ks"."counterkit_siblings" WHERE key = ?`, []any{""}, "Key may not be empty"},
	} {
		err := s.Query(c.cql, c.args...).ExecContext(ctx)
		require.Equal(t, c.msg, invalidMessage(t, err), c.cql)
	}
	rows, err = db.Partitions().Snapshot(ctx, "k", 1, store.ReadComplete)
	require.NoError(t, err)
	require.Empty(t, rows)
	sibs, _, err := db.Siblings().Fetch(ctx, "k")
	require.NoError(t, err)
	require.Empty(t, sibs, "no refused write applied")

	// A level needing more replicas than the one node holds.
	err = s.Query(`SELECT actor FROM "ks"."counterkit_siblings" WHERE key = ?`, "k").Consistency(gocql.Two).ExecContext(ctx)
	var un *gocql.RequestErrUnavailable
	require.ErrorAs(t, err, &un)
	require.Equal(t, []int{2, 1}, []int{un.Required, un.Alive})
	keyspaceWithSchema(t, s, "rf3", 3)
	db3, err := cassandra.New(s, "rf3", cassandra.Options{})
	require.NoError(t, err)
	require.ErrorIs(t, db3.Siblings().Put(ctx, "k", "a", []byte("v"), nil), crdt.ErrUnavailable, "QUORUM of 3 on one node")

	// A partition's mutation above 16 MiB: a write failure, ambiguous.
	big := make([]byte, 8<<20+512<<10)
	b = s.Batch(gocql.LoggedBatch)
	for _, k := range []string{"a", "b"} {
		b.Query(`INSERT INTO "ks"."counterkit_partitions" (partition, key, value) VALUES (?, ?, ?) USING TIMESTAMP ?`, "huge", []byte(k), big, int64(1))
	}
	var wf *gocql.RequestErrWriteFailure
	require.ErrorAs(t, b.ExecContext(ctx), &wf)
}

// An unknown prepared id is answered Unprepared: the driver prepares the
// statement again and the request succeeds.
func TestUnprepared(t *testing.T) {
	srv, db := openDB(t, cassandratest.Options{}, cassandra.Options{})
	ctx := context.Background()
	require.NoError(t, db.Siblings().Put(ctx, "k", "a", []byte("v"), nil))
	before := srv.Stats().Prepares
	srv.ForgetPrepared()
	sibs, _, err := db.Siblings().Fetch(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("v")}, sibs)
	require.Greater(t, srv.Stats().Prepares, before)
}

// Rows written with a TTL are read until the node's clock (Options.Now)
// reaches their expiry second, and not from then on.
func TestTTLExpiry(t *testing.T) {
	clk := &clock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	_, db := openDB(t, cassandratest.Options{Now: clk.Now}, cassandra.Options{Now: clk.Now, SiblingsTTL: 10 * time.Second})
	ctx := context.Background()
	require.NoError(t, db.Siblings().Put(ctx, "k", "a", []byte("v"), nil))
	clk.Add(9*time.Second + 999*time.Millisecond)
	sibs, _, err := db.Siblings().Fetch(ctx, "k")
	require.NoError(t, err)
	require.Len(t, sibs, 1, "live before its expiry second")
	clk.Add(time.Millisecond)
	sibs, _, err = db.Siblings().Fetch(ctx, "k")
	require.NoError(t, err)
	require.Empty(t, sibs, "expired at the write's second plus the TTL")

	// A TTL taking a row past 2038-01-19 is refused.
	late := &clock{t: time.Date(2038, 1, 19, 3, 14, 0, 0, time.UTC)}
	srv2 := cassandratest.Start(t, cassandratest.Options{Now: late.Now})
	s2 := session(t, srv2, "")
	keyspaceWithSchema(t, s2, "ks", 1)
	db2, err := cassandra.New(s2, "ks", cassandra.Options{Now: late.Now, SiblingsTTL: time.Hour})
	require.NoError(t, err)
	err = db2.Siblings().Put(ctx, "k", "a", []byte("v"), nil)
	require.ErrorIs(t, err, crdt.ErrMisconfiguredStore)
	require.Contains(t, invalidMessage(t, err), "exceeds maximum supported expiration date of 2038-01-19T03:14:06+00:00")
}

// Scans cross pages of ScanPageSize rows, with deletes (row, range,
// partition) shadowing what they cover.
func TestPaging(t *testing.T) {
	srv, db := openDB(t, cassandratest.Options{}, cassandra.Options{ScanPageSize: 2})
	p := db.Partitions()
	ctx := context.Background()
	var muts []store.Mutation
	for i := range 9 {
		muts = append(muts, store.Mutation{Partition: "p", Op: store.OpPut, Key: []byte{byte(i)}, Value: []byte{byte(i)}, Timestamp: 10})
	}
	require.NoError(t, p.Apply(ctx, muts))
	require.NoError(t, p.Apply(ctx, []store.Mutation{
		{Partition: "p", Op: store.OpDelete, Key: []byte{1}, Timestamp: 10},
		{Partition: "p", Op: store.OpDeleteRange, Key: []byte{3}, End: []byte{5}, Timestamp: 11},
		{Partition: "p", Op: store.OpDelete, Key: []byte{7}, Timestamp: 9}, // older than the row: no effect
	}))
	reads := srv.Stats().Reads
	var got []byte
	require.NoError(t, p.Scan(ctx, "p", []byte{2}, store.ReadAny, func(r store.Row) bool { got = append(got, r.Key[0]); return true }))
	require.Equal(t, []byte{2, 5, 6, 7, 8}, got)
	require.GreaterOrEqual(t, srv.Stats().Reads-reads, int64(3), "pages of 2 rows")
	rows, err := p.Snapshot(ctx, "p", 3, store.ReadAny)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	require.Nil(t, rows)
	require.NoError(t, p.Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpDeletePartition, Timestamp: 10}}))
	rows, err = p.Snapshot(ctx, "p", 10, store.ReadAny)
	require.NoError(t, err)
	require.Empty(t, rows)
}

// Equal timestamps: the greater value wins, whatever the arrival order;
// a delete at a row's timestamp removes it.
func TestTieRule(t *testing.T) {
	_, db := openDB(t, cassandratest.Options{}, cassandra.Options{})
	p := db.Partitions()
	ctx := context.Background()
	for _, order := range [][]string{{"b", "a"}, {"a", "b"}} {
		part := "tie" + strings.Join(order, "")
		for _, v := range order {
			require.NoError(t, p.Apply(ctx, []store.Mutation{{Partition: part, Op: store.OpPut, Key: []byte("k"), Value: []byte(v), Timestamp: 5}}))
		}
		rows, err := p.Snapshot(ctx, part, 1, store.ReadAny)
		require.NoError(t, err)
		require.Equal(t, []store.Row{{Key: []byte("k"), Value: []byte("b")}}, rows, "written in order %v", order)
		require.NoError(t, p.Apply(ctx, []store.Mutation{{Partition: part, Op: store.OpDelete, Key: []byte("k"), Timestamp: 5}}))
		require.NoError(t, p.Apply(ctx, []store.Mutation{{Partition: part, Op: store.OpPut, Key: []byte("k"), Value: []byte("c"), Timestamp: 5}}))
		rows, err = p.Snapshot(ctx, part, 1, store.ReadAny)
		require.NoError(t, err)
		require.Empty(t, rows, "a delete at t shadows a later write at t")
	}
}

// A write whose client timeout expires while the server waits out
// Options.Latency was applied, and the adapter reports it ambiguous.
func TestLatencyAmbiguousWrite(t *testing.T) {
	const latency = time.Second
	srv, db := openDB(t, cassandratest.Options{Latency: latency}, cassandra.Options{})
	p := db.Partitions()
	ctx := context.Background()
	// Prepared without a deadline first: PREPARE is not delayed, but the
	// first EXECUTE is.
	require.NoError(t, p.Apply(ctx, []store.Mutation{{Partition: "w", Op: store.OpPut, Key: []byte("a"), Value: []byte("1"), Timestamp: 1}}))
	// The timeout must expire after the request reached the server: on a
	// loaded machine the client may not send it inside 50 ms, so a try
	// the server never saw is made again with twice the timeout.
	var err error
	for timeout := 50 * time.Millisecond; ; timeout *= 2 {
		require.Less(t, timeout, latency, "the write never reached the server before the client's timeout")
		sent := srv.Stats().Executes
		short, cancel := context.WithTimeout(ctx, timeout)
		err = p.Apply(short, []store.Mutation{{Partition: "w", Op: store.OpPut, Key: []byte("b"), Value: []byte("2"), Timestamp: 1}})
		cancel()
		if srv.Stats().Executes > sent {
			break
		}
		t.Logf("not sent inside %s: %v", timeout, err)
	}
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	rows, err := p.Snapshot(ctx, "w", 10, store.ReadComplete)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, slices.Collect(func(yield func(string) bool) {
		for _, r := range rows {
			if !yield(string(r.Key)) {
				return
			}
		}
	}), "the write landed")
}

// Statements outside the double's subset are refused with an
// InvalidRequest or a SyntaxError, never a crash or a hang.
func TestUnsupported(t *testing.T) {
	srv := cassandratest.Start(t, cassandratest.Options{})
	s := session(t, srv, "")
	keyspaceWithSchema(t, s, "ks", 1)
	ctx := context.Background()
	for _, q := range []struct {
		cql  string
		args []any
	}{
		{`garbage`, nil},
		{`SELECT * FROM "ks"."counterkit_partitions"`, nil},
		{`SELECT key FROM "ks"."counterkit_partitions" WHERE key = ?`, []any{[]byte("k")}},
		{`SELECT key FROM "ks"."counterkit_partitions" WHERE partition IN (?, ?)`, []any{"a", "b"}},
		{`SELECT nope FROM "ks"."counterkit_partitions" WHERE partition = ?`, []any{"a"}},
		{`SELECT key FROM "ks"."counterkit_partitions" WHERE partition = ? AND value = ?`, []any{"a", []byte("v")}},
		{`SELECT key FROM "ks"."counterkit_partitions" WHERE partition > ?`, []any{"a"}},
		{`SELECT key FROM nokeyspace.t WHERE partition = ?`, []any{"a"}},
		{`SELECT key FROM counterkit_partitions WHERE partition = ?`, []any{"a"}},
		{`SELECT key FROM "ks"."counterkit_partitions" WHERE partition = ? LIMIT 0`, []any{"a"}},
		{`INSERT INTO "ks"."counterkit_partitions" (partition, value) VALUES (?, ?)`, []any{"a", []byte("v")}},
		{`INSERT INTO "ks"."counterkit_partitions" (partition, key, value) VALUES ('a', 'notablob', 0x00)`, nil},
		{`UPDATE "ks"."counterkit_partitions" SET value = value + ? WHERE partition = ? AND key = ?`, []any{[]byte("v"), "a", []byte("k")}},
		{`DELETE value FROM "ks"."counterkit_partitions" WHERE partition = ?`, []any{"a"}},
		{`CREATE TABLE "ks"."x" (a int, b int, c int, PRIMARY KEY ((a, b), c))`, nil},
		{`CREATE TABLE "ks"."x" (a int PRIMARY KEY, m map<text, text>)`, nil},
		{`CREATE TABLE "ks"."x" (a int PRIMARY KEY, c counter, v blob)`, nil},
		{`CREATE TABLE "ks"."x" (a int PRIMARY KEY) WITH gc_grace_seconds = 1`, nil},
		{`CREATE TABLE "ks"."counterkit_partitions" (a int PRIMARY KEY)`, nil},
		{`CREATE KEYSPACE "ks" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, nil},
		{`CREATE KEYSPACE k2 WITH replication = {'class': 'NoSuchStrategy'}`, nil},
		{`DROP TABLE "ks"."nope"`, nil},
		{`TRUNCATE "ks"."counterkit_partitions"`, nil},
	} {
		err := s.Query(q.cql, q.args...).ExecContext(ctx)
		var inv *gocql.RequestErrInvalid
		var syn *gocql.RequestErrSyntax
		var cfg *gocql.RequestErrConfig
		var exists *gocql.RequestErrAlreadyExists
		require.True(t, errors.As(err, &inv) || errors.As(err, &syn) || errors.As(err, &cfg) || errors.As(err, &exists), "%s: %v", q.cql, err)
	}
	// A batch may not read.
	b := s.Batch(gocql.LoggedBatch)
	b.Query(`SELECT key FROM "ks"."counterkit_partitions" WHERE partition = ?`, "a")
	var inv *gocql.RequestErrInvalid
	require.ErrorAs(t, b.ExecContext(ctx), &inv)
}

// Statements outside the adapter's that Cassandra 4.0 refuses, or
// accepts, are refused or accepted alike: a replication map naming a data
// center the node is not in, or none; counter writes at ANY or a serial
// level, in a LOGGED batch or beside other statements (an UNLOGGED batch
// of counters is accepted); DELETE with a TTL (its grammar takes USING
// TIMESTAMP only); and a null TTL, which writes with none.
func TestCassandraRules(t *testing.T) {
	srv := cassandratest.Start(t, cassandratest.Options{})
	s := session(t, srv, "")
	ctx := context.Background()
	config := func(cql, want string) {
		t.Helper()
		var e *gocql.RequestErrConfig
		require.ErrorAs(t, s.Query(cql).ExecContext(ctx), &e, cql)
		require.Contains(t, e.Message(), want, cql)
	}
	config(`CREATE KEYSPACE nts1 WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '1'}`, "Unrecognized strategy option {dc1}")
	config(`CREATE KEYSPACE nts2 WITH replication = {'class': 'NetworkTopologyStrategy'}`, "Configuration for at least one datacenter must be present")
	require.NoError(t, s.Query(`CREATE KEYSPACE nts WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': '1'}`).ExecContext(ctx))

	keyspaceWithSchema(t, s, "ks", 1)
	require.NoError(t, s.Query(`CREATE TABLE "ks"."c" (k text PRIMARY KEY, n counter)`).ExecContext(ctx))
	incr := `UPDATE "ks"."c" SET n = n + 1 WHERE k = ?`
	for cl, want := range map[gocql.Consistency]string{
		gocql.Any:    "Consistency level ANY is not yet supported for counter table c",
		gocql.Serial: "Counter operations are inherently non-serializable",
	} {
		require.Equal(t, want, invalidMessage(t, s.Query(incr, "a").Consistency(cl).ExecContext(ctx)))
	}
	put := `INSERT INTO "ks"."counterkit_siblings" (key, actor, value) VALUES (?, ?, ?)`
	for _, c := range []struct {
		typ  gocql.BatchType
		cql  []string
		want string
	}{
		{gocql.LoggedBatch, []string{incr}, "Cannot include a counter statement in a logged batch"},
		{gocql.UnloggedBatch, []string{incr, put}, "Counter and non-counter mutations cannot exist in the same batch"},
		{gocql.CounterBatch, []string{incr, put}, "Cannot include non-counter statement in a counter batch"},
	} {
		b := s.Batch(c.typ)
		for _, q := range c.cql {
			if q == incr {
				b.Query(q, "b")
			} else {
				b.Query(q, "k", "a", []byte("v"))
			}
		}
		require.Equal(t, c.want, invalidMessage(t, b.ExecContext(ctx)), c.want)
	}
	b := s.Batch(gocql.UnloggedBatch)
	b.Query(incr, "a")
	b.Query(incr, "b")
	require.NoError(t, b.ExecContext(ctx), "an UNLOGGED batch of counters")
	var n int64
	require.NoError(t, s.Query(`SELECT n FROM "ks"."c" WHERE k = ?`, "a").ScanContext(ctx, &n))
	require.Equal(t, int64(1), n, "only the accepted batch counted")

	var syn *gocql.RequestErrSyntax
	require.ErrorAs(t, s.Query(`DELETE FROM "ks"."counterkit_siblings" USING TTL 5 WHERE key = ?`, "k").ExecContext(ctx), &syn)
	require.Contains(t, syn.Message(), "mismatched input 'TTL' expecting K_TIMESTAMP")

	require.NoError(t, s.Query(put+` USING TTL ?`, "k", "a", []byte("v"), nil).ExecContext(ctx), "a null TTL")
	var ttl *int
	require.NoError(t, s.Query(`SELECT TTL(value) FROM "ks"."counterkit_siblings" WHERE key = ?`, "k").ScanContext(ctx, &ttl))
	require.Nil(t, ttl, "written with no TTL")
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/cassandra"
	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
	"github.com/counterkit/counterkit/crdt"
)

func TestCheckEmbedded(t *testing.T) {
	dir := fixture(t)
	code, out, errOut := runCmd(t, "", "check", "embedded", "-store", "embedded:"+dir)
	require.Equal(t, 0, code, errOut)
	golden(t, "check-embedded.txt", normalize(out, dir))

	// Damage one stored value: Verify finds it.
	ctx := context.Background()
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	vals, _, err := db.Siblings().Fetch(ctx, "temp")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	path := filepath.Join(dir, embedded.FileName)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	n := 0
	for i := bytes.Index(data, vals[0]); i >= 0; n++ {
		data[i+len(vals[0])-1] ^= 0xff
		j := bytes.Index(data[i+1:], vals[0])
		if j < 0 {
			break
		}
		i += 1 + j
	}
	require.Positive(t, n)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	// The store refuses a damaged file at Open: check embedded fails,
	// naming the damage and the sentinel, never the internal key bytes.
	code, out, errOut = runCmd(t, "", "check", "embedded", "-store", "embedded:"+dir)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "is damaged")
	require.Contains(t, errOut, "(crdt.ErrCorruptEncoding)")
	for _, s := range []string{out, errOut} {
		require.NotContains(t, s, `\x04temp`)
		require.NotContains(t, s, `\x00`)
	}
	_, err = embedded.Open(dir, embedded.Options{})
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	code, _, errOut = runCmd(t, "", "check", "embedded", "-store", "embedded:"+dir, "-o", "json")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "(crdt.ErrCorruptEncoding)")

	// get reports the damage as corruption, for a key present or not
	// (the damage may hide it), never as not found.
	for _, key := range []string{"temp", "nobody"} {
		code, _, errOut = runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", "pncounter", key)
		require.Equal(t, 1, code, key)
		require.Contains(t, errOut, "(crdt.ErrCorruptEncoding)", key)
		require.NotContains(t, errOut, "ErrNotFound", key)
	}
}

// Riak's symbolic quorums are printed by name.
func TestRiakQuorumNames(t *testing.T) {
	for v, want := range map[uint32]string{4294967294: "one", 4294967293: "quorum", 4294967292: "all", 4294967291: "default", 3: "3", 0: "0"} {
		require.Equal(t, want, riakQuorum(v), v)
	}
}

func TestCheckEmbeddedLocked(t *testing.T) {
	dir := fixture(t)
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	defer db.Close()
	code, out, errOut := runCmd(t, "", "check", "embedded", "-store", "embedded:"+dir)
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "embedded.ErrLocked, crdt.ErrUnavailable")
}

func TestCheckUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check"}, "name the store"},
		{[]string{"check", "mysql"}, `unknown store "mysql"`},
		{[]string{"check", "embedded"}, "-store \"\": missing"},
		{[]string{"check", "embedded", "-data", "/x"}, "unknown flag: --data"},
		{[]string{"check", "embedded", "-store", "riak:h:1/t/b"}, "check embedded takes -store embedded:DIR"},
		{[]string{"check", "cassandra", "-hosts", "h"}, "-hosts and -keyspace"},
		{[]string{"check", "cassandra", "-hosts", "h", "-keyspace", "Bad-Name"}, "crdt.ErrInvalidIdentifier"},
		{[]string{"check", "cassandra", "-hosts", "h", "-keyspace", "k", "-consistency", "fetch=ONE"}, "want OP=LEVEL"},
		{[]string{"check", "cassandra", "-hosts", "h", "-keyspace", "k", "-consistency", "siblings-fetch=MOST"}, "crdt.ErrInvalidConfig"},
		{[]string{"check", "riak", "-addr", "h:1"}, "-addr, -type and -bucket"},
	} {
		code, _, errOut := runCmd(t, "", tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, errOut)
		require.Contains(t, errOut, tc.want, tc.args)
	}
	code, _, errOut := runCmd(t, "", "check", "embedded", "-store", "embedded:"+t.TempDir())
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "crdt.ErrNotFound")
}

// The consistency levels are checked before connecting; an unreachable
// cluster is crdt.ErrUnavailable.
func TestCheckCassandraConsistency(t *testing.T) {
	code, out, errOut := runCmd(t, "", "check", "cassandra", "-hosts", "127.0.0.1:1", "-keyspace", "ks", "-timeout", "1s")
	require.Equal(t, 1, code)
	golden(t, "check-cassandra-unreachable.txt", out)
	require.Contains(t, errOut, "crdt.ErrUnavailable")
	require.NotContains(t, errOut, "ErrInvalidConfig")

	code, out, errOut = runCmd(t, "", "check", "cassandra", "-hosts", "127.0.0.1:1", "-keyspace", "ks", "-timeout", "1s",
		"-consistency", "siblings-fetch=LOCAL_QUORUM,partition-read-complete=quorum")
	require.Equal(t, 1, code)
	require.Regexp(t, `(?m)^consistency siblings-fetch +LOCAL_QUORUM \(-consistency\)$`, out)
	require.Contains(t, out, "FAIL  consistency")
	require.Contains(t, errOut, "crdt.ErrInvalidConfig")
	require.Contains(t, errOut, "crdt.ErrUnavailable")
}

// The table comparison reads cassandra.Schema and reports each difference.
func TestCompareTable(t *testing.T) {
	stmts, err := cassandra.Schema("ks", "p_")
	require.NoError(t, err)
	require.Len(t, stmts, 2)
	sib, err := parseCreateTable(stmts[0])
	require.NoError(t, err)
	require.Equal(t, "(actor text, key text, value blob) PRIMARY KEY ((key), actor asc)", sib.String())
	require.Equal(t, "p_siblings", sib.name)
	parts, err := parseCreateTable(stmts[1])
	require.NoError(t, err)
	require.Equal(t, "(key blob, partition text, value blob) PRIMARY KEY ((partition), key asc)", parts.String())

	require.NoError(t, compareTable(sib, sib))
	require.ErrorIs(t, compareTable(sib, nil), crdt.ErrMisconfiguredStore)
	bad := &tableShape{name: sib.name, columns: map[string]string{"key": "text", "actor": "text", "value": "text", "extra": "int"},
		partition: []string{"key"}, clustering: []string{"actor"}, order: []string{"desc"}}
	err = compareTable(sib, bad)
	require.ErrorIs(t, err, crdt.ErrMisconfiguredStore)
	for _, want := range []string{"column value is text, not blob", "extra column extra", "clustering [actor] [desc]"} {
		require.Contains(t, err.Error(), want)
	}
	_, err = parseCreateTable("DROP TABLE x")
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
}

// What TestCassandraServer reads from a real server, checked here: the
// system_schema.columns rows Cassandra 4.0 keeps for the tables
// cassandra.CreateSchema creates (a regular column at position -1 with
// clustering_order none, types by their CQL names; rows in clustering
// order, by table then column name) match cassandra.Schema, and a table
// made another way does not.
func TestShapeOfSchemaColumns(t *testing.T) {
	stmts, err := cassandra.Schema("ks", "")
	require.NoError(t, err)
	want := map[string][]schemaColumn{
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
	for _, stmt := range stmts {
		shape, err := parseCreateTable(stmt)
		require.NoError(t, err)
		rows, ok := want[shape.name]
		require.True(t, ok, shape.name)
		require.NoError(t, compareTable(shape, shapeOf(shape.name, rows)), shape.name)
		// Rows in another order give the same shape.
		back := slices.Clone(rows)
		slices.Reverse(back)
		require.NoError(t, compareTable(shape, shapeOf(shape.name, back)), shape.name)
	}
	require.Nil(t, shapeOf("counterkit_siblings", nil), "no rows: no table")
	for name, rows := range map[string][]schemaColumn{
		"the clustering column descending": {{"actor", "clustering", 0, "text", "desc"}, {"key", "partition_key", 0, "text", "none"}, {"value", "regular", -1, "blob", "none"}},
		"the value as text":                {{"actor", "clustering", 0, "text", "asc"}, {"key", "partition_key", 0, "text", "none"}, {"value", "regular", -1, "text", "none"}},
		"actor in the partition key":       {{"actor", "partition_key", 1, "text", "none"}, {"key", "partition_key", 0, "text", "none"}, {"value", "regular", -1, "blob", "none"}},
	} {
		shape, err := parseCreateTable(stmts[0])
		require.NoError(t, err)
		require.ErrorIs(t, compareTable(shape, shapeOf(shape.name, rows)), crdt.ErrMisconfiguredStore, name)
	}
}

// A table-level default_time_to_live expires counter state: any value
// but 0 fails the check.
func TestCheckTableTTL(t *testing.T) {
	require.NoError(t, checkTableTTL("counterkit_siblings", 0))
	for _, ttl := range []int{1, 90000, 630720000, -1} {
		err := checkTableTTL("counterkit_siblings", ttl)
		require.ErrorIs(t, err, crdt.ErrMisconfiguredStore, "%d", ttl)
		require.Contains(t, err.Error(), fmt.Sprintf("table counterkit_siblings has default_time_to_live %d", ttl))
	}
}

func TestCheckRiakFake(t *testing.T) {
	srv := riaktest.Start(t)
	require.NoError(t, srv.CreateBucketType("counterkit", riaktest.BucketTypeProps{AllowMult: true}))
	require.NoError(t, srv.CreateBucketType("lww", riaktest.BucketTypeProps{LastWriteWins: true, DisableDVV: true}))
	code, out, errOut := runCmd(t, "", "check", "riak", "-addr", srv.Addr(), "-type", "counterkit", "-bucket", "balances", "-timeout", "2s")
	require.Equal(t, 0, code, errOut)
	golden(t, "check-riak.txt", strings.ReplaceAll(out, srv.Addr(), "ADDR"))

	code, out, errOut = runCmd(t, "", "check", "riak", "-addr", srv.Addr(), "-type", "lww", "-bucket", "b", "-timeout", "2s")
	require.Equal(t, 1, code)
	require.Regexp(t, `(?m)^last_write_wins +true$`, out)
	require.Contains(t, errOut, "crdt.ErrMisconfiguredStore")

	code, out, errOut = runCmd(t, "", "check", "riak", "-addr", "127.0.0.1:1", "-type", "counterkit", "-bucket", "b", "-timeout", "1s")
	require.Equal(t, 1, code)
	require.Contains(t, out, "FAIL  connect to 127.0.0.1:1: ")
	require.Contains(t, errOut, "crdt.ErrUnavailable")

	code, _, errOut = runCmd(t, "", "check", "riak", "-addr", srv.Addr(), "-bucket", "b", "-timeout", "2s")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "crdt.ErrMisconfiguredStore")
	require.True(t, strings.Contains(errOut, "allow_mult=false") || strings.Contains(errOut, "riak.ErrDefaultBucketType"), errOut)
}

// A service that holds the store read-only shares its lock with the
// commands that only read (README.md): get, check and list read, a merge
// fails with embedded.ErrLocked.
func TestEmbeddedReadOnlyHolder(t *testing.T) {
	dir := fixture(t)
	db, err := embedded.Open(dir, embedded.Options{ReadOnly: true})
	require.NoError(t, err)
	defer db.Close()
	emb := "embedded:" + dir
	for _, args := range [][]string{
		{"get", "-store", emb, "-type", "ledger", "acct-1"},
		{"check", "embedded", "-store", emb},
		{"list", "-store", emb},
	} {
		code, _, errOut := runCmd(t, "", args...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
	}
	code, out, errOut := runCmd(t, "", "merge", "balance", "-store", emb, "seller-1")
	require.Equal(t, 1, code, out)
	require.Contains(t, errOut, "embedded.ErrLocked, crdt.ErrUnavailable")
}

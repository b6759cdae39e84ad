package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/cassandra"
	"github.com/counterkit/counterkit/adapters/cassandra/cassandratest"
	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/internal/cli"
)

// These tests run the commands against the servers' test doubles, and
// against real servers when their variables are set, as the adapters' own
// integration suites do:
//
//	CASSANDRA_HOSTS=127.0.0.1 go test -race -run Server ./...
//	RIAK_ADDR=127.0.0.1:8087 RIAK_BUCKET_TYPE=counterkit go test -race -run Server ./...
//
// Each writes the fixture's keys into a fresh keyspace or bucket and checks
// that every command prints there what it prints on the embedded store.

func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// sameAsEmbedded checks that get prints for spec what it prints for the
// embedded fixture dir, but for the store line.
func sameAsEmbedded(t *testing.T, spec, dir, typ, key string) {
	t.Helper()
	for _, format := range []string{"json", "table"} {
		code, got, errOut := runCmd(t, "", "get", "-store", spec, "-type", typ, "-o", format, key)
		require.Equal(t, 0, code, errOut)
		_, want, _ := runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", typ, "-o", format, key)
		require.Equal(t, strings.Replace(want, "embedded:"+dir, spec, 1), got, "%s %s", typ, format)
	}
}

// TestCassandraServer: the commands on a Cassandra keyspace print what
// they print on the embedded store; check cassandra reports the keyspace
// and tables, and refuses other tables and a missing keyspace.
func TestCassandraServer(t *testing.T) { cassandratest.Each(t, cassandraServer) }

func cassandraServer(t *testing.T, hosts string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sess, err := cassandraSession(cli.SplitList(hosts), "", 20*time.Second)
	require.NoError(t, err)
	defer sess.Close()
	ks := randomName("counterkit_cli_")
	stmt, err := cassandra.CreateKeyspaceStatement(ks, 1)
	require.NoError(t, err)
	require.NoError(t, sess.Query(stmt).ExecContext(ctx))
	t.Cleanup(func() { _ = sess.Query(`DROP KEYSPACE IF EXISTS "` + ks + `"`).Exec() })
	require.NoError(t, cassandra.CreateSchema(ctx, sess, ks))
	db, err := cassandra.New(sess, ks, cassandra.Options{})
	require.NoError(t, err)
	populate(t, db.Siblings(), db.Partitions())
	spec := "cassandra:" + hosts + "/" + ks
	dir := fixture(t)

	for _, k := range []struct{ typ, key string }{
		{"ledger", "acct-1"}, {"gcounter", "views"}, {"pncounter", "temp"},
		{"tally", "pageviews"}, {"deltalog", "dl-1"}, {"balance", "seller-1"},
	} {
		sameAsEmbedded(t, spec, dir, k.typ, k.key)
	}
	code, _, errOut := runCmd(t, "", "get", "-store", spec, "-type", "ledger", "bad")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "crdt.ErrCorruptEncoding")

	code, out, errOut := runCmd(t, "", "check", "cassandra", "-hosts", hosts, "-keyspace", ks)
	require.Equal(t, 0, code, out+errOut)
	require.Regexp(t, `(?m)^keyspace `+ks+` replication +class=org.apache.cassandra.locator.SimpleStrategy, replication_factor=1$`, out)
	require.Contains(t, out, "ok    table counterkit_siblings matches cassandra.Schema")
	require.Contains(t, out, "ok    table counterkit_partitions matches cassandra.Schema")
	code, out, errOut = runCmd(t, "", "check", "cassandra", "-hosts", hosts, "-keyspace", ks, "-prefix", "other_")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "FAIL  table other_siblings")
	require.Contains(t, errOut, "crdt.ErrMisconfiguredStore")
	code, out, errOut = runCmd(t, "", "check", "cassandra", "-hosts", hosts, "-keyspace", "no_such_keyspace_here")
	require.Equal(t, 1, code, out)
	require.Contains(t, errOut, "does not exist")

	// The jobs print on Cassandra what they print on the embedded store.
	want, err := os.ReadFile("testdata/jobs.txt")
	require.NoError(t, err)
	require.Equal(t, string(want), strings.ReplaceAll(jobsTranscript(t, spec, ""), spec, "embedded:DIR"))
}

// TestRiakServer: the commands on a Riak bucket print what they print on
// the embedded store, in the bucket type the docker-compose file creates
// and in Riak's default type (refused: no dotted version vectors).
func TestRiakServer(t *testing.T) { eachRiak(t, riakServer) }

func riakServer(t *testing.T, addr, typ string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := riak.NewCluster(ctx, 10*time.Second, cli.SplitList(addr)...)
	require.NoError(t, err)
	defer cl.Stop()
	bucket := randomName("counterkit-cli-")
	if typ == "" {
		// Riak's default type: allow_mult must be set on the bucket.
		require.NoError(t, riak.ConfigureBucket(ctx, cl, "", bucket))
	}
	sib, err := riak.NewSiblings(ctx, cl, riak.Options{BucketType: typ, Bucket: bucket, AllowDefaultBucketType: typ == ""})
	require.NoError(t, err)
	populate(t, sib, nil)
	bt := typ
	if bt == "" {
		bt = "default"
	}
	spec := "riak:" + addr + "/" + bt + "/" + bucket
	dir := fixture(t)
	for _, k := range []struct{ typ, key string }{{"ledger", "acct-1"}, {"gcounter", "views"}, {"pncounter", "temp"}} {
		sameAsEmbedded(t, spec, dir, k.typ, k.key)
	}
	code, out, errOut := runCmd(t, "", "check", "riak", "-addr", addr, "-type", typ, "-bucket", bucket)
	require.Regexp(t, `(?m)^allow_mult +true$`, out)
	require.Regexp(t, `(?m)^r +(quorum|default|one|all|\d)`, out)
	code2, out2, errOut2 := runCmd(t, "", "find", "ledger", "-store", spec, "acct-1")
	if typ == "" {
		t.Log("RIAK_BUCKET_TYPE is not set: the default bucket type is checked as refused (no dotted version vectors)")
		require.Equal(t, 1, code, out)
		require.Contains(t, errOut, "riak.ErrDefaultBucketType")
		require.Equal(t, 1, code2, out2)
		require.Contains(t, errOut2, "riak.ErrDefaultBucketType")
		return
	}
	require.Equal(t, 0, code, out+errOut)
	require.Equal(t, 0, code2, errOut2)
	require.Equal(t, "acct-1: collapsed 2 siblings (value 26, 2 actors, 3 transactions in history, 0 folded)\n", out2)
	require.Equal(t, "value 26, siblings 1", value(t, spec, "ledger", "acct-1"))
}

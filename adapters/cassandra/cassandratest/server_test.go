package cassandratest_test

import (
	"context"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/cassandra"
	"github.com/counterkit/counterkit/adapters/cassandra/cassandratest"
)

// session connects a gocql session to srv (keyspace: none when "").
func session(t testing.TB, srv *cassandratest.Server, keyspace string, configure ...func(*gocql.ClusterConfig)) *gocql.Session {
	t.Helper()
	c := gocql.NewCluster(srv.Addr())
	c.Keyspace = keyspace
	c.Consistency = gocql.Quorum
	// A minute: under -race on a loaded machine, writing a test's 17 or 18
	// MiB batch to the double took more than 10 s (the driver's write
	// timeout is Timeout). Tests of timeouts set their own deadlines.
	c.Timeout, c.ConnectTimeout = time.Minute, 10*time.Second
	c.WriteCoalesceWaitTime = 0
	for _, f := range configure {
		f(c)
	}
	s, err := c.CreateSession()
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// keyspaceWithSchema creates keyspace ks at replication factor rf and the
// adapter's tables in it.
func keyspaceWithSchema(t testing.TB, s *gocql.Session, ks string, rf int) {
	t.Helper()
	ctx := context.Background()
	stmt, err := cassandra.CreateKeyspaceStatement(ks, rf)
	require.NoError(t, err)
	require.NoError(t, s.Query(stmt).ExecContext(ctx))
	require.NoError(t, cassandra.CreateSchema(ctx, s, ks))
}

// openDB starts a Server with srvOpts, connects to it, creates keyspace
// "ks" (RF 1) with the adapter's schema, and returns a DB on it with
// dbOpts.
func openDB(t testing.TB, srvOpts cassandratest.Options, dbOpts cassandra.Options) (*cassandratest.Server, *cassandra.DB) {
	t.Helper()
	srv := cassandratest.Start(t, srvOpts)
	s := session(t, srv, "")
	keyspaceWithSchema(t, s, "ks", 1)
	db, err := cassandra.New(s, "ks", dbOpts)
	require.NoError(t, err)
	return srv, db
}

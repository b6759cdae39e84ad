// Package cassandrarun runs bounded.Account's conformance suite over the
// Cassandra adapter, on the cluster named by CASSANDRA_HOSTS (comma
// separated), in a keyspace it creates and drops. Without CASSANDRA_HOSTS
// it skips. Run it from this directory: go test ./...
package cassandrarun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/counterkit/counterkit/adapters/cassandra"
	"github.com/counterkit/counterkit/bounded/boundedtest"
	"github.com/counterkit/counterkit/store"
)

func TestBehavioursOnCassandra(t *testing.T) {
	hosts := os.Getenv("CASSANDRA_HOSTS")
	if hosts == "" {
		t.Skip("CASSANDRA_HOSTS is not set: this run needs a real Cassandra 4.0+")
	}
	ctx := context.Background()
	cluster := gocql.NewCluster(strings.Split(hosts, ",")...)
	cluster.Consistency = gocql.Quorum
	session, err := cluster.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(session.Close)
	var b [4]byte
	_, _ = rand.Read(b[:])
	keyspace := "counterkit_bounded_" + hex.EncodeToString(b[:])
	create, err := cassandra.CreateKeyspaceStatement(keyspace, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := session.Query(create).ExecContext(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = session.Query(`DROP KEYSPACE IF EXISTS "` + keyspace + `"`).ExecContext(ctx) })
	if err := cassandra.CreateSchema(ctx, session, keyspace); err != nil {
		t.Fatal(err)
	}
	db, err := cassandra.New(session, keyspace, cassandra.Options{})
	if err != nil {
		t.Fatal(err)
	}
	boundedtest.Run(t, func(t *testing.T) store.Siblings { return db.Siblings() })
}

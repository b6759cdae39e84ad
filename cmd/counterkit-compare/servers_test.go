package main

import (
	"os"
	"testing"

	"github.com/counterkit/counterkit/adapters/cassandra/cassandratest"
)

// eachCassandra runs body against the Cassandra test double, so that CI
// checks every expectation body makes, and, when CASSANDRA_HOSTS is set,
// against that cluster.
func eachCassandra(t *testing.T, body func(t *testing.T, hosts string)) {
	t.Run("double", func(t *testing.T) {
		body(t, cassandratest.Start(t, cassandratest.Options{}).Addr())
	})
	t.Run("cassandra", func(t *testing.T) {
		hosts := os.Getenv("CASSANDRA_HOSTS")
		if hosts == "" {
			t.Skip("CASSANDRA_HOSTS is not set: compare against a real Cassandra needs a server (docker compose -f adapters/cassandra/docker-compose.yml up -d; CASSANDRA_HOSTS=127.0.0.1)")
		}
		body(t, hosts)
	})
}

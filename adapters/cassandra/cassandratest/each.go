package cassandratest

import (
	"os"
	"testing"
)

// Each runs body as the subtest "double", against a Server it starts,
// so that CI checks every expectation body makes; and as the subtest
// "cassandra", against the cluster that the environment variable
// CASSANDRA_HOSTS names, skipped with the way to start one when it is
// unset. A test that reaches a real Cassandra through Each has its twin
// by construction.
func Each(t *testing.T, body func(t *testing.T, hosts string)) {
	t.Run("double", func(t *testing.T) {
		body(t, Start(t, Options{}).Addr())
	})
	t.Run("cassandra", func(t *testing.T) {
		hosts := os.Getenv("CASSANDRA_HOSTS")
		if hosts == "" {
			t.Skip("CASSANDRA_HOSTS is not set: this test needs a Cassandra server too (docker compose -f adapters/cassandra/docker-compose.yml up -d; CASSANDRA_HOSTS=127.0.0.1)")
		}
		body(t, hosts)
	})
}

package main

// A test that only runs against a real server is not run by CI, so its
// expectations can drift from the code unseen. This file checks, from the
// package's test sources, that every test reaching a real Riak or
// Cassandra (a test naming RIAK_ADDR or CASSANDRA_HOSTS, or calling what
// does) does so through eachRiak or cassandratest.Each, which run the same body
// on the servers' test doubles in CI.

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/internal/twincheck"
)

var serverTwins = []twincheck.Rules{
	{Env: "RIAK_ADDR", Gates: []string{"eachRiak"}, Prefixes: []string{"TestRiakServer"}, Twin: "Riak double"},
	{Env: "CASSANDRA_HOSTS", Gates: []string{"Each"}, Prefixes: []string{"TestCassandraServer"}, Twin: "Cassandra double"},
}

// TestServerTestsHaveDoubleTwins: every test that can reach a real server
// runs its body through a gate that also runs it on the server's double.
func TestServerTestsHaveDoubleTwins(t *testing.T) {
	for _, r := range serverTwins {
		problems, gated := twincheck.Check(t, ".", r)
		require.Empty(t, problems, r.Env)
		t.Logf("%s: %s", r.Env, strings.Join(gated, " "))
		require.NotEmpty(t, gated, "%s: the server tests are still found", r.Env)
	}
}

// TestTwinCheckCatchesUntwinnedServerTests: a test that reads a server's
// variable itself, or through a helper, is named.
func TestTwinCheckCatchesUntwinnedServerTests(t *testing.T) {
	src := `package main
func TestRiakServerAlone(t *testing.T) { addr := os.Getenv("RIAK_ADDR"); _ = addr }
func cassandraHostsFromEnv() string { return os.Getenv("CASSANDRA_HOSTS") }
func TestCassandraServerHelper(t *testing.T) { _ = cassandraHostsFromEnv() }`
	var all []string
	for _, r := range serverTwins {
		problems, _ := twincheck.Check(t, ".", r, src)
		all = append(all, problems...)
	}
	require.ElementsMatch(t, []string{
		"reaches the server without running on the Riak double: TestRiakServerAlone → \"RIAK_ADDR\"",
		"TestRiakServerAlone runs no body through eachRiak",
		"reaches the server without running on the Cassandra double: TestCassandraServerHelper → cassandraHostsFromEnv → \"CASSANDRA_HOSTS\"",
		"TestCassandraServerHelper runs no body through Each",
	}, all)
}

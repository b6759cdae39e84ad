package main

// A test that only runs against a real server is not run by CI, so its
// expectations can drift from the code unseen (TestCompareCassandraServer
// once asked for a row per type while compare had left balance out by
// default). This file checks, from the package's test sources, that every
// test reaching a real Cassandra (naming CASSANDRA_HOSTS, or calling what
// does) does so through cassandratest.Each, which runs the same body on the
// Cassandra test double in CI.

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/internal/twincheck"
)

var cassandraTwins = twincheck.Rules{Env: "CASSANDRA_HOSTS", Gates: []string{"Each"}, Prefixes: []string{"TestCompareCassandra"}, Twin: "Cassandra double"}

// TestServerTestsHaveDoubleTwins: the server tests run their bodies on the
// double too, and a test that reads CASSANDRA_HOSTS itself is named.
func TestServerTestsHaveDoubleTwins(t *testing.T) {
	problems, gated := twincheck.Check(t, ".", cassandraTwins)
	require.Empty(t, problems)
	require.Equal(t, []string{"TestCompareCassandraServer"}, gated)

	problems, _ = twincheck.Check(t, ".", cassandraTwins, `package main
func TestCompareCassandraAlone(t *testing.T) { _ = os.Getenv("CASSANDRA_HOSTS") }`)
	require.ElementsMatch(t, []string{
		"reaches the server without running on the Cassandra double: TestCompareCassandraAlone → \"CASSANDRA_HOSTS\"",
		"TestCompareCassandraAlone runs no body through Each",
	}, problems)
}

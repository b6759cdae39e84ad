package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/cassandra/cassandratest"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
)

// eachRiak runs body against the Riak test double, with the bucket type
// the docker-compose file creates ("counterkit") and with Riak's default
// type (""), so that CI checks every expectation body makes; and, when
// RIAK_ADDR is set, against that Riak with the bucket type
// RIAK_BUCKET_TYPE.
func eachRiak(t *testing.T, body func(t *testing.T, addr, typ string)) {
	for _, typ := range []string{"counterkit", ""} {
		t.Run("double/type="+typ, func(t *testing.T) {
			srv := riaktest.Start(t)
			require.NoError(t, srv.CreateBucketType("counterkit", riaktest.BucketTypeProps{AllowMult: true}))
			body(t, srv.Addr(), typ)
		})
	}
	t.Run("riak", func(t *testing.T) {
		addr := os.Getenv("RIAK_ADDR")
		if addr == "" {
			t.Skip("RIAK_ADDR is not set: the Riak end-to-end tests need a server (docker compose -f adapters/riak/docker-compose.yml up -d; RIAK_ADDR=127.0.0.1:8087 RIAK_BUCKET_TYPE=counterkit)")
		}
		body(t, addr, os.Getenv("RIAK_BUCKET_TYPE"))
	})
}

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
			t.Skip("CASSANDRA_HOSTS is not set: the Cassandra end-to-end tests need a server (docker compose -f adapters/cassandra/docker-compose.yml up -d; CASSANDRA_HOSTS=127.0.0.1)")
		}
		body(t, hosts)
	})
}

package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

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
		typ := os.Getenv("RIAK_BUCKET_TYPE")
		if typ == "default" { // Riak's default type, named: as unset, as the adapter's tests take it
			typ = ""
		}
		body(t, addr, typ)
	})
}

package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak/riaktest"
)

// TestRiakServerOnTheDouble runs TestRiakServer, which otherwise needs a
// real Riak (RIAK_ADDR), against the Riak test double posing as one, with
// the bucket type the docker-compose file creates and without one (Riak's
// default type), so that CI checks every expectation it makes. It skips
// when RIAK_ADDR is set: the real run covers it then.
func TestRiakServerOnTheDouble(t *testing.T) {
	if addr := os.Getenv("RIAK_ADDR"); addr != "" {
		t.Skipf("RIAK_ADDR=%s is set: TestRiakServer runs against that Riak", addr)
	}
	for _, typ := range []string{"counterkit", ""} {
		t.Run("type="+typ, func(t *testing.T) {
			srv := riaktest.Start(t)
			require.NoError(t, srv.CreateBucketType("counterkit", riaktest.BucketTypeProps{AllowMult: true}))
			t.Setenv("RIAK_ADDR", srv.Addr())
			t.Setenv("RIAK_BUCKET_TYPE", typ)
			TestRiakServer(t)
		})
	}
}

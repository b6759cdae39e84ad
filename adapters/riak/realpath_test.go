package riak_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak/riaktest"
)

// TestRealRiakPathOnTheDouble runs the tests' real-Riak setup (RIAK_ADDR,
// RIAK_BUCKET_TYPE: realTarget, a bucket per kit check, the skips) against
// the test double posing as a real Riak, with and without a bucket type,
// so that CI covers the path the integration run takes. It skips when
// RIAK_ADDR is set: the real run covers it then.
func TestRealRiakPathOnTheDouble(t *testing.T) {
	if addr := os.Getenv(EnvRiakAddr); addr != "" {
		t.Skipf("%s=%s is set: the suites run against that Riak", EnvRiakAddr, addr)
	}
	for _, typ := range []string{fakeType, ""} {
		t.Run("type="+typ, func(t *testing.T) {
			srv := riaktest.Start(t)
			require.NoError(t, srv.CreateBucketType(fakeType, riaktest.BucketTypeProps{AllowMult: true}))
			t.Setenv(EnvRiakAddr, srv.Addr())
			t.Setenv(EnvRiakBucketType, typ)
			t.Run("conformance", TestConformance)
			t.Run("contended", TestBackendContendedWrite)
		})
	}
}

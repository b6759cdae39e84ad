package riak_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak/riaktest"
)

// realPathOnly is set while a TestRealRiakPath test runs other tests
// with RIAK_ADDR naming a double: their double subtests ("fake",
// "fake-default-type", "fake-via-proxy") then skip, as each test runs
// them itself at top level, and only their real-Riak subtests run.
var realPathOnly bool

// onlyRealPath sets realPathOnly until t ends.
func onlyRealPath(t *testing.T) {
	realPathOnly = true
	t.Cleanup(func() { realPathOnly = false })
}

// skipDoubleInRealPath skips t, a double subtest, under a TestRealRiakPath
// test (realPathOnly).
func skipDoubleInRealPath(t *testing.T) {
	t.Helper()
	if realPathOnly {
		t.Skip("the double's subtest, which the test runs at top level: here only the real-Riak path runs")
	}
}

// TestRealRiakPathOnTheDouble runs the tests' real-Riak setup (RIAK_ADDR,
// RIAK_BUCKET_TYPE: realTarget, a bucket per kit check, the skips) against
// the test double posing as a real Riak, with and without a bucket type,
// so that CI covers the path the integration run takes. Only the real-Riak
// subtests run: the double ones are TestConformance's and
// TestBackendContendedWrite's own (realPathOnly). It skips when RIAK_ADDR
// is set: the real run covers it then.
func TestRealRiakPathOnTheDouble(t *testing.T) {
	if addr := os.Getenv(EnvRiakAddr); addr != "" {
		t.Skipf("%s=%s is set: the suites run against that Riak", EnvRiakAddr, addr)
	}
	onlyRealPath(t)
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

// realPathBackendTests are the backend tests whose bodies
// TestRealRiakPathOnSharedDouble runs through realTarget.
var realPathBackendTests = []struct {
	name string
	fn   func(*testing.T)
}{
	{"SiblingsCollapse", TestBackendSiblingsCollapse},
	{"ContendedWrite", TestBackendContendedWrite},
	{"DeleteKeepsRacingWrite", TestBackendDeleteKeepsRacingWrite},
	{"LastWriteWinsRefusedWithDVV", TestBackendLastWriteWinsRefusedWithDVV},
	{"CheckBucket", TestBackendCheckBucket},
	{"Refusals", TestBackendRefusals},
	{"PutAfterDeleteReplacesTombstone", TestBackendPutAfterDeleteReplacesTombstone},
	{"MaxSiblings", TestBackendMaxSiblings},
	{"QuorumAboveNVal", TestBackendQuorumAboveNVal},
	{"ObjectTooLarge", TestBackendObjectTooLarge},
}

// TestRealRiakPathOnSharedDouble runs the backend tests' real-Riak
// subtests (realTarget: the cluster NewCluster makes for RIAK_ADDR, the
// bucket ConfigureBucket sets up, no test double at hand) against one
// double posing as a real Riak, with and without a bucket type, twice: an
// integration server keeps what every earlier test and run left in it
// (bucket properties, siblings, tombstones), which a fresh double per test
// never shows. The concurrency test's real path (its faults injected by a
// faultProxy) runs once, in both types. Only the real-Riak subtests run:
// the double ones are the tests' own (realPathOnly). It skips when
// RIAK_ADDR is set: the real run covers it then.
func TestRealRiakPathOnSharedDouble(t *testing.T) {
	if addr := os.Getenv(EnvRiakAddr); addr != "" {
		t.Skipf("%s=%s is set: the tests run against that Riak", EnvRiakAddr, addr)
	}
	onlyRealPath(t)
	for _, typ := range []string{fakeType, ""} {
		t.Run("type="+typ, func(t *testing.T) {
			srv := riaktest.Start(t)
			require.NoError(t, srv.CreateBucketType(fakeType, riaktest.BucketTypeProps{AllowMult: true}))
			t.Setenv(EnvRiakAddr, srv.Addr())
			t.Setenv(EnvRiakBucketType, typ)
			for _, run := range []string{"first", "second"} {
				for _, bt := range realPathBackendTests {
					t.Run(run+"/"+bt.name, bt.fn)
				}
			}
			t.Run("ConcurrentLedger", func(t *testing.T) {
				skipClientRaceOnTheDouble(t)
				TestConcurrentLedger(t)
			})
		})
	}
}

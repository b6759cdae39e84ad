package riak_test

import (
	"context"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
)

// EnvRiakAddr names the variable holding the host:port of a real Riak's
// protocol-buffers listener. Tests that need a real server skip without it.
const EnvRiakAddr = "RIAK_ADDR"

// EnvRiakBucketType names the variable holding the bucket type the real-Riak
// tests use: one created and activated with `riak admin bucket-type create
// NAME '{"props":{"allow_mult":true}}'` (docker-compose.yml creates
// "counterkit"). Unset, the tests use Riak's "default" type, which has no
// dotted version vectors: they still run, but skip the assertions that
// hold only with them.
const EnvRiakBucketType = "RIAK_BUCKET_TYPE"

// testBucket is the bucket every test uses; keys are unique per test.
const testBucket = "counterkit-test"

// fakeType is the bucket type the test double's tests use, created like a
// production type (allow_mult=true, and dotted version vectors as every
// created type).
const fakeType = "counterkit"

// requestTimeout is the per-request read timeout of test clusters: what an
// injected dropped response costs, and long enough that a loaded CI machine
// does not time out ordinary requests.
const requestTimeout = time.Second

// fakeCluster starts a FakeServer with the bucket type fakeType and returns
// it with a started cluster.
func fakeCluster(t testing.TB, opts ...riaktest.Options) (*riaktest.FakeServer, *riakc.Cluster) {
	t.Helper()
	srv := riaktest.Start(t, opts...)
	require.NoError(t, srv.CreateBucketType(fakeType, riaktest.BucketTypeProps{AllowMult: true}))
	cl := newCluster(t, srv.Addr())
	srv.ResetRequests()
	return srv, cl
}

// fakeDefaultTypeCluster starts a FakeServer, configures testBucket in its
// "default" bucket type (allow_mult=true, no dotted version vectors, as in
// Riak) and returns both with a started cluster.
func fakeDefaultTypeCluster(t testing.TB, opts ...riaktest.Options) (*riaktest.FakeServer, *riakc.Cluster) {
	t.Helper()
	srv := riaktest.Start(t, opts...)
	cl := newCluster(t, srv.Addr())
	require.NoError(t, riak.ConfigureBucket(context.Background(), cl, "", testBucket))
	srv.ResetRequests()
	return srv, cl
}

// defaultTypeOptions are the Options for testBucket in the "default" type.
var defaultTypeOptions = riak.Options{BucketType: "default", Bucket: testBucket, AllowDefaultBucketType: true}

func newCluster(t testing.TB, addr string) *riakc.Cluster {
	t.Helper()
	return newClusterTimeout(t, addr, requestTimeout)
}

func newClusterTimeout(t testing.TB, addr string, requestTimeout time.Duration) *riakc.Cluster {
	t.Helper()
	cl, err := riak.NewCluster(ctx, requestTimeout, addr)
	require.NoError(t, err)
	t.Cleanup(func() { stopCluster(cl) })
	return cl
}

// stopCluster stops cl once a ping has gone through (30 seconds at most). A
// request that failed on a closed connection leaves the driver checking the
// node's health in a goroutine, and riak-go-client v1.7.0's Stop races with
// it (Node.stop's state writes against an unlocked read in
// ensureHealthCheckCanContinue); a ping succeeds only once that check has
// ended, setting the node running under its lock.
func stopCluster(cl *riakc.Cluster) {
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cl.Execute(&riakc.PingCommand{}) == nil {
			break
		}
	}
	_ = cl.Stop()
}

// realTarget returns a cluster for RIAK_ADDR and the options of testBucket
// in the bucket type RIAK_BUCKET_TYPE ("default" if unset), or skips
// without RIAK_ADDR.
func realTarget(t testing.TB) target {
	t.Helper()
	addr := os.Getenv(EnvRiakAddr)
	if addr == "" {
		t.Skipf("%s is not set: no real Riak to test against (the FakeServer tests cover the adapter in CI)", EnvRiakAddr)
	}
	// NewCluster dials and pings with timeouts, so a wrong address fails
	// here at once instead of hanging the first command.
	cl, err := riak.NewCluster(ctx, 5*time.Second, addr)
	if err != nil {
		t.Fatalf("%s=%s: no Riak answered: %v", EnvRiakAddr, addr, err)
	}
	t.Cleanup(func() { stopCluster(cl) })
	tg := target{cl: cl, opts: riak.Options{BucketType: os.Getenv(EnvRiakBucketType), Bucket: testBucket}, dvv: true, addr: addr}
	if tg.opts.BucketType == "" || tg.opts.BucketType == "default" {
		tg.opts = defaultTypeOptions
		tg.dvv = false
		t.Logf("%s=%q: testing Riak's default bucket type, which has no dotted version vectors (dvv_enabled=false): "+
			"sibling-collapse assertions are not meaningful there and are skipped. Set %s to a type created with "+
			"`riak admin bucket-type create NAME '{\"props\":{\"allow_mult\":true}}'` (README.md) to run them.",
			EnvRiakBucketType, os.Getenv(EnvRiakBucketType), EnvRiakBucketType)
	}
	// Harmless on a created type (allow_mult=true already); needed on the
	// default type.
	require.NoError(t, riak.ConfigureBucket(context.Background(), cl, tg.opts.BucketType, testBucket))
	return tg
}

// newStore returns a riak.Siblings for opts, with testBucket in fakeType for what
// opts leaves empty.
func newStore(t testing.TB, cl *riakc.Cluster, opts riak.Options) *riak.Siblings {
	t.Helper()
	if opts.Bucket == "" {
		opts.Bucket = testBucket
	}
	if opts.BucketType == "" {
		opts.BucketType = fakeType
	}
	s, err := riak.NewSiblings(context.Background(), cl, opts)
	require.NoError(t, err)
	return s
}

var keySeq atomic.Int64

// uniqueKey returns a key no other test (or earlier run against a real
// Riak) uses.
func uniqueKey(prefix string) string {
	return prefix + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatInt(keySeq.Add(1), 10)
}

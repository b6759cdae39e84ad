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

// testBucket is the bucket every test uses; keys are unique per test.
const testBucket = "counterkit-test"

// requestTimeout is the per-request read timeout of test clusters: what an
// injected dropped response costs, and long enough that a loaded CI machine
// does not time out ordinary requests.
const requestTimeout = time.Second

// fakeCluster starts a FakeServer, configures testBucket for counterkit and
// returns both with a started cluster.
func fakeCluster(t testing.TB) (*riaktest.FakeServer, *riakc.Cluster) {
	t.Helper()
	srv := riaktest.Start(t)
	cl := newCluster(t, srv.Addr())
	require.NoError(t, riak.ConfigureBucket(context.Background(), cl, "", testBucket))
	srv.ResetRequests()
	return srv, cl
}

func newCluster(t testing.TB, addr string) *riakc.Cluster {
	t.Helper()
	cl, err := riak.NewCluster(requestTimeout, addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Stop() })
	return cl
}

// realCluster returns a cluster for RIAK_ADDR, or skips.
func realCluster(t testing.TB) *riakc.Cluster {
	t.Helper()
	addr := os.Getenv(EnvRiakAddr)
	if addr == "" {
		t.Skipf("%s is not set: no real Riak to test against (the FakeServer tests cover the adapter in CI)", EnvRiakAddr)
	}
	cl, err := riak.NewCluster(5*time.Second, addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Stop() })
	require.NoError(t, riak.ConfigureBucket(context.Background(), cl, "", testBucket))
	return cl
}

func newStore(t testing.TB, cl *riakc.Cluster, opts riak.Options) *riak.Store {
	t.Helper()
	if opts.Bucket == "" {
		opts.Bucket = testBucket
	}
	s, err := riak.New(context.Background(), cl, opts)
	require.NoError(t, err)
	return s
}

var keySeq atomic.Int64

// uniqueKey returns a key no other test (or earlier run against a real
// Riak) uses.
func uniqueKey(prefix string) string {
	return prefix + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatInt(keySeq.Add(1), 10)
}

package riak_test

import (
	"testing"
	"time"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
	"github.com/counterkit/counterkit/crdt"
)

// TestNewClusterUnansweredAddress: an address whose connection attempts
// hang costs NewCluster at most about its request timeout, alone (an
// error wrapping crdt.ErrUnavailable) or beside a node that answers (the
// cluster, whose first command is not held up by it either); it took
// NewCluster's own 5s check and the driver's 3s connect timeout, twice.
func TestNewClusterUnansweredAddress(t *testing.T) {
	const timeout = 200 * time.Millisecond
	const bound = 2 * time.Second // the timeout, with room for a loaded machine
	addr := riaktest.UnansweredAddr(t)
	start := time.Now()
	var cl *riakc.Cluster
	var err error
	within(t, 20*time.Second, "NewCluster", func() { cl, err = riak.NewCluster(ctx, timeout, addr) })
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.Nil(t, cl)
	require.Less(t, time.Since(start), bound, "NewCluster of an unanswered address outlasted its timeout")

	srv := riaktest.Start(t)
	for _, addrs := range [][]string{{addr, srv.Addr()}, {srv.Addr(), addr}} {
		start = time.Now()
		within(t, 20*time.Second, "NewCluster", func() { cl, err = riak.NewCluster(ctx, timeout, addrs...) })
		require.NoError(t, err, "%v", addrs)
		for range 2 { // one of the first two commands goes to the unanswered node
			_ = cl.Execute(&riakc.PingCommand{})
		}
		stopCluster(cl)
		require.Less(t, time.Since(start), 2*bound, "%v: an unanswered address outlasted the timeout", addrs)
	}
}

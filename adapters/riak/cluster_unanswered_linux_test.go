package riak_test

import (
	"context"
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

// A deadline that cuts NewCluster's first dial short (an address that
// never answers) is named too: the dial can return its own timeout before
// the context reports that it ended, which dropped the context's error in
// 20 of 30 runs (review G of stop 101). Ten runs here.
func TestNewClusterDeadlineDuringTheDial(t *testing.T) {
	dead := riaktest.UnansweredAddr(t)
	for range 10 {
		short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err := riak.NewCluster(short, 5*time.Second, dead)
		cancel()
		require.ErrorIs(t, err, crdt.ErrUnavailable)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	}
}

package riak_test

import (
	"net"
	"syscall"
	"testing"
	"time"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
	"github.com/counterkit/counterkit/crdt"
)

// unansweredAddr returns a loopback address whose connection attempts
// hang, as a firewalled or powered-off host's do: a socket listening
// with a backlog of 0, never accepting, whose queue is full, so the
// kernel drops further SYNs. It skips the test where a dial does not
// hang.
func unansweredAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Close(fd) })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	require.NoError(t, syscall.Listen(fd, 0))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	addr := (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}).String()
	for range 4 { // fill the accept queue
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			break
		}
		t.Cleanup(func() { _ = c.Close() })
	}
	if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
		_ = c.Close()
		t.Skip("connections to a full listen queue do not hang here")
	}
	return addr
}

// TestNewClusterUnansweredAddress: an address whose connection attempts
// hang costs NewCluster at most about its request timeout, alone (an
// error wrapping crdt.ErrUnavailable) or beside a node that answers (the
// cluster, whose first command is not held up by it either); it took
// NewCluster's own 5s check and the driver's 3s connect timeout, twice.
func TestNewClusterUnansweredAddress(t *testing.T) {
	const timeout = 200 * time.Millisecond
	const bound = 2 * time.Second // the timeout, with room for a loaded machine
	addr := unansweredAddr(t)
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

package riak_test

import (
	"net"
	"testing"
	"time"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/crdt"
)

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// within runs fn and fails the test if it has not returned after d. (If it
// never returns, its goroutine is leaked: the test has failed anyway.)
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// TestNewClusterUnreachable: with no node listening, NewCluster fails at
// once instead of returning a cluster whose first command would spin until
// a node answers.
func TestNewClusterUnreachable(t *testing.T) {
	addr := closedAddr(t)
	var cl *riakc.Cluster
	var err error
	within(t, 10*time.Second, "NewCluster", func() { cl, err = riak.NewCluster(time.Second, addr) })
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.ErrorContains(t, err, addr)
	require.Nil(t, cl)
	_, err = riak.NewCluster(time.Second, closedAddr(t), closedAddr(t))
	require.ErrorIs(t, err, crdt.ErrUnavailable)
}

// TestNewClusterNotRiak: a listener that accepts connections but does not
// answer (a wrong RIAK_ADDR pointing at some other service) fails NewCluster
// after the request timeout.
func TestNewClusterNotRiak(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	conns := make(chan net.Conn, 16)
	t.Cleanup(func() {
		_ = ln.Close()
		for {
			select {
			case c := <-conns:
				_ = c.Close()
			default:
				return
			}
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case conns <- c: // held open, silent, until the test ends
			default:
				_ = c.Close()
			}
		}
	}()
	var cl *riakc.Cluster
	within(t, 10*time.Second, "NewCluster", func() { cl, err = riak.NewCluster(200*time.Millisecond, ln.Addr().String()) })
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.ErrorContains(t, err, "ping")
	require.Nil(t, cl)
}

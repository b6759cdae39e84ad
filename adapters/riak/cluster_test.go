package riak_test

import (
	"context"
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

// silentListener accepts connections on loopback and never answers (a
// wrong RIAK_ADDR pointing at some other service).
func silentListener(t *testing.T) net.Listener {
	t.Helper()
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
	return ln
}

// TestNewClusterUnreachable: with no node listening, NewCluster fails at
// once instead of returning a cluster whose first command would spin until
// a node answers.
func TestNewClusterUnreachable(t *testing.T) {
	addr := closedAddr(t)
	var cl *riakc.Cluster
	var err error
	within(t, 10*time.Second, "NewCluster", func() { cl, err = riak.NewCluster(ctx, time.Second, addr) })
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.ErrorContains(t, err, addr)
	require.Nil(t, cl)
	_, err = riak.NewCluster(ctx, time.Second, closedAddr(t), closedAddr(t))
	require.ErrorIs(t, err, crdt.ErrUnavailable)
}

// TestNewClusterNotRiak: a listener that accepts connections but does not
// answer (a wrong RIAK_ADDR pointing at some other service) fails NewCluster
// after the request timeout.
func TestNewClusterNotRiak(t *testing.T) {
	ln := silentListener(t)
	var cl *riakc.Cluster
	var err error
	within(t, 10*time.Second, "NewCluster", func() { cl, err = riak.NewCluster(ctx, 200*time.Millisecond, ln.Addr().String()) })
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.ErrorContains(t, err, "ping")
	require.Nil(t, cl)
}

// TestNewClusterContext: NewCluster honours its context. A done context
// fails at once; a deadline shorter than the request timeout ends the
// ping to a silent listener at the deadline. Both errors wrap
// crdt.ErrUnavailable and the context's error.
func TestNewClusterContext(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	cl, err := riak.NewCluster(done, time.Second, closedAddr(t))
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.ErrorIs(t, err, context.Canceled)
	require.Nil(t, cl)

	ln := silentListener(t)
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	cl, err = riak.NewCluster(short, 5*time.Second, ln.Addr().String())
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Nil(t, cl)
	require.Less(t, time.Since(start), 3*time.Second, "returned at the deadline, not after the 5s request timeout")
}

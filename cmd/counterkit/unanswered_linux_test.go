package main

import (
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// unansweredAddr returns a loopback address whose connection attempts
// hang, as a firewalled or powered-off host's do: a socket listening with
// a backlog of 0, never accepting, whose queue is full, so the kernel
// drops further SYNs. It skips the test where a dial does not hang.
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

// A command against a server that does not answer (connection attempts
// hang) fails with crdt.ErrUnavailable, exit 1, about -timeout later:
// -timeout is the connect timeout of Cassandra and Riak alike (Riak's
// took 5s whatever -timeout said).
func TestUnansweredServerFailsWithinTimeout(t *testing.T) {
	addr := unansweredAddr(t)
	for _, args := range [][]string{
		{"get", "-store", "riak:" + addr + "/counterkit/ledgers", "-type", "ledger", "acct-1"},
		{"find", "ledger", "-store", "riak:" + addr + "/counterkit/ledgers", "-dry-run", "acct-1"},
		{"check", "riak", "-addr", addr, "-type", "counterkit", "-bucket", "ledgers"},
		{"get", "-store", "cassandra:" + addr + "/ks", "-type", "ledger", "acct-1"},
		{"merge", "balance", "-store", "cassandra:" + addr + "/ks", "-dry-run", "seller-1"},
		{"check", "cassandra", "-hosts", addr, "-keyspace", "ks"},
	} {
		start := time.Now()
		code, _, errOut := runCmd(t, "", append(args, "-timeout", "300ms")...)
		took := time.Since(start)
		require.Equal(t, 1, code, "%v: %s", args, errOut)
		require.Contains(t, errOut, "(crdt.ErrUnavailable)", "%v", args)
		require.Less(t, took, 3*time.Second, "%v took %v with -timeout 300ms: %s", args, took, strings.TrimSpace(errOut))
	}
}

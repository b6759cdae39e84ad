package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak/riaktest"
)

// A command against a server that does not answer (connection attempts
// hang) fails with crdt.ErrUnavailable, exit 1, about -timeout later:
// -timeout is the connect timeout of Cassandra and Riak alike (Riak's
// took 5s whatever -timeout said).
func TestUnansweredServerFailsWithinTimeout(t *testing.T) {
	addr := riaktest.UnansweredAddr(t)
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

package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// counterkit connects to Cassandra and Riak without authentication: an
// address written with credentials (USER:PASSWORD@HOST, a URL's habit) is
// a usage error, exit 2, whose message names the mistake without printing
// the password, on standard output (a -o json report) or standard error;
// so is a Riak address without a port, and an address whose port is not
// 1 to 65535 (it failed as an unavailable store, exit 1, once the driver
// tried it).
func TestAddressCredentialsAreRefusedUnprinted(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "-store", "cassandra:admin:s3cret@127.0.0.1/ks", "-type", "ledger", "acct-1"}, "credentials"},
		{[]string{"get", "-store", "cassandra:db1,admin:s3cret@127.0.0.1:9042/ks", "-type", "ledger", "acct-1"}, "credentials"},
		{[]string{"get", "-store", "cassandra:admin:s3/cret@127.0.0.1/ks", "-type", "ledger", "acct-1"}, "credentials"},
		{[]string{"get", "-store", "cassandra:admin:s3cret@127.0.0.1", "-type", "ledger", "acct-1"}, "credentials"},
		{[]string{"find", "ledger", "-store", "riak:admin:s3cret@127.0.0.1:8087/counterkit/ledgers", "-o", "json", "acct-1"}, "credentials"},
		{[]string{"find", "ledger", "-store", "riak:admin:s3/cret@127.0.0.1:8087/counterkit/ledgers", "acct-1"}, "credentials"},
		{[]string{"merge", "balance", "-store", "cassandra:admin:s3cret@127.0.0.1:1/ks", "-o", "json", "seller-1"}, "credentials"},
		{[]string{"check", "cassandra", "-hosts", "admin:s3cret@127.0.0.1:1", "-keyspace", "ks", "-o", "json"}, "credentials"},
		{[]string{"check", "riak", "-addr", "admin:s3cret@127.0.0.1:8087", "-type", "counterkit", "-bucket", "b", "-o", "json"}, "credentials"},
		{[]string{"get", "-store", "riak:riak1/counterkit/ledgers", "-type", "ledger", "acct-1"}, "host:port"},
		{[]string{"check", "riak", "-addr", "riak1", "-type", "counterkit", "-bucket", "b"}, "host:port"},
		{[]string{"get", "-store", "cassandra:127.0.0.1:99999/ks", "-type", "ledger", "acct-1"}, "not 1 to 65535"},
		{[]string{"get", "-store", "riak:127.0.0.1:0/counterkit/ledgers", "-type", "ledger", "acct-1"}, "not 1 to 65535"},
		{[]string{"check", "cassandra", "-hosts", "db1:port", "-keyspace", "ks"}, "not 1 to 65535"},
	} {
		code, out, errOut := runCmd(t, "", append(tc.args, "-timeout", "1s")...)
		require.Equal(t, 2, code, "%v: %s%s", tc.args, out, errOut)
		require.Contains(t, errOut, "(crdt.ErrInvalidConfig)", "%v", tc.args)
		require.Contains(t, errOut, tc.want, "%v", tc.args)
		require.NotContains(t, out+errOut, "s3", "%v printed the password", tc.args)
		require.NotContains(t, out+errOut, "cret", "%v printed the password", tc.args)
	}
}

// Command counterkit-compare is a benchmark: it runs one increment workload
// on Cassandra's native counters and on every counterkit type, with client
// timeouts and callers that resend what timed out, and prints, per type,
// what a user of each would see: acknowledged increments, resends, the
// final value and its drift from the sum of the distinct transactions.
//
//	counterkit-compare -hosts db1 -keyspace bench -timeout 5ms -workers 32
//
// Run `counterkit-compare -h` for the flags.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/cli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// fail prints err and returns the exit status: 2 for a usage error, 1
// otherwise.
func fail(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "counterkit-compare: %v (%s)\n", err, cli.SentinelNames(err, sentinels))
	return cli.Status(err)
}

var sentinels = []cli.Sentinel{
	{Name: "crdt.ErrInvalidKey", Err: crdt.ErrInvalidKey},
	{Name: "crdt.ErrInvalidIdentifier", Err: crdt.ErrInvalidIdentifier},
	{Name: "crdt.ErrInvalidConfig", Err: crdt.ErrInvalidConfig},
	{Name: "crdt.ErrMisconfiguredStore", Err: crdt.ErrMisconfiguredStore},
	{Name: "crdt.ErrAmbiguousWrite", Err: crdt.ErrAmbiguousWrite},
	{Name: "crdt.ErrUnavailable", Err: crdt.ErrUnavailable},
	{Name: "crdt.ErrCorruptEncoding", Err: crdt.ErrCorruptEncoding},
	{Name: "crdt.ErrTooLarge", Err: crdt.ErrTooLarge},
}

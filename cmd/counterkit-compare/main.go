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
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/counterkit/counterkit/crdt"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program, testable: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	return runCompare(args, stdout, stderr)
}

// usageError is a mistake in the command line: the exit status is 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// fail prints err and returns the exit status: 2 for a usage error, 1
// otherwise.
func fail(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "counterkit-compare: %v (%s)\n", err, sentinelName(err))
	if errors.As(err, new(usageError)) {
		return 2
	}
	return 1
}

var sentinels = []struct {
	name string
	err  error
}{
	{"crdt.ErrInvalidKey", crdt.ErrInvalidKey},
	{"crdt.ErrInvalidIdentifier", crdt.ErrInvalidIdentifier},
	{"crdt.ErrInvalidConfig", crdt.ErrInvalidConfig},
	{"crdt.ErrMisconfiguredStore", crdt.ErrMisconfiguredStore},
	{"crdt.ErrAmbiguousWrite", crdt.ErrAmbiguousWrite},
	{"crdt.ErrUnavailable", crdt.ErrUnavailable},
	{"crdt.ErrCorruptEncoding", crdt.ErrCorruptEncoding},
	{"crdt.ErrTooLarge", crdt.ErrTooLarge},
}

// sentinelName names the crdt sentinels err wraps, most specific first.
func sentinelName(err error) string {
	var names []string
	var found []error
outer:
	for _, s := range sentinels {
		if !errors.Is(err, s.err) {
			continue
		}
		for _, f := range found {
			if errors.Is(f, s.err) {
				continue outer
			}
		}
		found = append(found, s.err)
		names = append(names, s.name)
	}
	if len(names) == 0 {
		return "no counterkit sentinel"
	}
	return strings.Join(names, ", ")
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Command counterkit inspects and operates counterkit data: it decodes any
// stored encoding, reads a key's value and state from a store, checks a
// store's configuration, and runs maintenance jobs.
//
//	counterkit inspect -hex 93a867636f756e746572...       decode one encoding
//	counterkit get -store embedded:/var/lib/svc -type ledger acct-1
//	counterkit check cassandra -hosts db1,db2 -keyspace counters
//	counterkit check riak -addr riak1:8087 -type counterkit -bucket ledgers
//	counterkit check embedded -data /var/lib/svc
//	counterkit gc tally -store cassandra:db1/counters -dry-run page-views
//	counterkit compact deltalog -store embedded:/var/lib/svc < counters.txt
//	counterkit merge balance -store cassandra:db1/counters seller-1
//	counterkit find ledger -store riak:riak1:8087/counterkit/ledgers acct-1
//	counterkit vectors ./testdata/vectors
//
// Stores are named by -store: embedded:DIR (adapters/embedded; the directory
// is locked while open, so a running service holding it makes the command
// fail with embedded.ErrLocked), cassandra:HOST[,HOST]/KEYSPACE
// (adapters/cassandra, with -prefix for the table prefix) and
// riak:ADDR[,ADDR]/BUCKET_TYPE/BUCKET (adapters/riak, sibling keys only).
// Every value is read and every job is run by the counter's own driver
// (ledger, statestore, tally, deltalog, balance); the tool reimplements none
// of their logic. A dry run runs the same driver on an in-memory copy of
// what it read. vectors replays the language-neutral test vectors (package
// vectors) against this build. The benchmark against Cassandra's native
// counters is a command of its own, cmd/counterkit-compare.
//
// Exit status: 0 on success, 1 when the input or the store gave an error
// (the message names the sentinels it wraps), 2 for a usage error.
// Run `counterkit help` for the commands, `counterkit help CMD` for one.
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `counterkit inspects and operates counterkit data.

usage: counterkit <command> [flags] [arguments]

commands:
  inspect           decode any counterkit encoding (hex, file or stdin) and
                    print it as JSON or a table
  get               read a key from a store: its value, and every sibling or
                    row stored under it
  check             check a store's configuration: a Cassandra keyspace,
                    a Riak bucket, or an embedded data file
  gc tally          fold the expired shards of tally counters into their tally
  compact deltalog  merge and compact the cells of deltalog counters
  merge balance     run the tombstone merge on balance accounts
  find ledger       collapse a ledger's siblings (ledger.Find)
  vectors           replay a directory of test vectors (default: the ones
                    shipped with the module) against this build
  help              print this text, or a command's: counterkit help get

Stores (-store):
  embedded:DIR                         an embedded data directory
  cassandra:HOST[,HOST]/KEYSPACE       a Cassandra keyspace (-prefix P)
  riak:ADDR[,ADDR]/BUCKET_TYPE/BUCKET  a Riak bucket (sibling keys only)

Maintenance jobs (gc, compact, merge, find) take keys as arguments or one
per line on standard input, print one line per key, report progress on
standard error, and with -dry-run run the driver on a copy of each key's
state and print what it would write, writing nothing.

Every command prints its own flags with -h. Exit status: 0 on success, 1
when the input or the store gave an error (the message names the counterkit
sentinel it wraps), 2 for a usage error.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole program, testable: it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "inspect":
		return runInspect(rest, stdin, stdout, stderr)
	case "get":
		return runGet(rest, stdin, stdout, stderr)
	case "check":
		return runCheck(rest, stdin, stdout, stderr)
	case "gc", "compact", "merge", "find":
		return runJob(cmd, rest, stdin, stdout, stderr)
	case "vectors":
		return runVectors(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(rest) == 1 || len(rest) == 2 {
			return run(append(rest, "-h"), stdin, stdout, stdout)
		}
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "counterkit: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
}

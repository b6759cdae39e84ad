// Command counterkit inspects and operates counterkit data: it decodes any
// stored encoding, reads a key's value and state from a store, checks a
// store's configuration, and runs maintenance jobs.
//
// Run `counterkit help` for the commands.
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

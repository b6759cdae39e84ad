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
  inspect   decode any counterkit encoding (hex, file or stdin) and print it
            as JSON or a table
  help      print this text, or a command's: counterkit help inspect

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
	case "help", "-h", "-help", "--help":
		if len(rest) == 1 {
			return run([]string{rest[0], "-h"}, stdin, stdout, stdout)
		}
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "counterkit: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
}

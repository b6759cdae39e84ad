// Command counterkit inspects and operates counterkit data: it decodes any
// stored encoding, reads a key's value and state from a store, checks a
// store's configuration, and runs maintenance jobs, each through the
// counter's own driver. `counterkit help` lists the commands, the stores
// and the exit status; README.md shows them at work.
package main

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/cli"
)

const usage = `counterkit inspects and operates counterkit data.

usage: counterkit <command> [flags] [arguments]

commands:
  inspect           decode any counterkit encoding (hex, file or stdin) and
                    print it as JSON or a table
  get               read a key from a store: its value, and every sibling or
                    row stored under it
  check             check a store: a Cassandra keyspace's configuration, a
                    Riak bucket's, or an embedded store's every checksum
  list              list the keys of an embedded store
  stats             print the size of an embedded store, per engine bucket
  backup            copy an embedded store (DB.Backup), or download a running
                    service's copy (-from URL), and verify the copy
  compact embedded  write a compacted copy of an embedded store
  gc tally          fold the expired shards of tally counters into their tally
  gc records        delete the transaction records of an embedded store
                    that no retry window needs any more
  compact deltalog  merge and compact the cells of deltalog counters
  merge balance     run the tombstone merge on balance accounts
  merge transactions
                    merge balance.Transactions accounts, recording their
                    transactions
  find ledger       collapse a ledger's siblings (ledger.Find)
  version           print the version of this build
  help              print this text, or a command's: counterkit help get

Stores (-store):
  embedded:DIR                         an embedded data directory
  cassandra:HOST[,HOST]/KEYSPACE       a Cassandra keyspace (-prefix P)
  riak:ADDR[,ADDR]/BUCKET_TYPE/BUCKET  a Riak bucket (sibling keys only)

Maintenance jobs (gc tally, compact deltalog, merge, find) take keys as
arguments or one per line on standard input, print one line per key,
report progress on standard error, and with -dry-run run the driver on a
copy of each key's state and print what it would write, writing nothing.

Flags may come before or after the arguments, with one dash or two
(-store or --store). Every command prints a table, or JSON (snake_case keys)
with -o json, and its own flags with -h. Exit status: 0 on success, 1 when
the input or the store gave an error (the message names the counterkit
sentinel it wraps), 2 for a usage error.
`

func main() {
	if dir, ok := os.LookupEnv(verifyChildEnv); ok {
		os.Exit(verifyChild(dir, os.Stdout))
	}
	if os.Getenv(isolatedEnv) == "" && isolate(os.Args[1:]) {
		os.Exit(runIsolated(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// isolatedEnv marks the program run again by runIsolated.
const isolatedEnv = "COUNTERKIT_ISOLATED"

// isolate reports whether a command reads a store's files in this process
// (an embedded store, or backup -from's download): it then runs in a child
// process.
func isolate(args []string) bool {
	if len(args) == 0 || !slices.Contains([]string{"get", "list", "stats", "backup", "gc", "compact", "merge", "find"}, args[0]) {
		return false
	}
	return slices.ContainsFunc(args, func(a string) bool {
		return strings.Contains(a, "embedded:") || args[0] == "backup" && (strings.HasPrefix(a, "-from") || strings.HasPrefix(a, "--from"))
	})
}

// runIsolated runs the command in a child process (this program, run
// again) with the same standard input and output, passing its standard
// error through. A damaged data file can crash the storage engine where no
// recover reaches (a fault in a goroutine of its own, a stack overflow):
// the child then dies, and the command reports the damage, with the
// sentinel, and exits 1 rather than with the runtime's status 2, the usage
// code. The child ends with the command (startChild).
func runIsolated(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	exe, err := os.Executable()
	if err != nil {
		return run(args, stdin, stdout, stderr)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), isolatedEnv+"=1")
	cmd.Stdin, cmd.Stdout = stdin, stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return run(args, stdin, stdout, stderr)
	}
	wait, err := startChild(cmd)
	if err != nil {
		return run(args, stdin, stdout, stderr)
	}
	crash := ""
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if crash == "" && crashStart(line) {
			crash = line
		}
		if crash == "" {
			fmt.Fprintln(stderr, line)
		}
	}
	_, _ = io.Copy(io.Discard, pipe)
	err = wait()
	var exit *exec.ExitError
	var sig syscall.Signal
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			sig = ws.Signal()
		}
	}
	switch {
	case err == nil:
		return 0
	case crash == "" && sig != 0 && sig != syscall.SIGSEGV && sig != syscall.SIGBUS && sig != syscall.SIGABRT && sig != syscall.SIGILL:
		return 128 + int(sig) // stopped from outside (an interrupt, a kill)
	case crash != "" || sig != 0:
		return fail(stderr, args[0], fmt.Errorf("%w: the store's data file crashed the storage engine, so it is damaged (%s); run counterkit check embedded", crdt.ErrCorruptEncoding, cmp.Or(crash, err.Error())))
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		return fail(stderr, args[0], fmt.Errorf("%w: %v", crdt.ErrUnavailable, err))
	}
}

// stopSignals are the signals that stop a command from outside, which it
// passes on to its child (startChild).
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// startChild starts cmd as the command's child, tied to it, so that it
// does not go on writing and holding the store's lock once the command is
// gone: a stop signal the command receives is passed on to the child, and
// on Linux the kernel kills the child when the command dies (tieToParent,
// from a thread kept until the child ends). wait waits for the child; then,
// if the command received a stop signal, it ends the command by that
// signal (reraise), as a shell expects of an interrupted command: a script
// looping over commands stops at Ctrl-C. Call wait from the goroutine that
// called startChild.
func startChild(cmd *exec.Cmd) (wait func() error, err error) {
	tieToParent(cmd)
	runtime.LockOSThread()
	if err := cmd.Start(); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, stopSignals...)
	got := make(chan os.Signal, 1) // the first stop signal received
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sig := range signals {
			select {
			case got <- sig:
			default:
			}
			_ = cmd.Process.Signal(sig)
		}
	}()
	return func() error {
		err := cmd.Wait()
		signal.Stop(signals) // no send after it
		close(signals)
		<-done
		runtime.UnlockOSThread()
		select {
		case sig := <-got:
			reraise(sig)
		default:
		}
		return err
	}, nil
}

// crashStart reports whether a line of standard error starts the Go
// runtime's report of a crash.
func crashStart(line string) bool {
	return slices.ContainsFunc([]string{"panic: ", "fatal error: ", "unexpected fault address", "runtime: goroutine stack exceeds", "SIGSEGV", "SIGBUS"},
		func(p string) bool { return strings.HasPrefix(line, p) })
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
		return runGet(rest, stdout, stderr)
	case "check":
		return runCheck(rest, stdout, stderr)
	case "gc", "compact", "merge", "find":
		return runJob(cmd, rest, stdin, stdout, stderr)
	case "list":
		return runList(rest, stdout, stderr)
	case "stats":
		return runStats(rest, stdout, stderr)
	case "backup":
		return runBackup(rest, stdout, stderr)
	case "version":
		return runVersion(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 && slices.Contains([]string{"help", "-h", "-help", "--help"}, rest[0]) {
			rest = nil // help of help: this text
		}
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

const versionUsage = `usage: counterkit version

Prints the version of this build: the command's module version, the
counterkit module it was built with, the Go version and the source
revision, from the build information Go records in the binary.
`

// versionInfo is what version prints.
type versionInfo struct {
	Module     string `json:"module"`
	Version    string `json:"version"`
	Counterkit string `json:"counterkit"`
	Go         string `json:"go"`
	Revision   string `json:"revision,omitempty"`
	Time       string `json:"time,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
}

func (v *versionInfo) writeTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "counterkit\t%s\n", v.Version)
	fmt.Fprintf(tw, "module\t%s\n", v.Module)
	fmt.Fprintf(tw, "library\tgithub.com/counterkit/counterkit %s\n", v.Counterkit)
	fmt.Fprintf(tw, "go\t%s\n", v.Go)
	if v.Revision != "" {
		fmt.Fprintf(tw, "revision\t%s %s%s\n", v.Revision, v.Time, cli.Either(v.Modified, " (modified)", ""))
	}
	tw.Flush()
}

// buildInfo reads the build information; tests replace it.
var buildInfo = debug.ReadBuildInfo

func runVersion(args []string, stdout, stderr io.Writer) int {
	c := newCommand("version", versionUsage, stderr)
	if code := c.parse(args); code >= 0 {
		return code
	}
	if c.fs.NArg() > 0 {
		return fail(stderr, "version", cli.Usagef("%w: version takes no arguments", crdt.ErrInvalidConfig))
	}
	bi, ok := buildInfo()
	if !ok {
		return fail(stderr, "version", fmt.Errorf("%w: this binary carries no build information", crdt.ErrNotFound))
	}
	v := &versionInfo{Module: bi.Main.Path, Version: cmp.Or(bi.Main.Version, "(devel)"), Go: bi.GoVersion, Counterkit: "(unknown)"}
	for _, d := range bi.Deps {
		if d.Path == "github.com/counterkit/counterkit" {
			v.Counterkit = d.Version
			if d.Replace != nil {
				v.Counterkit += " => " + d.Replace.Path
				if d.Replace.Version != "" && d.Replace.Version != "(devel)" {
					v.Counterkit += " " + d.Replace.Version
				}
			}
		}
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return c.emit(stdout, v)
}

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
)

// runChild runs the program (this test binary, as runIsolated does) in a
// child process with args, and returns its exit status and output. A crash
// of the child (a stack overflow) cannot take the test binary with it.
func runChild(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), isolatedEnv+"=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errOut.String()
	}
	require.NoError(t, err)
	return -1, "", ""
}

// `counterkit help` prints "this text, or a command's: counterkit help
// get". `counterkit help help` (and `help -h`, `-h -h`, `--help --help`)
// recurse without end in run: help with one argument runs that argument
// with -h, which is help again. The program dies with "fatal error: stack
// overflow" after filling a 1 GB stack, exit status 2 (the usage code), and
// prints a goroutine dump.
func TestHelpOfHelp(t *testing.T) {
	for _, args := range [][]string{{"help", "help"}, {"help", "-h"}, {"-h", "-h"}, {"--help", "--help"}} {
		code, out, errOut := runChild(t, args...)
		require.False(t, strings.Contains(errOut, "stack overflow"), "%v: exit %d: %.120s", args, code, errOut)
		require.Equal(t, 0, code, "%v: %.300s", args, errOut)
		require.Contains(t, out, "usage: counterkit <command>", "%v", args)
	}
}

// Held up: every command's help, through `counterkit help CMD`, exits 0
// and prints on standard output.
func TestHelpOfEachCommand(t *testing.T) {
	for _, args := range [][]string{{"help", "get"}, {"help", "inspect"}, {"help", "check"}, {"help", "list"},
		{"help", "stats"}, {"help", "backup"}, {"help", "version"}, {"help", "compact", "embedded"},
		{"help", "gc", "tally"}, {"help", "compact", "deltalog"}, {"help", "merge", "balance"},
		{"help", "merge", "transactions"}, {"help", "find", "ledger"}} {
		code, out, errOut := runCmd(t, "", args...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		require.Contains(t, out, "usage: counterkit", "%v", args)
	}
}

// format1WithKey returns a fixture store turned into format 1 (no digest
// records, as readonly_test does), with a sibling entry under key, which
// no adapter writes (a crafted file): sealed with its checksum, as every
// way of opening a format 1 file checks it.
func format1WithKey(t *testing.T, key string) string {
	t.Helper()
	dir := fixture(t)
	b, err := bolt.Open(filepath.Join(dir, embedded.FileName), 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, b.Update(func(tx *bolt.Tx) error {
		m := tx.Bucket([]byte("meta"))
		f := bytes.Clone(m.Get([]byte("format")))
		f[len(f)-2], f[len(f)-1] = 0, 1
		if err := m.Put([]byte("format"), f); err != nil {
			return err
		}
		if err := m.Delete([]byte("digest")); err != nil {
			return err
		}
		k := binary.AppendUvarint(nil, uint64(len(key)))
		k = append(append(k, key...), 0, 0, 0, 0, 0, 0, 0, 9)
		value := []byte{1}
		table := crc32.MakeTable(crc32.Castagnoli)
		sum := crc32.Update(crc32.Checksum(k, table), table, value)
		return tx.Bucket([]byte("siblings")).Put(k, append(binary.BigEndian.AppendUint32(nil, sum), value...))
	}))
	require.NoError(t, b.Close())
	return dir
}

// fail escapes control characters so that "a key read from standard input
// or a server's answer cannot drive the operator's terminal", but list's
// table prints the keys of the data file as stored: a damaged or crafted
// file whose key holds an escape sequence (here one that clears the
// screen) sends it to the terminal, and list exits 0. check embedded
// quotes the same key (%q), and list -o json escapes it.
func TestListEscapesStoredKeys(t *testing.T) {
	dir := format1WithKey(t, "ev\x1b[2Jil")
	code, out, errOut := runCmd(t, "", "list", "-store", "embedded:"+dir)
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out, "\x1b", "list printed a stored key's escape sequence raw")
}

// check riak prints the bucket's properties as Riak returns them; the
// string ones (datatype, backend) come from the server unescaped, so a
// bucket type whose datatype holds an escape sequence (here: clear the
// screen, set the window title) drives the terminal from check's table,
// while the same text in the FAIL line and on standard error is escaped.
func TestCheckRiakEscapesServerStrings(t *testing.T) {
	srv := riaktest.Start(t)
	require.NoError(t, srv.CreateBucketType("odd", riaktest.BucketTypeProps{AllowMult: true, Datatype: "counter\x1b[2J\x1b]0;x\x07"}))
	code, out, errOut := runCmd(t, "", "check", "riak", "-addr", srv.Addr(), "-type", "odd", "-bucket", "b", "-timeout", "2s")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "crdt.ErrMisconfiguredStore")
	require.NotContains(t, errOut, "\x1b")
	require.NotContains(t, out, "\x1b", "check riak printed the server's datatype raw")
}

// Held up: the commands that only read (list, stats, get of every shape,
// check embedded, backup's and compact embedded's source, every job with
// -dry-run, and commands refused for a bad flag or key) change neither the
// bytes nor the modification time of the data file, nor the directory's
// entries, on a store of the current format.
func TestReadOnlyCommandsKeepBytesAndTimes(t *testing.T) {
	dir := fixture(t)
	emb := "embedded:" + dir
	type snap struct {
		names []string
		data  map[string][]byte
		times map[string]time.Time
	}
	take := func() snap {
		s := snap{data: map[string][]byte{}, times: map[string]time.Time{}}
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			st, err := os.Stat(p)
			require.NoError(t, err)
			s.names, s.data[e.Name()], s.times[e.Name()] = append(s.names, e.Name()), b, st.ModTime()
		}
		st, err := os.Stat(dir)
		require.NoError(t, err)
		s.times["."] = st.ModTime()
		return s
	}
	before := take()
	time.Sleep(10 * time.Millisecond) // a write now would show in the times
	for _, args := range [][]string{
		{"list", "-store", emb},
		{"list", "-store", emb, "-o", "json", "-kind", "partitions"},
		{"stats", "-store", emb},
		{"get", "-store", emb, "-type", "ledger", "acct-1"},
		{"get", "-store", emb, "-type", "tally", "pageviews", "-complete"},
		{"get", "-store", emb, "-type", "transactions", "seller-1"},
		{"get", "-store", emb, "-type", "ledger", "missing"},
		{"check", "embedded", "-store", emb},
		{"backup", "-store", emb, "-to", filepath.Join(t.TempDir(), "copy")},
		{"compact", "embedded", "-store", emb, "-to", filepath.Join(t.TempDir(), "copy")},
		{"find", "ledger", "-store", emb, "-dry-run", "acct-1"},
		{"gc", "tally", "-store", emb, "-dry-run", "pageviews"},
		{"compact", "deltalog", "-store", emb, "-dry-run", "dl-2"},
		{"merge", "balance", "-store", emb, "-dry-run", "seller-1"},
		{"merge", "transactions", "-store", emb, "-dry-run", "seller-1"},
		{"gc", "tally", "-store", emb, "-bogus", "pageviews"},
		{"gc", "tally", "-store", emb, "-kind", "max", "pageviews"},
		{"gc", "tally", "-store", emb, "bad\x01key"},
	} {
		runCmd(t, "", args...)
		after := take()
		require.Equal(t, before.names, after.names, "%q", args)
		for n, b := range before.data {
			require.True(t, bytes.Equal(b, after.data[n]), "%q changed %s", args, n)
		}
		require.Equal(t, before.times, after.times, "%q", args)
	}
	require.False(t, strings.Contains(strings.Join(before.names, ","), "lock"))
}

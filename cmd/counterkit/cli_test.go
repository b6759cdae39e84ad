package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
)

// TestMain runs the check embedded child process when the test binary is
// run as one (see checkEmbeddedIsolated); with crashChildEnv set to
// crash, the child crashes the way a damaged file crashes the engine (a
// fault in a goroutine of its own), with hang it never ends.
func TestMain(m *testing.M) {
	if os.Getenv(asCommandEnv) != "" && os.Getenv(isolatedEnv) == "" {
		main() // as run from a shell: it isolates
	}
	if os.Getenv(isolatedEnv) != "" {
		// Run as the program, by runIsolated.
		if os.Getenv(crashChildEnv) == "crash" {
			go func() {
				var p *[1 << 20]byte
				p[12345] = 1
			}()
			time.Sleep(time.Hour)
		}
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if dir, ok := os.LookupEnv(verifyChildEnv); ok {
		switch os.Getenv(crashChildEnv) {
		case "hang":
			time.Sleep(time.Hour)
		case "crash":
			go func() {
				var p *[1 << 20]byte
				p[12345] = 1
			}()
			select {}
		}
		os.Exit(verifyChild(dir, os.Stdout))
	}
	os.Exit(m.Run())
}

const crashChildEnv = "COUNTERKIT_TEST_CRASH_CHILD"

// asCommandEnv runs the test binary as the program run from a shell
// (main), which starts its child as runIsolated does.
const asCommandEnv = "COUNTERKIT_TEST_AS_COMMAND"

// A check whose child crashes exits 1 with crdt.ErrCorruptEncoding, not 2
// (the usage code) and not the crash's own status; errors found in the
// child keep their sentinels across the process boundary.
func TestCheckEmbeddedChildCrash(t *testing.T) {
	dir := fixture(t)
	t.Setenv(crashChildEnv, "crash")
	code, out, errOut := runCmd(t, "", "check", "embedded", "-store", "embedded:"+dir)
	require.Equal(t, 1, code, errOut)
	require.Empty(t, out)
	require.Contains(t, errOut, "reading the data file crashed the engine, so the file is damaged (panic: runtime error: invalid memory address or nil pointer dereference")
	require.True(t, strings.HasSuffix(errOut, "(crdt.ErrCorruptEncoding)\n"), errOut)

	// A child that never ends is stopped at -timeout.
	t.Setenv(crashChildEnv, "hang")
	code, out, errOut = runCmd(t, "", "check", "embedded", "-store", "embedded:"+dir, "-timeout", "1s")
	require.Equal(t, 1, code, errOut)
	require.Empty(t, out)
	require.Contains(t, errOut, "did not finish within -timeout and was stopped")
	require.True(t, strings.HasSuffix(errOut, "(crdt.ErrUnavailable)\n"), errOut)

	e := sentinelError{"x", "embedded.ErrLocked, crdt.ErrUnavailable"}
	require.ErrorIs(t, e, embedded.ErrLocked)
	require.ErrorIs(t, e, crdt.ErrUnavailable)
	require.NotErrorIs(t, e, crdt.ErrCorruptEncoding)
	require.Equal(t, "embedded.ErrLocked, crdt.ErrUnavailable", sentinelName(e))
}

// Commands on an embedded store run in a child process: its output and
// exit status pass through unchanged; a crash of the child exits 1 with
// crdt.ErrCorruptEncoding, not the runtime's 2.
func TestIsolated(t *testing.T) {
	dir := fixture(t)
	emb := "embedded:" + dir
	require.True(t, isolate([]string{"get", "-store", emb, "k"}))
	require.False(t, isolate([]string{"get", "-store", "cassandra:h/ks", "k"}))
	require.False(t, isolate([]string{"inspect", "-hex", "00"}))
	require.True(t, isolate([]string{"backup", "-from", "http://h/b", "-to", "x"}))
	require.True(t, isolate([]string{"backup", "--from=http://h/b", "-to", "x"}))
	require.False(t, isolate([]string{"get", "-from", "http://h/b"}))
	for _, args := range [][]string{
		{"list", "-store", emb},
		{"get", "acct-1", "-store", emb, "-type", "ledger"},
		{"get", "nobody", "-store", emb, "-type", "ledger"},
		{"get", "-store", emb, "-type", "tally", "-max-rows", "0", "pageviews"},
	} {
		wantCode, wantOut, wantErr := runCmd(t, "", args...)
		var out, errOut strings.Builder
		code := runIsolated(args, strings.NewReader(""), &out, &errOut)
		require.Equal(t, wantCode, code, args)
		require.Equal(t, wantOut, out.String(), args)
		require.Equal(t, wantErr, errOut.String(), args)
	}
	// Standard input reaches the child.
	var out, errOut strings.Builder
	require.Equal(t, 0, runIsolated([]string{"find", "ledger", "-store", emb, "-dry-run", "-progress", "0"},
		strings.NewReader("acct-1\n"), &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "acct-1: would collapse 2 siblings")

	t.Setenv(crashChildEnv, "crash")
	out.Reset()
	errOut.Reset()
	code := runIsolated([]string{"list", "-store", emb}, strings.NewReader(""), &out, &errOut)
	require.Equal(t, 1, code)
	require.Empty(t, out.String())
	require.Equal(t, "counterkit list: counterkit: corrupt encoding: the store's data file crashed the storage engine, so it is damaged "+
		"(panic: runtime error: invalid memory address or nil pointer dereference); run counterkit check embedded (crdt.ErrCorruptEncoding)\n", errOut.String())
}

// The embedded-store commands (list, stats, compact embedded, check, get
// with its flags after the key) and their exit codes, golden.
func TestEmbeddedCommandsGolden(t *testing.T) {
	dir := fixture(t)
	emb := "embedded:" + dir
	out := script(t, dir, [][]string{
		{"list", "-store", emb},
		{"list", "--store", emb, "--kind", "partitions", "--key-prefix", "dl", "-o", "json"},
		{"list", "-store", emb, "-limit", "3"},
		{"get", "acct-1", "-store", emb, "-type", "ledger", "-o", "json"},
		{"get", "pageviews", "--type=tally", "--store=" + emb},
		{"check", "embedded", "-o", "json", "-store", emb},
		{"compact", "embedded", "-store", emb, "-to", filepath.Join(dir, "..", "compacted")},
		{"list", "-store", "embedded:" + filepath.Join(dir, "..", "compacted"), "-kind", "siblings"},
	})
	out = strings.ReplaceAll(out, filepath.Join(filepath.Dir(dir), "compacted"), "COMPACTED")
	out = regexp.MustCompile(`\d+ bytes in use before, a \d+-byte file`).ReplaceAllString(out, "N bytes in use before, a M-byte file")
	golden(t, "embedded-commands.golden", out)
}

// Usage errors exit 2 on every command, and name what was wrong.
func TestUsageErrorsGolden(t *testing.T) {
	dir := fixture(t)
	emb := "embedded:" + dir
	lines := [][]string{
		{"get", "-store", emb, "-type", "tally", "-max-rows", "0", "pageviews"},
		{"get", "-store", emb, "-type", "tally", "-o", "yaml", "pageviews"},
		{"compact", "deltalog", "-store", emb, "-window", "-1s", "dl-1"},
		{"merge", "balance", "-store", emb, "-gc-grace", "-1m", "seller-1"},
		{"gc", "tally", "-store", emb, "-kind", "median", "pageviews"},
		{"find", "ledger", "-store", emb, "-history", "-3", "acct-1"},
		{"inspect", "-hex", "zz"},
		{"inspect", "-window", "-1", "-hex", "00"},
		{"check", "embedded", "-data", dir},
		{"list", "-store", "cassandra:h/ks"},
		{"list", "-store", emb, "-kind", "values"},
		{"stats", "-store", emb, "extra"},
		{"backup", "-store", emb},
		{"backup", "-store", emb, "-to", dir},
		{"backup", "-to", "backup-1"},
		{"backup", "-store", emb, "-from", "http://127.0.0.1:6060/debug/counterkit/backup", "-to", "backup-1"},
		{"backup", "-from", "ftp://host/backup", "-to", "backup-1"},
		{"backup", "-from", "127.0.0.1:6060/debug/counterkit/backup", "-to", "backup-1"},
		{"backup", "-from", "http://127.0.0.1:6060/debug/counterkit/backup"},
		{"backup", "-from", "http://127.0.0.1:6060/debug/counterkit/backup", "-to", dir},
		{"backup", "-from", "http://127.0.0.1:6060/debug/counterkit/backup", "-to", "backup-1", "extra"},
		{"compact", "embedded", "-store", emb},
		{"version", "extra"},
		{"get", "-store", emb, "-type", "ledger", "-timeout", "0s", "acct-1"},
		{"list", "-store", emb, "-timeout", "-1s"},
		{"check", "riak", "-addr", "h:1", "-bucket", "b", "-timeout", "0s"},
		{"version", "-o", "xml"},
	}
	out := script(t, dir, lines)
	golden(t, "usage-errors.golden", out)
	require.Equal(t, len(lines), strings.Count(out, "\nexit 2\n"), "every line is a usage error")
}

// A line of standard input longer than a key can be is crdt.ErrTooLarge,
// not crdt.ErrUnavailable.
func TestHugeInputLine(t *testing.T) {
	dir := fixture(t)
	huge := strings.Repeat("k", 10<<20) + "\n"
	code, out, errOut := runCmd(t, huge, "find", "ledger", "-store", "embedded:"+dir)
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "line 1 is longer than 1048576 bytes")
	require.True(t, strings.HasSuffix(errOut, "(crdt.ErrTooLarge)\n"), errOut)
	require.NotContains(t, errOut, "ErrUnavailable")
}

// inspect refuses input longer than any encoding as crdt.ErrTooLarge.
func TestInspectHugeInput(t *testing.T) {
	code, out, errOut := runCmd(t, strings.Repeat("a", crdt.DefaultMaxEncodedSize+1), "inspect")
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.True(t, strings.HasSuffix(errOut, "(crdt.ErrTooLarge)\n"), errOut)
}

// stats counts what the adapter stores: every sibling value and row.
func TestStatsEmbedded(t *testing.T) {
	dir := fixture(t)
	code, out, errOut := runCmd(t, "", "stats", "-store", "embedded:"+dir, "-o", "json")
	require.Equal(t, 0, code, errOut)
	var s engineStats
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	require.Equal(t, 4, s.SiblingKeys)
	require.Equal(t, 7, s.PartitionKeys)
	st, err := os.Stat(filepath.Join(dir, embedded.FileName))
	require.NoError(t, err)
	require.Equal(t, st.Size(), s.FileBytes)

	// The counts match a read of every key through the adapter.
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	defer db.Close()
	l, err := listEmbedded(context.Background(), dir, listOptions{})
	require.Error(t, err, "the store is open: the engine's file is locked")
	require.ErrorIs(t, err, embedded.ErrLocked)
	values, rows := 0, 0
	for _, k := range []string{"acct-1", "views", "temp", "bad"} {
		v, _, err := db.Siblings().Fetch(context.Background(), k)
		require.NoError(t, err)
		values += len(v)
	}
	for _, p := range []string{"pageviews", "latency", "visitors", "bad-tally", "dl-1", "dl-2", "seller-1"} {
		r, err := db.Partitions().Snapshot(context.Background(), p, 1000, 0)
		require.NoError(t, err)
		rows += len(r)
	}
	require.Nil(t, l)
	require.Equal(t, values, s.SiblingValues)
	require.Equal(t, rows, s.Rows)
	var table strings.Builder
	s.writeTable(&table)
	require.Contains(t, table.String(), fmt.Sprintf("sibling keys  4 (%d values)", values))
}

// A running service holds the directory: list, stats, compact and backup
// fail at once with embedded.ErrLocked.
func TestEmbeddedCommandsLocked(t *testing.T) {
	dir := fixture(t)
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	defer db.Close()
	for _, args := range [][]string{
		{"list", "-store", "embedded:" + dir},
		{"stats", "-store", "embedded:" + dir},
		{"compact", "embedded", "-store", "embedded:" + dir, "-to", t.TempDir()},
		{"backup", "-store", "embedded:" + dir, "-to", t.TempDir()},
	} {
		code, out, errOut := runCmd(t, "", args...)
		require.Equal(t, 1, code, args)
		require.Empty(t, out)
		require.Contains(t, errOut, "embedded.ErrLocked, crdt.ErrUnavailable", args)
	}
}

// fileBackup is an embedded store whose Backup copies its data file: a
// consistent copy, since nothing writes while the command holds the
// directory.
type fileBackup struct {
	*embedded.DB
	calls *int
}

func (f fileBackup) Backup(ctx context.Context, dir string) error {
	*f.calls++
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := os.ReadFile(f.Path())
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, embedded.FileName), b, 0o600)
}

// noBackup is an embedded store without an online backup.
type noBackup struct{ db *embedded.DB }

func (n noBackup) Close() error { return n.db.Close() }

// backup calls DB.Backup through an interface with exactly its method,
// verifies the copy, and the copy restores: every key reads back the same.
func TestBackupAndRestore(t *testing.T) {
	dir := fixture(t)
	calls := 0
	defer func(f func(string) (backupSource, error)) { openBackupSource = f }(openBackupSource)
	openBackupSource = func(d string) (backupSource, error) {
		db, err := openEmbedded(d, false)
		if err != nil {
			return nil, err
		}
		return fileBackup{db, &calls}, nil
	}
	to := filepath.Join(t.TempDir(), "backup")
	code, out, errOut := runCmd(t, "", "backup", "-store", "embedded:"+dir, "-to", to)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, 1, calls)
	require.Equal(t, "backed up "+dir+" into "+to+": 11 keys, verified\n", out)
	for _, k := range []struct{ typ, key string }{
		{"ledger", "acct-1"}, {"gcounter", "views"}, {"pncounter", "temp"},
		{"tally", "pageviews"}, {"deltalog", "dl-1"}, {"balance", "seller-1"}, {"deltalog", "dl-2"},
	} {
		_, want, _ := runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", k.typ, k.key)
		code, got, errOut := runCmd(t, "", "get", "-store", "embedded:"+to, "-type", k.typ, k.key)
		require.Equal(t, 0, code, errOut)
		require.Equal(t, strings.ReplaceAll(want, dir, to), got, k.key)
	}

	// A Backup that writes a damaged copy is caught by the verification.
	openBackupSource = func(d string) (backupSource, error) {
		db, err := openEmbedded(d, false)
		if err != nil {
			return nil, err
		}
		return damagingBackup{fileBackup{db, &calls}}, nil
	}
	code, _, errOut = runCmd(t, "", "backup", "-store", "embedded:"+dir, "-to", filepath.Join(t.TempDir(), "bad"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "does not verify")
	require.Contains(t, errOut, "crdt.ErrCorruptEncoding")

	// An adapter without the method is told apart.
	openBackupSource = func(d string) (backupSource, error) {
		db, err := openEmbedded(d, false)
		if err != nil {
			return nil, err
		}
		return noBackup{db}, nil
	}
	code, _, errOut = runCmd(t, "", "backup", "-store", "embedded:"+dir, "-to", filepath.Join(t.TempDir(), "none"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "has no online backup (DB.Backup)")
}

// A backup whose check of the copy -timeout stops says the copy was
// written but not checked (crdt.ErrUnavailable), not that it does not
// verify: the check found nothing. The verification blocks until the
// command's context is done, which the test ends itself.
func TestBackupVerifyTimeout(t *testing.T) {
	dir := fixture(t)
	to := filepath.Join(t.TempDir(), "backup")
	entered, release, closed := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer func(f func(string) (backupCopy, error)) { openBackupCopy = f }(openBackupCopy)
	openBackupCopy = func(d string) (backupCopy, error) {
		db, err := openEmbedded(d, false)
		if err != nil {
			return nil, err
		}
		return blockingVerify{db, entered, release, closed}, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-entered
		cancel() // -timeout runs out during the check
	}()
	res, err := backup(ctx, dir, to)
	require.Nil(t, res)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.NotErrorIs(t, err, crdt.ErrCorruptEncoding)
	var errOut strings.Builder
	require.Equal(t, 1, fail(&errOut, "backup", err))
	require.Equal(t, "counterkit backup: counterkit: store unavailable: the backup in "+to+" was written but not checked within -timeout: "+
		"check it with counterkit check embedded -store embedded:"+to+" (crdt.ErrUnavailable)\n", errOut.String())

	// The copy is there and checks.
	close(release)
	<-closed
	code, out, stderr := runCmd(t, "", "list", "-store", "embedded:"+to)
	require.Equal(t, 0, code, stderr)
	_, want, _ := runCmd(t, "", "list", "-store", "embedded:"+dir)
	require.Equal(t, strings.ReplaceAll(want, dir, to), out)

	// A check that fails is still a copy that does not verify.
	openBackupCopy = func(d string) (backupCopy, error) {
		db, err := openEmbedded(d, false)
		if err != nil {
			return nil, err
		}
		return failingVerify{db}, nil
	}
	_, err = backup(context.Background(), dir, filepath.Join(t.TempDir(), "bad"))
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	require.Contains(t, err.Error(), "does not verify")
}

// blockingVerify is a copy whose Verify signals entered and returns once
// release is closed; Close then signals closed.
type blockingVerify struct {
	*embedded.DB
	entered, release, closed chan struct{}
}

func (b blockingVerify) Verify() error {
	close(b.entered)
	<-b.release
	return nil
}

func (b blockingVerify) Close() error {
	defer close(b.closed)
	return b.DB.Close()
}

// failingVerify is a copy that does not verify.
type failingVerify struct{ *embedded.DB }

func (failingVerify) Verify() error {
	return fmt.Errorf("%w: a page is damaged", crdt.ErrCorruptEncoding)
}

// damagingBackup copies the file and flips the last byte of every copy of
// one stored value.
type damagingBackup struct{ fileBackup }

func (d damagingBackup) Backup(ctx context.Context, dir string) error {
	vals, _, err := d.Siblings().Fetch(ctx, "temp")
	if err != nil {
		return err
	}
	if err := d.fileBackup.Backup(ctx, dir); err != nil {
		return err
	}
	path := filepath.Join(dir, embedded.FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	for i := strings.Index(s, string(vals[0])); i >= 0; {
		b[i+len(vals[0])-1] ^= 0xff
		j := strings.Index(s[i+1:], string(vals[0]))
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return os.WriteFile(path, b, 0o600)
}

// With the adapter's own DB.Backup (when this build has it), backup works
// end to end.
func TestBackupWithAdapter(t *testing.T) {
	if _, ok := any((*embedded.DB)(nil)).(backuper); !ok {
		t.Skip("adapters/embedded has no DB.Backup in this build; TestBackupAndRestore covers the command")
	}
	dir := fixture(t)
	to := filepath.Join(t.TempDir(), "backup")
	code, out, errOut := runCmd(t, "", "backup", "-store", "embedded:"+dir, "-to", to)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "11 keys, verified")

	// An empty directory given as -to is written into.
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	code, out, errOut = runCmd(t, "", "backup", "-store", "embedded:"+dir, "-to", empty)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "11 keys, verified")
}

// version prints the build information.
func TestVersion(t *testing.T) {
	defer func(f func() (*debug.BuildInfo, bool)) { buildInfo = f }(buildInfo)
	buildInfo = func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.0",
			Main: debug.Module{Path: "github.com/counterkit/counterkit/cmd/counterkit", Version: "v0.1.0"},
			Deps: []*debug.Module{{Path: "github.com/counterkit/counterkit", Version: "v0.1.0"}},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "66c9162"}, {Key: "vcs.time", Value: "2026-11-28T05:00:00Z"},
				{Key: "vcs.modified", Value: "true"}}}, true
	}
	out := script(t, "", [][]string{{"version"}, {"version", "-o", "json"}})
	golden(t, "version.golden", out)
	buildInfo = func() (*debug.BuildInfo, bool) { return nil, false }
	code, _, errOut := runCmd(t, "", "version")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no build information")
	// The real build information of the test binary.
	buildInfo = debug.ReadBuildInfo
	code, out, errOut = runCmd(t, "", "version")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^module +github.com/counterkit/counterkit/cmd/counterkit$`, out)
	require.Regexp(t, `(?m)^library +github.com/counterkit/counterkit v\d+\.\d+\.\d+\S* => ../..`, out)
}

// snakeCase reports the first key of a JSON document that is not
// snake_case.
func snakeCase(doc []byte) error {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return err
	}
	ok := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	var walk func(v any, path string) error
	walk = func(v any, path string) error {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if !ok.MatchString(k) && !strings.HasSuffix(path, ".sent") {
					return fmt.Errorf("key %q at %s is not snake_case", k, path)
				}
				if err := walk(e, path+"."+k); err != nil {
					return err
				}
			}
		case []any:
			for i, e := range x {
				if err := walk(e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(v, "$")
}

// Every command's -o json is one JSON document with snake_case keys (map
// keys that are data, such as actor names, excepted). The checker catches
// a Go field name.
func TestJSONStyle(t *testing.T) {
	require.Error(t, snakeCase([]byte(`{"stats": {"Actors": 1}}`)), "the checker catches a Go field name")
	require.NoError(t, snakeCase([]byte(`{"stats": {"actors": 1}}`)))

	dir := fixture(t)
	emb := "embedded:" + dir
	b, err := bounded.New(bounded.Options{Bound: -10, Origin: "bank"})
	require.NoError(t, err)
	err = b.Transfer("bank", "shop-1", 4)
	require.NoError(t, err)
	bb, err := b.MarshalBinary()
	require.NoError(t, err)
	for _, args := range [][]string{
		{"inspect", "-hex", fmt.Sprintf("%x", bb)},
		{"inspect", "-hex", fmt.Sprintf("%x", samples(t)["tpncounter"])},
		{"get", "-store", emb, "-type", "ledger", "acct-1"},
		{"get", "-store", emb, "-type", "balance", "seller-1"},
		{"check", "embedded", "-store", emb},
		{"list", "-store", emb},
		{"stats", "-store", emb},
		{"find", "ledger", "-store", emb, "-dry-run", "acct-1", "nobody"},
		{"gc", "tally", "-store", emb, "-dry-run", "pageviews"},
		{"version"},
	} {
		_, out, errOut := runCmd(t, "", append(args, "-o", "json")...)
		require.NoError(t, snakeCase([]byte(out)), "%v: %s%s", args, out, errOut)
		require.True(t, json.Valid([]byte(out)), "%v", args)
	}
}

// inspect and get decode bounded encodings.
func TestBounded(t *testing.T) {
	b, err := bounded.New(bounded.Options{Bound: -10, Origin: "bank"})
	require.NoError(t, err)
	err = b.Transfer("bank", "shop-1", 4)
	require.NoError(t, err)
	_, err = b.Apply("shop-1", "t1", -3)
	require.NoError(t, err)
	data, err := b.MarshalBinary()
	require.NoError(t, err)
	out := script(t, "", [][]string{
		{"inspect", "-hex", fmt.Sprintf("%x", data)},
		{"inspect", "-hex", fmt.Sprintf("%x", data), "-o", "json"},
		{"inspect", "-hex", fmt.Sprintf("%x", data[:len(data)-2])},
	})
	golden(t, "bounded.golden", out)

	// get on a bounded account: its value through bounded.Account.
	dir := filepath.Join(t.TempDir(), "data")
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	require.NoError(t, db.Siblings().Put(context.Background(), "limit-1", "bank", data, nil))
	require.NoError(t, db.Close())
	code, got, errOut := runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", "bounded", "limit-1")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, got, "value     -3\n")
	require.Contains(t, got, "siblings  1\n")
	code, _, errOut = runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", "ledger", "limit-1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "crdt.ErrTypeMismatch")
	_ = crdt.TagBounded
}

// get refuses, as corrupt, siblings of a bounded key that each decode but
// merge to a state no decoder reads (actor a forked: each of two states
// of its entry gave the same rights away), as bounded.Account does,
// instead of printing a value below the bound.
func TestBoundedForkedSiblings(t *testing.T) {
	fork := func(to crdt.ActorID, request bool) []byte {
		c, err := bounded.New(bounded.Options{})
		require.NoError(t, err)
		_, err = c.Apply("a", "credit", 5)
		require.NoError(t, err)
		require.NoError(t, c.Transfer("a", to, 5))
		if request { // a's entry one write newer, so that it wins the merge
			_, err = c.Request("a", 1)
			require.NoError(t, err)
		}
		_, err = c.Apply(to, crdt.TxnID("spend-"+to), -5)
		require.NoError(t, err)
		b, err := c.MarshalBinary()
		require.NoError(t, err)
		return b
	}
	dir := filepath.Join(t.TempDir(), "data")
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, db.Siblings().Put(ctx, "k", "w1", fork("b", false), nil))
	require.NoError(t, db.Close())
	code, got, errOut := runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", "bounded", "k")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, got, "value     0\n", "one fork alone reads")

	db, err = embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	require.NoError(t, db.Siblings().Put(ctx, "k", "w2", fork("c", true), nil))
	require.NoError(t, db.Close())
	code, got, errOut = runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", "bounded", "k")
	require.Equal(t, 1, code, got)
	require.Contains(t, errOut, "crdt.ErrCorruptEncoding")
	require.Contains(t, errOut, "the merge of 2 siblings")
	require.NotContains(t, got, "value")
}

// get and list fail the same way on a directory that is not a store: the
// same exit status, sentinel and message, the adapter's.
func TestGetAndListOnOddDirectories(t *testing.T) {
	write := func(path, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	}
	for _, tc := range []struct {
		name     string
		make     func(dir string) // dir does not exist yet
		sentinel string
		message  string // DIR for the directory
	}{
		{"missing", func(string) {}, "crdt.ErrNotFound", "counterkit: not found: no counterkit data file counterkit.db in DIR"},
		{"empty", func(d string) { require.NoError(t, os.MkdirAll(d, 0o755)) }, "crdt.ErrNotFound",
			"counterkit: not found: no counterkit data file counterkit.db in DIR"},
		{"not a store", func(d string) { write(filepath.Join(d, "notes.txt"), "hello") }, "crdt.ErrNotFound",
			"counterkit: not found: no counterkit data file counterkit.db in DIR"},
		{"only an interrupted copy", func(d string) { write(filepath.Join(d, embedded.CopyTempName), "partial") }, "crdt.ErrMisconfiguredStore",
			"embedded: DIR holds only an interrupted backup or compaction (counterkit.db.copy), not a store: counterkit: store misconfigured"},
		{"a file", func(d string) { write(d, "not a directory") }, "crdt.ErrNotFound",
			"counterkit: not found: no counterkit data file counterkit.db in DIR (DIR is a file, not a directory)"},
		{"a link to nothing", func(d string) {
			require.NoError(t, os.MkdirAll(d, 0o755))
			if err := os.Symlink(filepath.Join(d, "gone"), filepath.Join(d, embedded.FileName)); err != nil {
				t.Skip("no symbolic links:", err)
			}
		}, "crdt.ErrMisconfiguredStore", "embedded: DIR/counterkit.db is a symbolic link to nothing: counterkit: store misconfigured"},
		{"a directory as data file", func(d string) { require.NoError(t, os.MkdirAll(filepath.Join(d, embedded.FileName), 0o755)) },
			"crdt.ErrMisconfiguredStore", "embedded: DIR/counterkit.db is not a regular file"},
		{"an empty data file", func(d string) { write(filepath.Join(d, embedded.FileName), "") }, "crdt.ErrCorruptEncoding",
			"embedded: DIR/counterkit.db is empty (truncated?): counterkit: corrupt encoding"},
		{"a data file of garbage", func(d string) { write(filepath.Join(d, embedded.FileName), strings.Repeat("counterkit", 8000)) },
			"crdt.ErrCorruptEncoding", "embedded: DIR/counterkit.db is not a readable data file: counterkit: corrupt encoding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			tc.make(dir)
			emb := "embedded:" + dir
			var messages []string
			for _, args := range [][]string{{"get", "-store", emb, "-type", "gcounter", "views"}, {"list", "-store", emb}} {
				code, out, errOut := runCmd(t, "", args...)
				require.Equal(t, 1, code, "%s: %s", args[0], errOut)
				require.Empty(t, out, args[0])
				msg, ok := strings.CutPrefix(errOut, "counterkit "+args[0]+": ")
				require.True(t, ok, errOut)
				msg = strings.ReplaceAll(msg, dir, "DIR")
				require.True(t, strings.HasSuffix(msg, " ("+tc.sentinel+")\n"), "%s: %s", args[0], errOut)
				require.True(t, strings.HasPrefix(msg, tc.message), "%s: %s", args[0], errOut)
				messages = append(messages, msg)
			}
			require.Equal(t, messages[0], messages[1], "get and list word it differently")
		})
	}
}

// stats counts the bytes of the buckets the engine stores inline, inside
// its parent's page (the fixture's siblings and meta are small enough),
// and says that they are inline instead of showing 0 bytes in use.
func TestStatsInlineBuckets(t *testing.T) {
	dir := fixture(t)
	code, out, errOut := runCmd(t, "", "stats", "-store", "embedded:"+dir, "-o", "json")
	require.Equal(t, 0, code, errOut)
	var s engineStats
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	byName := map[string]bucketStats{}
	for _, b := range s.Buckets {
		byName[b.Name] = b
	}
	for _, name := range []string{"siblings", "meta"} {
		b := byName[name]
		require.True(t, b.Inline, "%s: %+v", name, b)
		require.Positive(t, b.Keys, name)
		require.Zero(t, b.LeafPages, name)
		require.Zero(t, b.BytesAllocated, name)
		// The page header, an element header per key, the keys and values.
		require.Greater(t, b.BytesInUse, 16+16*b.Keys, "%s: %+v", name, b)
	}
	require.Contains(t, out, `"inline": true`)
	rows := byName["rows"]
	require.False(t, rows.Inline, "%+v", rows)
	require.Equal(t, 1, rows.LeafPages)
	require.Equal(t, s.PageSize, rows.BytesAllocated)

	code, out, errOut = runCmd(t, "", "stats", "-store", "embedded:"+dir)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, fmt.Sprintf(`\n +siblings +%d +1 +0 +0 +%d +inline\n`, byName["siblings"].Keys, byName["siblings"].BytesInUse), out)
	require.Regexp(t, fmt.Sprintf(`\n +rows +%d +1 +1 +0 +%d +%d\n`, rows.Keys, rows.BytesInUse, s.PageSize), out)
	require.Contains(t, out, "\ninline: a small bucket the engine stores inside its parent's page")
}

// withDeadline turns a panic or memory fault into crdt.ErrCorruptEncoding
// and a hang into an error once the context ends.
func TestWithDeadline(t *testing.T) {
	err := withDeadline(context.Background(), func() error { panic("bad page") })
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	block := make(chan struct{})
	defer close(block)
	err = withDeadline(ctx, func() error { <-block; return nil })
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.Contains(t, err.Error(), "not read within -timeout")
}

// list, stats and check on files that are not intact stores fail with an
// error (exit 1), never a crash or a wrong listing.
func TestEmbeddedCommandsOnDamagedFiles(t *testing.T) {
	good := fixture(t)
	data, err := os.ReadFile(filepath.Join(good, embedded.FileName))
	require.NoError(t, err)
	// The engine's file is longer than the part in use (it grows in
	// steps): cut the part in use.
	code, out, errOut := runCmd(t, "", "stats", "-store", "embedded:"+good, "-o", "json")
	require.Equal(t, 0, code, errOut)
	var st engineStats
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	require.Less(t, int64(8192), st.DataBytes)
	for name, content := range map[string][]byte{
		"garbage":   []byte(strings.Repeat("counterkit", 8000)),
		"truncated": data[:st.DataBytes/2],
		"header":    data[:4096],
	} {
		dir := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, embedded.FileName), content, 0o600))
		for _, cmd := range []string{"list", "stats"} {
			code, out, errOut := runCmd(t, "", cmd, "-store", "embedded:"+dir, "-timeout", "20s")
			require.Equal(t, 1, code, "%s %s: %s%s", name, cmd, out, errOut)
			require.Empty(t, out)
			require.Regexp(t, `\(crdt\.Err(CorruptEncoding|MisconfiguredStore)\)\n$`, errOut, name)
		}
		code, _, errOut := runCmd(t, "", "check", "embedded", "-store", "embedded:"+dir, "-timeout", "20s")
		require.Equal(t, 1, code, "%s: %s", name, errOut)
	}
}

// list, stats and compact embedded word a missing data file and a store a
// running service holds the same way, with the adapter's sentinel.
func TestEmbeddedCommandsMissingAndLocked(t *testing.T) {
	missing := t.TempDir()
	dir := fixture(t)
	db, err := embedded.Open(dir, embedded.Options{LockTimeout: time.Millisecond})
	require.NoError(t, err)
	defer db.Close()
	for _, cmd := range [][]string{{"list"}, {"stats"}, {"compact", "embedded", "-to", filepath.Join(t.TempDir(), "c")}} {
		code, _, errOut := runCmd(t, "", append(cmd, "-store", "embedded:"+missing)...)
		require.Equal(t, 1, code, errOut)
		require.Contains(t, errOut, "no counterkit data file counterkit.db in "+missing+" (crdt.ErrNotFound)", cmd)
		code, _, errOut = runCmd(t, "", append(cmd, "-store", "embedded:"+dir)...)
		require.Equal(t, 1, code, errOut)
		require.Contains(t, errOut, "(a running service holds "+dir+": stop it first) (embedded.ErrLocked, crdt.ErrUnavailable)", cmd)
	}
}

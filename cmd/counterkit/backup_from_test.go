package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/embedded"
)

const backupPath = "/debug/counterkit/backup"

// serve runs a service's administrative mux with the backup handler of db.
func serve(t *testing.T, db *embedded.DB) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("GET "+backupPath, db.BackupHandler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + backupPath
}

// backup -from downloads a running service's copy while writers keep
// writing: the copy holds every write acknowledged before the command
// started, opens, verifies, and reads back as the store does.
func TestBackupFromService(t *testing.T) {
	dir := fixture(t)
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	defer db.Close()
	url := serve(t, db)
	ctx := context.Background()

	const writers = 4
	var acked [writers]atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := db.Siblings().Put(ctx, fmt.Sprintf("w%d-%d", g, i), "a", []byte(fmt.Sprint(i)), nil); err != nil {
					t.Error(err)
					return
				}
				acked[g].Store(int64(i + 1))
			}
		}()
	}
	for g := range writers {
		for deadline := time.Now().Add(time.Minute); acked[g].Load() < 5; time.Sleep(time.Millisecond) {
			if t.Failed() || time.Now().After(deadline) { // a writer failed, or stalls
				close(stop)
				wg.Wait()
				t.Fatalf("waiting for writer %d (%d writes acknowledged, want 5 before the backup): a writer failed or stalls", g, acked[g].Load())
			}
		}
	}
	var before [writers]int64
	for g := range writers {
		before[g] = acked[g].Load()
	}
	to := filepath.Join(t.TempDir(), "backup")
	code, out, errOut := runCmd(t, "", "backup", "-from", url, "-to", to)
	var after [writers]int64
	for g := range writers {
		after[g] = acked[g].Load()
	}
	close(stop)
	wg.Wait()
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `^backed up `+url+` into `+to+`: \d+ keys, verified\n$`, out)

	cp, err := embedded.Open(to, embedded.Options{})
	require.NoError(t, err)
	require.NoError(t, cp.Verify())
	total := 0
	for g := range writers {
		n := int64(0)
		for ; ; n++ {
			v, _, err := cp.Siblings().Fetch(ctx, fmt.Sprintf("w%d-%d", g, n))
			require.NoError(t, err)
			if len(v) == 0 {
				break
			}
			require.Equal(t, fmt.Sprint(n), string(v[0]))
		}
		require.GreaterOrEqual(t, n, before[g], "writer %d: writes acknowledged before the backup are missing", g)
		// Each writer has at most one Put in flight: durable, and so
		// possibly in the copy, before its acknowledgement is counted.
		require.LessOrEqual(t, n, after[g]+1, "writer %d: the copy holds writes never made", g)
		t.Logf("writer %d: %d writes in the copy, %d acknowledged before, %d after", g, n, before[g], after[g])
		total += int(n)
	}
	require.Contains(t, out, fmt.Sprintf(": %d keys, verified", 11+total))
	require.NoError(t, cp.Close())

	// The fixture's keys read back from the copy as from the store.
	require.NoError(t, db.Close())
	for _, k := range []struct{ typ, key string }{
		{"ledger", "acct-1"}, {"gcounter", "views"}, {"pncounter", "temp"},
		{"tally", "pageviews"}, {"deltalog", "dl-1"}, {"balance", "seller-1"}, {"deltalog", "dl-2"},
	} {
		_, want, _ := runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", k.typ, k.key)
		code, got, errOut := runCmd(t, "", "get", "-store", "embedded:"+to, "-type", k.typ, k.key)
		require.Equal(t, 0, code, errOut)
		require.Equal(t, strings.ReplaceAll(want, dir, to), got, k.key)
	}
}

// badServer serves body with the headers a backup handler sends; length
// is the Content-Length to announce (-1: none); cut, if positive, aborts
// the response after that many bytes.
func badServer(t *testing.T, body []byte, length, cut int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		if length >= 0 {
			w.Header().Set("Content-Length", strconv.Itoa(length))
		}
		if cut > 0 {
			w.Write(body[:cut])
			panic(http.ErrAbortHandler)
		}
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + backupPath
}

// downloads are what a -from URL may deliver instead of a whole copy, and
// the sentinel the command must report for each.
func downloads(t *testing.T) []struct {
	name, url, want string
	damage          bool // the bytes arrive, damaged: only the check refuses them
} {
	dir := fixture(t)
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = db.WriteBackup(context.Background(), &buf)
	require.NoError(t, err)
	good := buf.Bytes()
	vals, _, err := db.Siblings().Fetch(context.Background(), "temp")
	require.NoError(t, err)
	flipped := bytes.ReplaceAll(good, vals[0], append(vals[0][:len(vals[0])-1:len(vals[0])-1], vals[0][len(vals[0])-1]^0xff))
	require.NotEqual(t, good, flipped)
	live := serve(t, db)
	closed := func() string { // a service whose DB is closed
		db2, err := embedded.Open(t.TempDir(), embedded.Options{})
		require.NoError(t, err)
		u := serve(t, db2)
		db2.Close()
		return u
	}()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html>status page</html>")
	}))
	t.Cleanup(html.Close)
	return []struct {
		name, url, want string
		damage          bool
	}{
		{"cut short", badServer(t, good, len(good), len(good)/2), "was cut short after", false},
		{"truncated, no length", badServer(t, good[:len(good)/2], -1, 0), "crdt.ErrCorruptEncoding", true},
		{"last page missing, no length", badServer(t, good[:len(good)-4096], -1, 0), "crdt.ErrCorruptEncoding", true},
		{"flipped value", badServer(t, flipped, len(flipped), 0), "crdt.ErrCorruptEncoding", true},
		{"not a store", badServer(t, bytes.Repeat([]byte("x"), 8192), 8192, 0), "crdt.ErrCorruptEncoding", true},
		{"closed DB", closed, "503 Service Unavailable: counterkit: store unavailable: embedded: database closed (crdt.ErrUnavailable)", false},
		{"wrong path", strings.TrimSuffix(live, backupPath) + "/nope", "404 Not Found", false},
		{"not the handler", html.URL, "not a backup (application/octet-stream)", false},
		{"nobody listening", "http://127.0.0.1:1/backup", "crdt.ErrUnavailable", false},
	}
}

// Every download that is not a whole copy is refused, exit 1 with its
// sentinel, and leaves nothing in or beside the target.
func TestBackupFromRefusesBadDownloads(t *testing.T) {
	for _, d := range downloads(t) {
		parent := t.TempDir()
		to := filepath.Join(parent, "backup")
		code, out, errOut := runCmd(t, "", "backup", "-from", d.url, "-to", to, "-timeout", "30s")
		require.Equal(t, 1, code, "%s: %s", d.name, errOut)
		require.Empty(t, out, d.name)
		require.Contains(t, errOut, d.want, d.name)
		require.Regexp(t, `\(crdt\.\w+\)\n$`, errOut, d.name)
		entries, err := os.ReadDir(parent)
		require.NoError(t, err)
		require.Empty(t, entries, "%s left files", d.name)
		t.Logf("%s: %s", d.name, strings.TrimSpace(errOut))
	}
}

// A restore that does not check the copy takes every damaged download
// for a backup: the refusals above come from the check.
func TestBackupFromCatchesUncheckedRestore(t *testing.T) {
	defer func(f func(context.Context, io.Reader, string) (int64, error)) { restoreBackup = f }(restoreBackup)
	restoreBackup = func(ctx context.Context, r io.Reader, dir string) (int64, error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
		f, err := os.Create(filepath.Join(dir, embedded.FileName))
		if err != nil {
			return 0, err
		}
		defer f.Close()
		return io.Copy(f, r)
	}
	accepted := 0
	for _, d := range downloads(t) {
		if !d.damage {
			continue
		}
		to := filepath.Join(t.TempDir(), "backup")
		code, _, errOut := runCmd(t, "", "backup", "-from", d.url, "-to", to, "-timeout", "30s")
		_, statErr := os.Stat(filepath.Join(to, embedded.FileName))
		if code == 0 || statErr == nil {
			accepted++ // a damaged copy stored, or reported as a backup
		}
		t.Logf("%s: exit %d, copy kept: %v: %s", d.name, code, statErr == nil, strings.TrimSpace(errOut))
	}
	require.Equal(t, 4, accepted, "without the check every damaged download is kept")
}

// backup -from never overwrites: a target holding a store or any file is
// a usage error, and stays as it was.
func TestBackupFromRefusesNonEmptyTarget(t *testing.T) {
	dir := fixture(t)
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	defer db.Close()
	url := serve(t, db)

	existing := fixture(t)
	before, err := os.ReadFile(filepath.Join(existing, embedded.FileName))
	require.NoError(t, err)
	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, "notes"), []byte("mine"), 0o600))
	for _, to := range []string{existing, other} {
		code, out, errOut := runCmd(t, "", "backup", "-from", url, "-to", to)
		require.Equal(t, 2, code, errOut)
		require.Empty(t, out)
		require.Contains(t, errOut, "is not empty (crdt.ErrInvalidConfig)")
	}
	after, err := os.ReadFile(filepath.Join(existing, embedded.FileName))
	require.NoError(t, err)
	require.Equal(t, before, after)
	notes, err := os.ReadFile(filepath.Join(other, "notes"))
	require.NoError(t, err)
	require.Equal(t, "mine", string(notes))

	// An empty directory is taken; JSON output.
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	code, out, errOut := runCmd(t, "", "backup", "--from", url, "--to", empty, "-o", "json")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"keys": 11`)
	require.Contains(t, out, `"bytes": `)

	// The program runs backup -from in a child process (isolate): the
	// same outcome through it.
	var o, e strings.Builder
	child := filepath.Join(t.TempDir(), "child")
	require.Equal(t, 0, runIsolated([]string{"backup", "-from", url, "-to", child}, strings.NewReader(""), &o, &e), e.String())
	require.Equal(t, "backed up "+url+" into "+child+": 11 keys, verified\n", o.String())
}

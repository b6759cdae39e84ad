package embedded_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
)

// streamOf returns a backup stream of a store holding fill(tag, n).
func streamOf(t *testing.T, tag string, n int) []byte {
	t.Helper()
	db, _ := openTemp(t, embedded.Options{})
	fill(t, db, tag, n)
	var buf bytes.Buffer
	if _, err := db.WriteBackup(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// damagedStreams are copies of good a download may deliver instead: cut
// short at page boundaries and elsewhere, a stored value with a flipped
// byte, another file.
func damagedStreams(t *testing.T, good []byte, value []byte) map[string][]byte {
	out := map[string][]byte{
		"empty":     {},
		"100 bytes": good[:100],
		"one page":  good[:4096],
		"two pages": good[:8192],
		"half":      good[:len(good)/2],
		"last page": good[:len(good)-4096],
		"last byte": good[:len(good)-1],
		"not a db":  bytes.Repeat([]byte("counterkit"), 1000),
	}
	flipped := bytes.Clone(good)
	n := 0
	for i := bytes.Index(flipped, value); i >= 0; {
		flipped[i+len(value)/2] ^= 0x20
		n++
		j := bytes.Index(flipped[i+1:], value)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	if n == 0 {
		t.Fatal("the value is not in the stream")
	}
	out["flipped value"] = flipped
	return out
}

// Restore refuses every damaged or truncated copy with
// crdt.ErrCorruptEncoding (crdt.ErrMisconfiguredStore for a file of
// another program), leaves no directory behind, and creates the store
// from the whole copy.
func TestRestoreRefusesDamage(t *testing.T) {
	t.Parallel()
	good := streamOf(t, "d", 30)
	ctx := context.Background()
	base := t.TempDir()
	for name, b := range damagedStreams(t, good, payload("d7")) {
		dir := filepath.Join(base, strings.ReplaceAll(name, " ", "-"))
		_, err := embedded.Restore(ctx, bytes.NewReader(b), dir)
		if errors.Is(err, crdt.ErrMisconfiguredStore) && name == "not a db" {
			t.Logf("%s: refused, as wanted: %v", name, err)
		} else {
			wantErr(t, err, crdt.ErrCorruptEncoding)
		}
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s: a refused copy left %s (%v)", name, dir, err)
		}
	}
	// A reader that fails: crdt.ErrUnavailable.
	_, err := embedded.Restore(ctx, io.MultiReader(bytes.NewReader(good[:len(good)/2]), iotest.ErrReader(io.ErrUnexpectedEOF)), filepath.Join(base, "cut"))
	wantErr(t, err, crdt.ErrUnavailable, io.ErrUnexpectedEOF)
	if entries, _ := os.ReadDir(base); len(entries) != 0 {
		t.Fatalf("refused copies left %s", entries[0].Name())
	}

	dir := filepath.Join(base, "good")
	n, err := embedded.Restore(ctx, bytes.NewReader(good), dir)
	if err != nil || n != int64(len(good)) {
		t.Fatalf("the whole copy: %d bytes, %v", n, err)
	}
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	intact(t, db, "d", 30)
}

// Without its check, Restore would take the damaged copies for stores:
// the damage above is real, and the check is what refuses it.
func TestRestoreCheckCatchesDamage(t *testing.T) {
	good := streamOf(t, "d", 30)
	undo := embedded.SetRestoreUnchecked(true)
	defer undo()
	accepted := 0
	for name, b := range damagedStreams(t, good, payload("d7")) {
		if name == "empty" {
			continue // refused before the check
		}
		if _, err := embedded.Restore(context.Background(), bytes.NewReader(b), filepath.Join(t.TempDir(), "x")); err == nil {
			accepted++
		}
	}
	if accepted != 8 {
		t.Fatalf("without the check %d of 8 damaged copies were restored, want all", accepted)
	}
}

// Restore never overwrites: a directory holding a store or any file is
// refused with crdt.ErrInvalidConfig and left as it was.
func TestRestoreRefusesNonEmptyTarget(t *testing.T) {
	t.Parallel()
	good := streamOf(t, "n", 5)
	ctx := context.Background()

	db, dir := openTemp(t, embedded.Options{})
	fill(t, db, "old", 3)
	db.Close()
	before, err := os.ReadFile(filepath.Join(dir, embedded.FileName))
	if err != nil {
		t.Fatal(err)
	}
	_, err = embedded.Restore(ctx, bytes.NewReader(good), dir)
	wantErr(t, err, crdt.ErrInvalidConfig)
	if after, _ := os.ReadFile(filepath.Join(dir, embedded.FileName)); !bytes.Equal(before, after) {
		t.Fatal("Restore changed the store it refused")
	}

	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "notes"), []byte("mine"), 0o600)
	_, err = embedded.Restore(ctx, bytes.NewReader(good), other)
	wantErr(t, err, crdt.ErrInvalidConfig)
	if b, _ := os.ReadFile(filepath.Join(other, "notes")); string(b) != "mine" {
		t.Fatal("Restore changed a file it refused")
	}

	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	_, err = embedded.Restore(ctx, bytes.NewReader(good), file)
	wantErr(t, err, crdt.ErrInvalidConfig)

	// An empty directory is taken.
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := embedded.Restore(ctx, bytes.NewReader(good), empty); err != nil {
		t.Fatal(err)
	}
	cp, err := embedded.Open(empty, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	intact(t, cp, "n", 5)
	if entries, _ := os.ReadDir(filepath.Dir(empty)); len(entries) != 1 {
		t.Fatalf("%d entries beside the restored directory, want none", len(entries)-1)
	}
}

// failAfter is a ResponseWriter whose body fails after n bytes (a client
// that went away).
type failAfter struct {
	*httptest.ResponseRecorder
	n int
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("connection reset")
	}
	return f.ResponseRecorder.Write(p)
}

// The handler serves GET only, 503 on a closed DB, and aborts a response
// it cannot finish, so that no client takes a short copy for a whole one.
func TestBackupHandlerRefusals(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t, embedded.Options{})
	fill(t, db, "h", 20)
	h := db.BackupHandler()

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/backup", nil))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET" {
		t.Fatalf("POST: %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
	}

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/backup", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Length") != fmt.Sprint(rec.Body.Len()) {
		t.Fatalf("GET: %d, Content-Length %q, %d bytes", rec.Code, rec.Header().Get("Content-Length"), rec.Body.Len())
	}

	aborted := func() (r any) {
		defer func() { r = recover() }()
		h.ServeHTTP(&failAfter{httptest.NewRecorder(), 8192}, httptest.NewRequest(http.MethodGet, "/backup", nil))
		return nil
	}()
	if aborted != http.ErrAbortHandler {
		t.Fatalf("a failed body: recovered %v, want http.ErrAbortHandler", aborted)
	}

	db.Close()
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/backup", nil))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "database closed") {
		t.Fatalf("closed DB: %d %q", rec.Code, rec.Body.String())
	}
	_, err := db.WriteBackup(context.Background(), io.Discard)
	wantErr(t, err, embedded.ErrClosed)
}

// cancelAtEOF cancels a context when its reader is read to the end: the
// copy is whole, and the context ends while Restore checks it.
type cancelAtEOF struct {
	r      io.Reader
	cancel context.CancelFunc
}

func (c cancelAtEOF) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		c.cancel()
	}
	return n, err
}

// TestRestoreStopsWithItsContext: a context that ends while Restore checks
// a whole copy ends the restore with its error before the copy becomes
// dir, and leaves nothing behind (a command interrupted then writes
// nothing).
func TestRestoreStopsWithItsContext(t *testing.T) {
	good := streamOf(t, "v", 50)
	parent := t.TempDir()
	dir := filepath.Join(parent, "restored")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := embedded.Restore(ctx, cancelAtEOF{bytes.NewReader(good), cancel}, dir)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Restore with its context ended during the check: %v, want context.Canceled", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}

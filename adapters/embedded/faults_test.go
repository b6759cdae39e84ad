package embedded_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	bolt "go.etcd.io/bbolt"
)

const envFaultChild = "COUNTERKIT_EMBEDDED_FAULT_CHILD"

// fill writes n siblings and n rows of known payloads.
func fill(t *testing.T, db *embedded.DB, tag string, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		id := fmt.Sprintf("%s%d", tag, i)
		if err := db.Siblings().Put(ctx, "key-"+id, "a", payload(id), nil); err != nil {
			t.Fatal(err)
		}
		if err := db.Partitions().Apply(ctx, []store.Mutation{{Partition: "part", Op: store.OpPut,
			Key: []byte(id), Value: payload(id), Timestamp: tsBase + int64(i)}}); err != nil {
			t.Fatal(err)
		}
	}
}

// intact checks that every value fill wrote is there.
func intact(t *testing.T, db *embedded.DB, tag string, n int) {
	t.Helper()
	ctx := context.Background()
	rows, err := db.Partitions().Snapshot(ctx, "part", 1<<20, store.ReadComplete)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, r := range rows {
		have[string(r.Key)] = bytes.Equal(r.Value, payload(string(r.Key)))
	}
	for i := range n {
		id := fmt.Sprintf("%s%d", tag, i)
		vals, _, err := db.Siblings().Fetch(ctx, "key-"+id)
		if err != nil {
			t.Fatal(err)
		}
		if len(vals) != 1 || !bytes.Equal(vals[0], payload(id)) {
			t.Fatalf("sibling %s: %d values, want its payload", id, len(vals))
		}
		if !have[id] {
			t.Fatalf("row %s missing or damaged", id)
		}
	}
	if err := db.Verify(); err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, err error, sentinels ...error) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one wrapping %v", sentinels)
	}
	for _, s := range sentinels {
		if !errors.Is(err, s) {
			t.Fatalf("error %q does not wrap %q", err, s)
		}
	}
	t.Logf("error (as wanted): %v", err)
}

func TestReopenKeepsData(t *testing.T) {
	t.Parallel()
	db, dir := openTemp(t, embedded.Options{})
	fill(t, db, "x", 50)
	db.Close()
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	intact(t, db, "x", 50)
}

func TestSecondOpenInThisProcessIsLocked(t *testing.T) {
	t.Parallel()
	_, dir := openTemp(t, embedded.Options{})
	_, err := embedded.Open(dir, embedded.Options{})
	wantErr(t, err, embedded.ErrLocked, crdt.ErrUnavailable)
}

// TestSecondProcessIsLocked opens a directory here and again in a child
// process, which must get ErrLocked.
func TestSecondProcessIsLocked(t *testing.T) {
	t.Parallel()
	db, dir := openTemp(t, embedded.Options{})
	fill(t, db, "l", 5)
	out := runChild(t, "lock", dir, nil)
	if !strings.Contains(out, "locked=true unavailable=true") {
		t.Fatalf("child: %s", out)
	}
	intact(t, db, "l", 5)
}

// runChild runs TestFaultChild in a child process with the given mode and
// directory and returns its output.
func runChild(t *testing.T, mode, dir string, attr *syscall.SysProcAttr, extra ...string) string {
	t.Helper()
	bin := os.Args[0]
	if len(extra) > 0 {
		bin = extra[0]
	}
	cmd := exec.Command(bin, "-test.run=^TestFaultChild$", "-test.v=false")
	cmd.Env = append(os.Environ(), envFaultChild+"="+mode+":"+dir)
	cmd.SysProcAttr = attr
	out, err := cmd.CombinedOutput()
	if attr != nil && errors.Is(err, syscall.EPERM) {
		t.Skipf("cannot start a child as another user here: %v", err)
	}
	if err != nil {
		t.Fatalf("child %s: %v\n%s", mode, err, out)
	}
	t.Logf("child %s: %s", mode, bytes.TrimSpace(out))
	return string(out)
}

// TestFaultChild is the child side of the tests that need another process.
func TestFaultChild(t *testing.T) {
	mode, dir, ok := strings.Cut(os.Getenv(envFaultChild), ":")
	if !ok {
		t.Skip("runs only as a child of the fault tests")
	}
	switch mode {
	case "lock":
		_, err := embedded.Open(dir, embedded.Options{})
		fmt.Printf("locked=%v unavailable=%v err=%v\n", errors.Is(err, embedded.ErrLocked), errors.Is(err, crdt.ErrUnavailable), err)
	case "readonly":
		_, err := embedded.Open(dir, embedded.Options{})
		fmt.Printf("unavailable=%v permission=%v err=%v\n", errors.Is(err, crdt.ErrUnavailable), errors.Is(err, fs.ErrPermission), err)
	case "diskfull":
		diskFullChild(dir)
	case "firstopen":
		firstOpenChild(dir)
	}
}

func TestForeignDirectoryIsRefused(t *testing.T) {
	t.Parallel()
	t.Run("other files", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600)
		_, err := embedded.Open(dir, embedded.Options{})
		wantErr(t, err, crdt.ErrMisconfiguredStore)
		if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "mine" {
			t.Fatal("the foreign file changed")
		}
		if _, err := os.Stat(filepath.Join(dir, embedded.FileName)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatal("Open created a data file in a foreign directory")
		}
	})
	t.Run("not a database", func(t *testing.T) {
		dir := t.TempDir()
		junk := bytes.Repeat([]byte("this is not a database "), 2000)
		os.WriteFile(filepath.Join(dir, embedded.FileName), junk, 0o600)
		_, err := embedded.Open(dir, embedded.Options{})
		wantErr(t, err, crdt.ErrCorruptEncoding)
		if b, _ := os.ReadFile(filepath.Join(dir, embedded.FileName)); !bytes.Equal(b, junk) {
			t.Fatal("the foreign file changed")
		}
	})
	t.Run("another program's bbolt file", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, embedded.FileName)
		b, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		b.Update(func(tx *bolt.Tx) error {
			bk, _ := tx.CreateBucket([]byte("theirs"))
			return bk.Put([]byte("k"), []byte("v"))
		})
		b.Close()
		_, err = embedded.Open(dir, embedded.Options{})
		wantErr(t, err, crdt.ErrMisconfiguredStore)
	})
	t.Run("newer format", func(t *testing.T) {
		db, dir := openTemp(t, embedded.Options{})
		db.Close()
		b, err := bolt.Open(filepath.Join(dir, embedded.FileName), 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		b.Update(func(tx *bolt.Tx) error {
			m := tx.Bucket([]byte("meta"))
			f := append([]byte(nil), m.Get([]byte("format"))...)
			binary.BigEndian.PutUint16(f[len(f)-2:], embedded.FormatVersion+1)
			return m.Put([]byte("format"), f)
		})
		b.Close()
		_, err = embedded.Open(dir, embedded.Options{})
		wantErr(t, err, crdt.ErrUnsupportedVersion)
	})
	t.Run("empty data file", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, embedded.FileName), nil, 0o600)
		_, err := embedded.Open(dir, embedded.Options{})
		wantErr(t, err, crdt.ErrCorruptEncoding)
	})
}

func TestLeftOverNewFileIsReplaced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, embedded.FileName+".new"), []byte("half-made"), 0o600)
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fill(t, db, "n", 3)
	intact(t, db, "n", 3)
}

func TestTruncatedFileIsRefused(t *testing.T) {
	t.Parallel()
	db, dir := openTemp(t, embedded.Options{})
	fill(t, db, "t", 150)
	db.Close()
	path := filepath.Join(dir, embedded.FileName)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// (The file's tail past the engine's high-water mark is unused space:
	// cutting it off is no damage, so the cuts are well inside.)
	for _, n := range []int{len(orig) / 2, len(orig) / 4, 8192, 5000, 100} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			if err := os.WriteFile(path, orig[:n], 0o600); err != nil {
				t.Fatal(err)
			}
			db, err := embedded.Open(dir, embedded.Options{})
			if err == nil {
				db.Close()
			}
			wantErr(t, err, crdt.ErrCorruptEncoding)
		})
	}
	// The whole file again: nothing was lost by the refusals.
	if err := os.WriteFile(path, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err = embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	intact(t, db, "t", 150)
}

func TestCorruptedBytesAreReported(t *testing.T) {
	t.Parallel()
	db, dir := openTemp(t, embedded.Options{})
	fill(t, db, "c", 20)
	db.Close()
	path := filepath.Join(dir, embedded.FileName)
	orig, _ := os.ReadFile(path)
	ctx := context.Background()

	t.Run("a value", func(t *testing.T) {
		b := bytes.Clone(orig)
		p := payload("c7")
		for i := 0; ; i++ { // every copy: the sibling and the row
			j := bytes.Index(b, p)
			if j < 0 {
				if i == 0 {
					t.Fatal("payload not found in the file")
				}
				break
			}
			b[j+len(p)-3] ^= 0x20
		}
		os.WriteFile(path, b, 0o600)
		// Open checks every entry against its bucket's digest.
		_, err := embedded.Open(dir, embedded.Options{})
		wantErr(t, err, crdt.ErrCorruptEncoding)
		// Without that check, the value's own checksum reports it.
		db, err := embedded.Open(dir, embedded.UncheckedOptions(embedded.Options{}))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_, _, err = db.Siblings().Fetch(ctx, "key-c7")
		wantErr(t, err, crdt.ErrCorruptEncoding)
		_, err = db.Partitions().Snapshot(ctx, "part", 100, store.ReadComplete)
		wantErr(t, err, crdt.ErrCorruptEncoding)
		err = db.Partitions().Scan(ctx, "part", nil, store.ReadComplete, func(store.Row) bool { return true })
		wantErr(t, err, crdt.ErrCorruptEncoding)
		wantErr(t, db.Verify(), crdt.ErrCorruptEncoding)
		// The other values are still served.
		if v, _, err := db.Siblings().Fetch(ctx, "key-c8"); err != nil || len(v) != 1 || !bytes.Equal(v[0], payload("c8")) {
			t.Fatalf("undamaged sibling: %q, %v", v, err)
		}
	})
	t.Run("both meta pages", func(t *testing.T) {
		b := bytes.Clone(orig)
		for _, off := range []int{16 + 4, 4096 + 16 + 4} {
			b[off] ^= 0xff
		}
		os.WriteFile(path, b, 0o600)
		_, err := embedded.Open(dir, embedded.Options{})
		wantErr(t, err, crdt.ErrCorruptEncoding)
	})
	t.Run("a page header", func(t *testing.T) {
		// The first page after the metas and the freelist holds
		// buckets; damage its header so that the engine's check fails.
		b := bytes.Clone(orig)
		for pg := 2; pg*4096 < len(b); pg++ {
			b[pg*4096+8] ^= 0x5a // the page's flags
		}
		os.WriteFile(path, b, 0o600)
		db, err := embedded.Open(dir, embedded.Options{})
		if err != nil {
			wantErr(t, err, crdt.ErrCorruptEncoding)
			return
		}
		defer db.Close()
		wantErr(t, db.Verify(), crdt.ErrCorruptEncoding)
	})
	os.WriteFile(path, orig, 0o600)
}

// TestDiskFull runs a child under a file size limit (RLIMIT_FSIZE) that
// the next growth of the data file exceeds: its writes must fail with a
// clear error, and what was stored before must survive.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	db, dir := openTemp(t, embedded.Options{})
	fill(t, db, "d", 50)
	db.Close()
	out := runChild(t, "diskfull", dir, nil)
	for _, want := range []string{"first-error ambiguous=true toolarge=true", "next-error unavailable=true", "reopen-ok"} {
		if !strings.Contains(out, want) {
			t.Fatalf("child output lacks %q:\n%s", want, out)
		}
	}
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	intact(t, db, "d", 50)
	// What the child acknowledged before the limit is there too.
	var acked int
	fmt.Sscanf(out[strings.Index(out, "acked="):], "acked=%d", &acked)
	intact(t, db, "full", acked)
}

func diskFullChild(dir string) {
	st, err := os.Stat(filepath.Join(dir, embedded.FileName))
	if err != nil {
		fmt.Println("stat:", err)
		return
	}
	lim := uint64(st.Size()) + 256<<10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
		fmt.Println("setrlimit:", err)
		return
	}
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		fmt.Println("open:", err)
		return
	}
	ctx := context.Background()
	acked := 0
	for i := 0; ; i++ {
		id := fmt.Sprintf("full%d", i)
		err := db.Siblings().Put(ctx, "key-"+id, "a", payload(id), nil)
		if err == nil {
			err = db.Partitions().Apply(ctx, []store.Mutation{{Partition: "part", Op: store.OpPut,
				Key: []byte(id), Value: payload(id), Timestamp: tsBase + int64(i)}})
		}
		if err != nil {
			// (bbolt reports the failed growth as text: the EFBIG is not
			// reachable with errors.Is.)
			fmt.Printf("acked=%d\nfirst-error ambiguous=%v toolarge=%v err=%v\n", acked, errors.Is(err, crdt.ErrAmbiguousWrite), strings.Contains(err.Error(), "file too large"), err)
			break
		}
		acked++
		if i > 100000 {
			fmt.Println("the limit never hit")
			return
		}
	}
	err = db.Siblings().Put(ctx, "after", "a", []byte("x"), nil)
	fmt.Printf("next-error unavailable=%v err=%v\n", errors.Is(err, crdt.ErrUnavailable), err)
	db.Close()
	// Reopening under the same limit works (reading needs no growth).
	db, err = embedded.Open(dir, embedded.Options{})
	if err != nil {
		fmt.Println("reopen:", err)
		return
	}
	if err := db.Verify(); err != nil {
		fmt.Println("verify:", err)
		return
	}
	db.Close()
	fmt.Println("reopen-ok")
}

// TestReadOnlyDirectory opens a data directory and a new directory that
// the process may not write. As root, permissions do not apply, so the
// check runs in a child process under the nobody user.
func TestReadOnlyDirectory(t *testing.T) {
	t.Parallel()
	base, err := os.MkdirTemp("", "embedded-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error { os.Chmod(p, 0o755); return nil })
		os.RemoveAll(base)
	})
	os.Chmod(base, 0o755)
	data := filepath.Join(base, "data")
	db, err := embedded.Open(data, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, db, "r", 10)
	db.Close()
	empty := filepath.Join(base, "empty")
	os.Mkdir(empty, 0o755)
	for _, p := range []string{data, empty} {
		os.Chmod(p, 0o555)
	}
	os.Chmod(filepath.Join(data, embedded.FileName), 0o444)
	missing := filepath.Join(empty, "sub")

	check := func(out string) {
		t.Helper()
		if !strings.Contains(out, "unavailable=true permission=true") {
			t.Fatalf("got %s", out)
		}
	}
	if os.Geteuid() != 0 {
		for _, d := range []string{data, empty, missing} {
			_, err := embedded.Open(d, embedded.Options{})
			wantErr(t, err, crdt.ErrUnavailable, fs.ErrPermission)
		}
	} else {
		// Copy the test binary where nobody may run it.
		bin := filepath.Join(base, "embedded.test")
		src, err := os.Open(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(dst, src)
		src.Close()
		dst.Close()
		attr := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		for _, d := range []string{data, empty, missing} {
			check(runChild(t, "readonly", d, attr, bin))
		}
	}
	// Nothing was lost.
	os.Chmod(data, 0o755)
	os.Chmod(filepath.Join(data, embedded.FileName), 0o600)
	db, err = embedded.Open(data, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	intact(t, db, "r", 10)
}

func TestClosedDB(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t, embedded.Options{})
	db.Close()
	ctx := context.Background()
	_, _, err := db.Siblings().Fetch(ctx, "k")
	wantErr(t, err, embedded.ErrClosed, crdt.ErrUnavailable)
	err = db.Siblings().Put(ctx, "k", "a", []byte("v"), nil)
	wantErr(t, err, embedded.ErrClosed)
	err = db.Partitions().Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 1}})
	wantErr(t, err, embedded.ErrClosed)
}

package embedded_test

// Scenario tests of Keys, ReadStats and Compact as an operator meets them:
// odd directories and targets, damaged files, locks held by this process
// and by another one, a cancelled context, a writer racing Compact, many
// keys, keys of every length the stores accept, and a compacted copy read
// back through the stores.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// dirState is what a directory holds: each entry's name, mode, size,
// modification time and, for a regular file, its bytes.
func dirState(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %d", path, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %x", data)
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return b.String()
}

// smallStore writes n siblings and n rows into a new store and returns
// its directory, closed.
func smallStore(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, db, "a", n)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// absent reports an error unless path does not exist.
func absent(path string) error {
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s exists (%v)", path, err)
	}
	return nil
}

// A directory that does not exist, a regular file (or a path under one),
// an empty directory and a directory of other files hold no data file:
// each call fails with
// crdt.ErrNotFound and creates nothing, neither the directory nor the
// target of Compact.
func TestAdvInspectNoStore(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	missing := filepath.Join(root, "missing")
	file := filepath.Join(root, "file")
	empty := filepath.Join(root, "empty")
	other := filepath.Join(root, "other")
	for _, err := range []error{os.WriteFile(file, []byte("not a store"), 0o600), os.Mkdir(empty, 0o755),
		os.Mkdir(other, 0o755), os.WriteFile(filepath.Join(other, "notes.txt"), []byte("x"), 0o600)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{missing, empty, other, filepath.Join(missing, "deeper"), file, filepath.Join(file, "deeper")} {
		before := dirState(t, root)
		to := filepath.Join(root, "to")
		for i, err := range []error{
			func() error { _, err := embedded.Keys(context.Background(), dir); return err }(),
			func() error { _, err := embedded.ReadStats(context.Background(), dir); return err }(),
			func() error { _, err := embedded.Compact(context.Background(), dir, to); return err }(),
		} {
			if !errors.Is(err, crdt.ErrNotFound) {
				t.Errorf("%s, call %d: %v, want crdt.ErrNotFound", dir, i, err)
			}
		}
		if after := dirState(t, root); after != before {
			t.Errorf("%s: the calls changed %s:\n%s\nwant\n%s", dir, root, after, before)
		}
	}
}

// Keys, ReadStats and a Compact into another directory leave the store's
// directory as it was (the data file's bytes and times, no lock or
// temporary file), and several at once all succeed: the engine's lock they
// take is shared.
func TestAdvInspectChangesNothing(t *testing.T) {
	t.Parallel()
	dir := smallStore(t, 20)
	before := dirState(t, dir)
	ctx := context.Background()
	want, err := embedded.Keys(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i % 3 {
			case 0:
				var got []embedded.KeyInfo
				if got, errs[i] = embedded.Keys(ctx, dir); errs[i] == nil && !slices.Equal(got, want) {
					errs[i] = fmt.Errorf("keys differ: %v", sameKeys(want, got))
				}
			case 1:
				_, errs[i] = embedded.ReadStats(ctx, dir)
			case 2:
				_, errs[i] = embedded.Compact(ctx, dir, filepath.Join(t.TempDir(), "copy"))
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d of %d at once: %v", i, len(errs), err)
		}
	}
	if after := dirState(t, dir); after != before {
		t.Fatalf("the store's directory changed:\n%s\nwant\n%s", after, before)
	}
}

// Compact refuses every target that is not a new or empty directory
// outside the store (the store's own directory under another spelling or
// through a symbolic link, its data file, a non-empty directory, a file, a
// dangling link) with crdt.ErrInvalidConfig or crdt.ErrUnavailable,
// changing neither the store nor the target; it writes a checked copy
// into a new directory whose parents do not exist yet, an empty directory
// reached through a symbolic link, and a new subdirectory of the store's
// directory, which the store then still opens.
func TestAdvCompactTargets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := smallStore(t, 10)
	root := filepath.Dir(dir)
	want, err := embedded.Keys(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(name string, f func(p string) error) string {
		p := filepath.Join(root, name)
		if err := f(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full := mk("full", func(p string) error {
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(p, "keep"), []byte("keep"), 0o600)
	})
	refused := []string{
		dir, dir + "/", dir + "/.", filepath.Join(dir, "..", "store"),
		mk("link-to-store", func(p string) error { return os.Symlink(dir, p) }),
		filepath.Join(dir, embedded.FileName),
		filepath.Join(dir, embedded.FileName, "x"),
		full,
		mk("file", func(p string) error { return os.WriteFile(p, []byte("x"), 0o600) }),
		mk("dangling", func(p string) error { return os.Symlink(filepath.Join(root, "nowhere"), p) }),
	}
	for _, to := range refused {
		before := dirState(t, root)
		_, err := embedded.Compact(ctx, dir, to)
		if !errors.Is(err, crdt.ErrInvalidConfig) && !errors.Is(err, crdt.ErrUnavailable) {
			t.Errorf("compact into %s: %v, want crdt.ErrInvalidConfig or crdt.ErrUnavailable", to, err)
		}
		if after := dirState(t, root); after != before {
			t.Errorf("compact into %s changed %s:\n%s\nwant\n%s", to, root, after, before)
		}
	}
	emptyDir := mk("empty", func(p string) error { return os.Mkdir(p, 0o755) })
	accepted := []string{
		filepath.Join(root, "new", "parents", "copy"),
		mk("link-to-empty", func(p string) error { return os.Symlink(emptyDir, p) }),
		filepath.Join(dir, "compacted"),
	}
	for _, to := range accepted {
		orig := dirState(t, filepath.Join(dir, embedded.FileName))
		res, err := embedded.Compact(ctx, dir, to)
		if err != nil {
			t.Errorf("compact into %s: %v", to, err)
			continue
		}
		got, err := embedded.Keys(ctx, to)
		if err != nil || !slices.Equal(got, want) || res.Keys != len(want) {
			t.Errorf("the copy in %s: %+v, keys %v (%v)", to, res, sameKeys(want, got), err)
		}
		if entries, _ := os.ReadDir(to); len(entries) != 1 {
			t.Errorf("the copy in %s: %d files", to, len(entries))
		}
		if dirState(t, filepath.Join(dir, embedded.FileName)) != orig {
			t.Errorf("compact into %s changed the store's data file", to)
		}
	}
	if entries, _ := os.ReadDir(emptyDir); len(entries) != 1 {
		t.Errorf("the copy through a link: %d files in its target", len(entries))
	}
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatalf("the store with a copy in a subdirectory: %v", err)
	}
	intact(t, db, "a", 10)
	db.Close()
}

const envLockChild = "COUNTERKIT_EMBEDDED_ADV_LOCK_CHILD"

// TestAdvLockChild is the other process of TestAdvInspectLockedByProcess:
// it opens the store in the directory it is given, writes, says "ready"
// and holds the store until its standard input closes.
func TestAdvLockChild(t *testing.T) {
	dir := os.Getenv(envLockChild)
	if dir == "" {
		t.Skip("runs only as the child of TestAdvInspectLockedByProcess")
	}
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, db, "c", 5)
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n')
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// A store held by a DB in another process: Keys, ReadStats and Compact
// fail with ErrLocked (crdt.ErrUnavailable), leave the store as it was and
// write no copy; once the process exits they read what it wrote.
func TestAdvInspectLockedByProcess(t *testing.T) {
	t.Parallel()
	dir := smallStore(t, 3)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestAdvLockChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envLockChild+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	lines := bufio.NewScanner(out)
	for lines.Scan() && lines.Text() != "ready" {
	}
	if lines.Text() != "ready" {
		t.Fatalf("the child did not open the store: %v", lines.Err())
	}
	go func() {
		for lines.Scan() {
		}
	}()
	to := filepath.Join(t.TempDir(), "copy")
	before := dirState(t, dir)
	start := time.Now()
	for i, err := range inspectAll(dir) {
		if !errors.Is(err, embedded.ErrLocked) || !errors.Is(err, crdt.ErrUnavailable) {
			t.Errorf("call %d on a store another process holds: %v, want ErrLocked", i, err)
		}
	}
	if _, err := embedded.Compact(context.Background(), dir, to); !errors.Is(err, embedded.ErrLocked) {
		t.Errorf("compact of a store another process holds: %v", err)
	}
	t.Logf("4 refused calls took %v", time.Since(start))
	if err := absent(to); err != nil {
		t.Error(err)
	}
	if err := absent(dir + ".compacted"); err != nil {
		t.Error(err)
	}
	if after := dirState(t, dir); after != before {
		t.Error("the refused calls changed the store's directory")
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	keys, err := embedded.Keys(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(keys, func(k embedded.KeyInfo) bool { return k.Key == "key-c4" }) {
		t.Fatalf("the child's writes are not listed: %v", keys)
	}
}

// cancelAfter is a context whose Err reports context.Canceled from its
// n+1st call on: a cancellation at each point where Compact looks.
type cancelAfter struct {
	context.Context
	n     int64
	calls atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.calls.Add(1) > c.n {
		return context.Canceled
	}
	return nil
}

// manyPartitions writes n partitions of one row each in batches of at most
// 10,000 (under store.MaxSpanningBatchBytes).
func manyPartitions(t testing.TB, db *embedded.DB, prefix string, n int) {
	t.Helper()
	for lo := 0; lo < n; lo += 10000 {
		var muts []store.Mutation
		for i := lo; i < min(n, lo+10000); i++ {
			muts = append(muts, store.Mutation{Partition: fmt.Sprintf("%s%07d", prefix, i), Op: store.OpPut,
				Key: []byte{'r'}, Value: []byte{'v'}, Timestamp: tsBase})
		}
		if err := db.Partitions().Apply(context.Background(), muts); err != nil {
			t.Fatal(err)
		}
	}
}

// A context cancelled at each point Compact looks at it (before the
// original is read, while its keys are listed, before and while the copy
// is checked) makes Compact return its error, leave no copy and no
// directory it made, and leave the original as it was; once the context
// stays live, the copy is written.
func TestAdvCompactCancelled(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "store")
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	manyPartitions(t, db, "p", 9000) // more than two rounds of 4,096 keys
	db.Close()
	before := dirState(t, dir)
	root := t.TempDir()
	for n := int64(0); ; n++ {
		if n > 100 {
			t.Fatal("Compact still looks at its context after 100 calls")
		}
		to := filepath.Join(root, fmt.Sprint(n), "copy")
		ctx := &cancelAfter{Context: context.Background(), n: n}
		res, err := embedded.Compact(ctx, dir, to)
		if err == nil {
			t.Logf("cancelled at %d points, then written: %+v", n, res)
			if res.Keys != 9000 || n < 4 {
				t.Fatalf("after %d cancellations: %+v", n, res)
			}
			break
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled at call %d: %v", n+1, err)
		}
		if err := absent(to); err != nil {
			t.Fatalf("cancelled at call %d: %v", n+1, err)
		}
		if after := dirState(t, dir); after != before {
			t.Fatalf("cancelled at call %d: the store changed", n+1)
		}
		for _, f := range []func(context.Context, string) error{
			func(ctx context.Context, d string) error { _, err := embedded.Keys(ctx, d); return err },
			func(ctx context.Context, d string) error { _, err := embedded.ReadStats(ctx, d); return err },
		} {
			if err := f(&cancelAfter{Context: context.Background(), n: n}, dir); err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("Keys or ReadStats cancelled at call %d: %v", n+1, err)
			}
		}
	}
}

// A writer that opens the store, writes one batch and closes it, over and
// over, while Compact runs over and over on the same store: each Compact
// either is refused with ErrLocked or writes a copy of one state the
// writer left (rows 0..k-1 of its partition, none missing, with the
// marker row saying k), and each of the writer's opens either succeeds or
// is refused with ErrLocked.
func TestAdvCompactWhileWriting(t *testing.T) {
	t.Parallel()
	dir := smallStore(t, 2)
	ctx := context.Background()
	const writes = 40
	var done, stop atomic.Bool
	var writerRefused int
	writerErr := make(chan error, 1)
	finished := make(chan struct{})
	defer func() { stop.Store(true); <-finished }()
	go func() {
		defer close(finished)
		defer done.Store(true)
		for i := 0; i < writes && !stop.Load(); {
			db, err := embedded.Open(dir, embedded.Options{LockTimeout: 5 * time.Millisecond})
			if errors.Is(err, embedded.ErrLocked) {
				writerRefused++
				time.Sleep(time.Millisecond)
				continue
			}
			if err != nil {
				writerErr <- err
				return
			}
			err = db.Partitions().Apply(ctx, []store.Mutation{
				{Partition: "w", Op: store.OpPut, Key: fmt.Appendf(nil, "r%03d", i), Value: fmt.Appendf(nil, "v%d", i), Timestamp: tsBase},
				{Partition: "w", Op: store.OpPut, Key: []byte("z"), Value: fmt.Appendf(nil, "%03d", i+1), Timestamp: tsBase + int64(i)},
			})
			if err == nil {
				err = db.Siblings().Put(ctx, fmt.Sprintf("s%03d", i), "a", []byte("x"), nil)
			}
			if cerr := db.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				writerErr <- err
				return
			}
			i++
		}
		writerErr <- nil
	}()
	root := t.TempDir()
	var copies, refused int
	states := map[int]bool{}
	for j := 0; ; j++ {
		last := done.Load()
		to := filepath.Join(root, fmt.Sprint(j))
		_, err := embedded.Compact(ctx, dir, to)
		switch {
		case errors.Is(err, embedded.ErrLocked):
			refused++
			if err := absent(to); err != nil {
				t.Fatalf("a refused compact: %v", err)
			}
		case err != nil:
			t.Fatalf("compact %d: %v", j, err)
		default:
			copies++
			k := checkWriterCopy(t, to)
			states[k] = true
			if last && k != writes {
				t.Fatalf("the copy after the writer finished holds %d writes of %d", k, writes)
			}
		}
		if last {
			break
		}
	}
	if err := <-writerErr; err != nil {
		t.Fatalf("writer: %v", err)
	}
	t.Logf("%d copies of %d distinct states, %d compacts refused; the writer was refused %d times", copies, len(states), refused, writerRefused)
	if copies < 2 {
		t.Fatalf("only %d compacts succeeded", copies)
	}
}

// checkWriterCopy opens the copy in dir, verifies it and returns how many
// of the writer's batches it holds; it fails the test unless they are the
// first k, whole.
func checkWriterCopy(t *testing.T, dir string) int {
	t.Helper()
	ctx := context.Background()
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatalf("open the copy: %v", err)
	}
	defer db.Close()
	if err := db.Verify(); err != nil {
		t.Fatalf("the copy: %v", err)
	}
	rows, err := db.Partitions().Snapshot(ctx, "w", 1<<20, store.ReadComplete)
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	if len(rows) > 0 {
		n := rows[len(rows)-1]
		if string(n.Key) != "z" {
			t.Fatalf("the copy: rows without the marker: %q", n.Key)
		}
		if k, err = strconv.Atoi(string(n.Value)); err != nil {
			t.Fatalf("the copy: marker %q", n.Value)
		}
		rows = rows[:len(rows)-1]
	}
	if len(rows) != k {
		t.Fatalf("the copy: marker says %d batches, %d rows", k, len(rows))
	}
	for i, r := range rows {
		if string(r.Key) != fmt.Sprintf("r%03d", i) || string(r.Value) != fmt.Sprintf("v%d", i) {
			t.Fatalf("the copy: row %d is %q=%q", i, r.Key, r.Value)
		}
	}
	for i := range k {
		if k > 0 && i < k-1 { // the last batch's sibling may follow in the next open
			vals, _, err := db.Siblings().Fetch(ctx, fmt.Sprintf("s%03d", i))
			if err != nil || len(vals) != 1 {
				t.Fatalf("the copy: sibling %d: %q, %v", i, vals, err)
			}
		}
	}
	return k
}

// Keys lists keys of every length and kind of byte the stores accept, in
// byte order although the engine orders them by their length prefix
// first (one byte up to 127, two from 128, so 256 sorts between 128 and
// 129): non-ASCII letters, 127-, 128-, 129-, 200-, 255-byte keys, with
// row keys of arbitrary bytes (empty, 0x00, 0xff, invalid UTF-8); keys
// the stores refuse (empty, invalid UTF-8, control characters, 256
// bytes) are refused with crdt.ErrInvalidKey and not listed.
func TestAdvKeysOddKeys(t *testing.T) {
	t.Parallel()
	db, dir := openTemp(t, embedded.Options{})
	ctx := context.Background()
	long := func(n int, c string) string { return strings.Repeat(c, n/len(c)) + strings.Repeat("z", n%len(c)) }
	keys := []string{"a", "b", "ключ", "键", "🙂", "a b", "A", "~", long(127, "k"), long(128, "k"), long(129, "k"),
		long(200, "k"), long(255, "k"), long(255, "é"), long(128, "a"), long(256-128, "b")}
	var want []embedded.KeyInfo
	for i, k := range slices.Sorted(slices.Values(keys)) {
		for j := range 1 + i%3 {
			if err := db.Siblings().Put(ctx, k, crdt.ActorID(fmt.Sprint("a", j)), []byte("v"), nil); err != nil {
				t.Fatalf("put %q: %v", k, err)
			}
		}
		want = append(want, embedded.KeyInfo{Shape: embedded.ShapeSiblings, Key: k, Entries: 1 + i%3})
	}
	rowKeys := [][]byte{{}, {0}, {0xff, 0xfe}, []byte("\xc3\x28"), bytes256()}
	for i, p := range slices.Sorted(slices.Values(keys)) {
		var muts []store.Mutation
		for _, rk := range rowKeys[:1+i%len(rowKeys)] {
			muts = append(muts, store.Mutation{Partition: p, Op: store.OpPut, Key: rk, Value: []byte("v"), Timestamp: tsBase})
		}
		if err := db.Partitions().Apply(ctx, muts); err != nil {
			t.Fatalf("apply to %q: %v", p, err)
		}
		want = append(want, embedded.KeyInfo{Shape: embedded.ShapePartition, Key: p, Entries: len(muts)})
	}
	for _, k := range []string{"", "\xff", "a\x00b", "tab\t", long(256, "k")} {
		if err := db.Siblings().Put(ctx, k, "a", []byte("v"), nil); !errors.Is(err, crdt.ErrInvalidKey) {
			t.Errorf("put %q: %v, want crdt.ErrInvalidKey", k, err)
		}
		err := db.Partitions().Apply(ctx, []store.Mutation{{Partition: k, Op: store.OpPut, Key: []byte("r"), Value: []byte("v"), Timestamp: tsBase}})
		if !errors.Is(err, crdt.ErrInvalidKey) {
			t.Errorf("apply to %q: %v, want crdt.ErrInvalidKey", k, err)
		}
	}
	db.Close()
	got, err := embedded.Keys(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameKeys(want, got); err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(t.TempDir(), "copy")
	if _, err := embedded.Compact(ctx, dir, to); err != nil {
		t.Fatal(err)
	}
	cp, err := embedded.Open(to, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	for _, k := range want[len(keys):] {
		rows, err := cp.Partitions().Snapshot(ctx, k.Key, 100, store.ReadComplete)
		if err != nil || len(rows) != k.Entries {
			t.Fatalf("the copy's partition %q: %d rows, want %d (%v)", k.Key, len(rows), k.Entries, err)
		}
		wantRows := slices.SortedFunc(slices.Values(rowKeys[:k.Entries]), bytes.Compare)
		for i, r := range rows {
			if !bytes.Equal(r.Key, wantRows[i]) || string(r.Value) != "v" {
				t.Fatalf("the copy's partition %q: row %d is %q=%q", k.Key, i, r.Key, r.Value)
			}
		}
	}
}

func bytes256() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

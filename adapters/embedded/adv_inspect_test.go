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
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
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

// manyPartitions writes n partitions of one row each, in batches as large
// as store.MaxSpanningBatchBytes allows (2 bytes and the overhead each).
func manyPartitions(t testing.TB, db *embedded.DB, prefix string, n int) {
	t.Helper()
	const batch = store.MaxSpanningBatchBytes / (2 + store.SpanningOverhead)
	for lo := 0; lo < n; lo += batch {
		var muts []store.Mutation
		for i := lo; i < min(n, lo+batch); i++ {
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
	testsize.SkipSequential(t)
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
// is refused with ErrLocked. Each side waits for the other's lock (Open
// at least DefaultLockTimeout for the data file's), so they meet: at
// least one Open starts while a Compact runs, or one side is refused. The
// writer writes at least 40 batches, and on (up to 4,000) until they
// have met: without the race detector 40 can pass with no contention.
func TestAdvCompactWhileWriting(t *testing.T) {
	t.Parallel()
	dir := smallStore(t, 2)
	ctx := context.Background()
	const minWrites, maxWrites = 40, 4000
	var done, stop atomic.Bool
	var writerRefused, compactRefused, writes, met atomic.Int64
	var compacting atomic.Bool
	writerErr := make(chan error, 1)
	finished := make(chan struct{})
	defer func() { stop.Store(true); <-finished }()
	go func() {
		defer close(finished)
		defer done.Store(true)
		i := 0
		defer func() { writes.Store(int64(i)) }()
		for (i < minWrites || writerRefused.Load()+compactRefused.Load()+met.Load() == 0) && i < maxWrites && !stop.Load() {
			if compacting.Load() {
				met.Add(1)
			}
			db, err := embedded.Open(dir, embedded.Options{LockTimeout: 5 * time.Millisecond})
			if errors.Is(err, embedded.ErrLocked) {
				writerRefused.Add(1)
				time.Sleep(time.Millisecond)
				continue
			}
			if err != nil {
				writerErr <- err
				return
			}
			err = db.Partitions().Apply(ctx, []store.Mutation{
				{Partition: "w", Op: store.OpPut, Key: fmt.Appendf(nil, "r%04d", i), Value: fmt.Appendf(nil, "v%d", i), Timestamp: tsBase},
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
	var copies int
	states := map[int]bool{}
	for j := 0; ; j++ {
		last := done.Load()
		to := filepath.Join(root, fmt.Sprint(j))
		compacting.Store(true)
		_, err := embedded.Compact(ctx, dir, to)
		compacting.Store(false)
		switch {
		case errors.Is(err, embedded.ErrLocked):
			compactRefused.Add(1)
			if err := absent(to); err != nil {
				t.Fatalf("a refused compact: %v", err)
			}
		case err != nil:
			t.Fatalf("compact %d: %v", j, err)
		default:
			copies++
			k := checkWriterCopy(t, to)
			states[k] = true
			if last && int64(k) != writes.Load() {
				t.Fatalf("the copy after the writer finished holds %d writes of %d", k, writes.Load())
			}
		}
		if last {
			break
		}
	}
	if err := <-writerErr; err != nil {
		t.Fatalf("writer: %v", err)
	}
	t.Logf("%d writes, %d copies of %d distinct states, %d compacts refused; the writer was refused %d times and opened %d times during a Compact",
		writes.Load(), copies, len(states), compactRefused.Load(), writerRefused.Load(), met.Load())
	if copies < 2 {
		t.Fatalf("only %d compacts succeeded", copies)
	}
	if compactRefused.Load()+writerRefused.Load()+met.Load() == 0 {
		t.Fatal("the writer and Compact never met")
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
		if string(r.Key) != fmt.Sprintf("r%04d", i) || string(r.Value) != fmt.Sprintf("v%d", i) {
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

// uvarintLen is the length of n's uvarint encoding.
func uvarintLen(n int) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}

// Many keys (10,000 partitions and 200 sibling keys at CI size; 200,000
// and 4,000 with COUNTERKIT_CASES=20): Keys lists each with its entries
// and its exact stored bytes (a row: the partition's length prefix, the
// partition, the row key, then an 8-byte timestamp, a 4-byte CRC and the
// value), ReadStats counts them, Compact copies them, and Keys allocates
// a bounded amount per key: not in proportion to the values it skips.
func TestAdvKeysMany(t *testing.T) {
	// Not parallel: it bounds the process's allocations while it reads,
	// which tests running beside it would add to.
	rng, _ := seeded(t)
	nParts, nSibs := min(proptest.Scale(10000), 1_000_000), proptest.Scale(200)
	dir := filepath.Join(t.TempDir(), "store")
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	want := make([]embedded.KeyInfo, 0, nParts+nSibs)
	var sibs sync.WaitGroup
	sibErr := make(chan error, 32)
	sibKeys := make([]embedded.KeyInfo, nSibs)
	for w := range 32 {
		sibs.Add(1)
		go func() {
			defer sibs.Done()
			for i := w; i < nSibs; i += 32 {
				k := fmt.Sprintf("s%06d", i)
				v := bytes.Repeat([]byte{'v'}, 1+i%50)
				if err := db.Siblings().Put(ctx, k, "a", v, nil); err != nil {
					sibErr <- err
					return
				}
				sibKeys[i] = embedded.KeyInfo{Shape: embedded.ShapeSiblings, Key: k, Entries: 1,
					Bytes: int64(uvarintLen(len(k)) + len(k) + 8 + 4 + len(v))}
			}
		}()
	}
	var parts []embedded.KeyInfo
	var muts []store.Mutation
	size := 0
	flush := func() {
		if err := db.Partitions().Apply(ctx, muts); err != nil {
			t.Fatal(err)
		}
		muts, size = muts[:0], 0
	}
	for i := range nParts {
		p := fmt.Sprintf("p%0*d", 1+rng.IntN(8), i) // lengths 2 to 9: engine order differs from byte order
		k := embedded.KeyInfo{Shape: embedded.ShapePartition, Key: p}
		for r := range 1 + rng.IntN(3) {
			m := store.Mutation{Partition: p, Op: store.OpPut, Key: fmt.Appendf(nil, "%d", r), Value: bytes.Repeat([]byte{'x'}, 1+rng.IntN(4)), Timestamp: tsBase}
			if n := len(m.Key) + len(m.Value) + store.SpanningOverhead; size+n > store.MaxSpanningBatchBytes || len(muts) == store.MaxBatch {
				flush()
			}
			muts, size = append(muts, m), size+len(m.Key)+len(m.Value)+store.SpanningOverhead
			k.Entries++
			k.Bytes += int64(uvarintLen(len(p)) + len(p) + len(m.Key) + 8 + 4 + len(m.Value))
		}
		parts = append(parts, k)
	}
	flush()
	sibs.Wait()
	close(sibErr)
	if err := <-sibErr; err != nil {
		t.Fatal(err)
	}
	db.Close()
	want = append(append(want, sibKeys...), parts...)
	slices.SortFunc(want[nSibs:], func(a, b embedded.KeyInfo) int { return strings.Compare(a.Key, b.Key) })

	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	start := time.Now()
	got, err := embedded.Keys(ctx, dir)
	took := time.Since(start)
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%d keys listed, want %d; first difference at %d: %+v, want %+v", len(got), len(want), i,
			got[min(i, len(got)-1)], want[min(i, len(want)-1)])
	}
	fi, _ := os.Stat(filepath.Join(dir, embedded.FileName))
	alloc := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("Keys: %d keys of a %d-byte file in %v, %d bytes allocated (%d per key)", len(got), fi.Size(), took, alloc, alloc/uint64(len(got)))
	if per := alloc / uint64(len(got)); per > 400 {
		t.Fatalf("Keys allocated %d bytes per key", per)
	}
	st, err := embedded.ReadStats(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, p := range parts {
		rows += p.Entries
	}
	if st.SiblingKeys != nSibs || st.SiblingValues != nSibs || st.Partitions != nParts || st.Rows != rows || st.FileBytes != fi.Size() {
		t.Fatalf("stats %+v; want %d sibling keys, %d partitions, %d rows", st, nSibs, nParts, rows)
	}
	to := filepath.Join(t.TempDir(), "copy")
	start = time.Now()
	res, err := embedded.Compact(ctx, dir, to)
	if err != nil || res.Keys != len(want) {
		t.Fatalf("compact: %+v, %v", res, err)
	}
	t.Logf("Compact: %+v in %v", res, time.Since(start))
	cp, err := embedded.Open(to, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	for range 50 {
		p := parts[rng.IntN(len(parts))]
		got, err := cp.Partitions().Snapshot(ctx, p.Key, 10, store.ReadComplete)
		if err != nil || len(got) != p.Entries {
			t.Fatalf("the copy's partition %s: %d rows, want %d (%v)", p.Key, len(got), p.Entries, err)
		}
	}
}

// Keys and ReadStats do not read values into memory: on a store of 24
// values of 1 MiB each they allocate less than 2 MiB.
func TestAdvKeysLargeValues(t *testing.T) {
	testsize.SkipSequential(t)
	// Not parallel: it bounds the process's allocations while it reads,
	// which tests running beside it would add to.
	db, dir := openTemp(t, embedded.Options{})
	ctx := context.Background()
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	for i := range 12 {
		if err := db.Siblings().Put(ctx, fmt.Sprint("s", i), "a", big, nil); err != nil {
			t.Fatal(err)
		}
		if err := db.Partitions().Apply(ctx, []store.Mutation{{Partition: fmt.Sprint("p", i), Op: store.OpPut, Key: []byte("r"), Value: big, Timestamp: tsBase}}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	for name, f := range map[string]func() error{
		"Keys":      func() error { _, err := embedded.Keys(ctx, dir); return err },
		"ReadStats": func() error { _, err := embedded.ReadStats(ctx, dir); return err },
	} {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		err := f()
		runtime.ReadMemStats(&m1)
		if err != nil {
			t.Fatal(err)
		}
		alloc := m1.TotalAlloc - m0.TotalAlloc
		t.Logf("%s: %d bytes allocated for 24 MiB of values", name, alloc)
		if alloc > 2<<20 {
			t.Errorf("%s allocated %d bytes", name, alloc)
		}
	}
}

// storeDump is everything the stores return for the given keys: each
// sibling key's values (sorted) and token, each partition's rows.
func storeDump(t testing.TB, db *embedded.DB, sibKeys, partitions []string) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, k := range slices.Compact(slices.Sorted(slices.Values(sibKeys))) {
		vals, tok, err := db.Siblings().Fetch(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(vals, bytes.Compare)
		fmt.Fprintf(&b, "sibling %q: %q token %x\n", k, vals, tok)
	}
	for _, p := range slices.Compact(slices.Sorted(slices.Values(partitions))) {
		rows, err := db.Partitions().Snapshot(ctx, p, 1<<20, store.ReadComplete)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			fmt.Fprintf(&b, "row %q %q: %q\n", p, r.Key, r.Value)
		}
	}
	return b.String()
}

// later writes the same writes into db after the copy: a sibling put on
// every key and a new one (its dot comes from the sequence), and puts
// older than every deletion into every partition (its tombstones must
// shadow them).
func later(t testing.TB, db *embedded.DB, sibKeys, partitions []string) {
	t.Helper()
	ctx := context.Background()
	for _, k := range append(slices.Clone(sibKeys), "new-key") {
		if err := db.Siblings().Put(ctx, k, "z", []byte("later"), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range partitions {
		var muts []store.Mutation
		for r := range 8 {
			muts = append(muts, store.Mutation{Partition: p, Op: store.OpPut, Key: fmt.Appendf(nil, "r%d", r), Value: []byte("late"), Timestamp: tsBase + 1})
		}
		if err := db.Partitions().Apply(ctx, muts); err != nil {
			t.Fatal(err)
		}
	}
}

// A compacted copy opened with Open returns what the original returns:
// every sibling's values and token, every partition's rows; and the same
// later writes into both leave them equal (the copy kept the sequence its
// dots come from and the tombstones that shadow late writes). A copy
// rewritten through the stores instead (the broken variant: new dots, no
// tombstones) is told apart.
func TestAdvCompactReadBack(t *testing.T) {
	t.Parallel()
	rng, _ := seeded(t)
	dir := filepath.Join(t.TempDir(), "store")
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var sibKeys, partitions []string
	for range proptest.Scale(400) {
		switch rng.IntN(6) {
		case 0, 1:
			k := fmt.Sprint("k", rng.IntN(40))
			sibKeys = append(sibKeys, k)
			_, tok, err := db.Siblings().Fetch(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if rng.IntN(3) == 0 {
				tok = nil
			}
			if err := db.Siblings().Put(ctx, k, crdt.ActorID(fmt.Sprint("a", rng.IntN(3))), fmt.Appendf(nil, "v%d", rng.IntN(1000)), tok); err != nil {
				t.Fatal(err)
			}
		case 2:
			k := fmt.Sprint("k", rng.IntN(40))
			if _, tok, err := db.Siblings().Fetch(ctx, k); err != nil {
				t.Fatal(err)
			} else if err := db.Siblings().Delete(ctx, k, tok); err != nil {
				t.Fatal(err)
			}
		default:
			p := fmt.Sprint("p", rng.IntN(12))
			partitions = append(partitions, p)
			m := store.Mutation{Partition: p, Op: store.OpPut, Key: fmt.Appendf(nil, "r%d", rng.IntN(8)),
				Value: fmt.Appendf(nil, "v%d", rng.IntN(1000)), Timestamp: tsBase + 2 + rng.Int64N(100)}
			switch rng.IntN(10) {
			case 0:
				m.Op, m.Value = store.OpDelete, nil
			case 1:
				m.Op, m.Value, m.Key, m.End = store.OpDeleteRange, nil, fmt.Appendf(nil, "r%d", rng.IntN(4)), fmt.Appendf(nil, "r%d", 4+rng.IntN(5))
			case 2:
				m.Op, m.Key, m.Value = store.OpDeletePartition, nil, nil
			}
			if err := db.Partitions().Apply(ctx, []store.Mutation{m}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The newest dot deleted: the sequence is ahead of every stored dot.
	if err := db.Siblings().Put(ctx, "gone", "a", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if _, tok, err := db.Siblings().Fetch(ctx, "gone"); err != nil {
		t.Fatal(err)
	} else if err := db.Siblings().Delete(ctx, "gone", tok); err != nil {
		t.Fatal(err)
	}
	sibKeys = append(sibKeys, "gone")
	orig := storeDump(t, db, sibKeys, partitions)
	db.Close()

	to := filepath.Join(t.TempDir(), "copy")
	if _, err := embedded.Compact(ctx, dir, to); err != nil {
		t.Fatal(err)
	}
	// The broken variant: the same values written afresh.
	rewritten := filepath.Join(t.TempDir(), "rewritten")
	rw, err := embedded.Open(rewritten, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range slices.Compact(slices.Sorted(slices.Values(sibKeys))) {
		vals, _, _ := src.Siblings().Fetch(ctx, k)
		for _, v := range vals {
			if err := rw.Siblings().Put(ctx, k, "a", v, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range slices.Compact(slices.Sorted(slices.Values(partitions))) {
		rows, _ := src.Partitions().Snapshot(ctx, p, 1<<20, store.ReadComplete)
		for _, r := range rows {
			if err := rw.Partitions().Apply(ctx, []store.Mutation{{Partition: p, Op: store.OpPut, Key: r.Key, Value: r.Value, Timestamp: tsBase + 2}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	cp, err := embedded.Open(to, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	defer rw.Close()
	defer src.Close()
	if got := storeDump(t, cp, sibKeys, partitions); got != orig {
		t.Fatalf("the copy reads\n%s\nthe original\n%s", got, orig)
	}
	for _, d := range []*embedded.DB{src, cp, rw} {
		later(t, d, sibKeys, partitions)
	}
	want := storeDump(t, src, sibKeys, partitions)
	if got := storeDump(t, cp, sibKeys, partitions); got != want {
		t.Fatalf("after the same writes the copy reads\n%s\nthe original\n%s", got, want)
	}
	if storeDump(t, rw, sibKeys, nil) == storeDump(t, src, sibKeys, nil) {
		t.Fatal("a copy rewritten through the stores (new dots) reads as the original")
	}
	if storeDump(t, rw, nil, partitions) == storeDump(t, src, nil, partitions) {
		t.Fatal("a copy rewritten through the stores (no tombstones) reads as the original")
	}
	t.Logf("%d sibling keys and %d partitions read back equal, before and after the same later writes",
		len(slices.Compact(slices.Sorted(slices.Values(sibKeys)))), len(slices.Compact(slices.Sorted(slices.Values(partitions)))))
}

// Damaged copies of the damage suite's fixture (truncated, meta pages,
// page headers, a flipped byte inside a value): Keys, ReadStats and
// Compact each list the fixture's keys or refuse with
// crdt.ErrCorruptEncoding (or ErrMisconfiguredStore, ErrUnsupportedVersion
// for a header that no longer says bbolt or counterkit), a flipped value
// is refused by all three, and none of them changes the damaged directory
// or leaves anything at Compact's target.
func TestAdvInspectDamageChangesNothing(t *testing.T) {
	testsize.SkipSequential(t)
	t.Parallel()
	orig, b := fixtureFile(t)
	want, err := embedded.Keys(context.Background(), filepath.Dir(orig))
	if err != nil {
		t.Fatal(err)
	}
	l := layoutOf(t, b)
	var copies []damage
	copies = append(copies, truncDamage(l)...)
	copies = append(copies, metaDamage(l)...)
	for _, d := range structDamage(l) {
		if d.Class == "header" {
			copies = append(copies, d)
		}
	}
	var values []string
	for _, id := range []string{"s007", "s150b", "r042", "r159"} {
		p := fixPayload(id)
		off := bytes.Index(b, p)
		if off < 0 {
			t.Fatalf("value %s is not in the file", id)
		}
		if bytes.Index(b[off+1:], p) >= 0 {
			// The engine may leave an old copy on a free page (its layout
			// varies from run to run): which copy is live is unknown.
			t.Logf("value %s is in the file twice: not damaged", id)
			continue
		}
		name := "value " + id
		values = append(values, name)
		copies = append(copies, damage{Class: "value", Name: name, Truncate: -1,
			Edits: []edit{{off + len(p) - 2, []byte{b[off+len(p)-2] ^ 0x20}}}})
	}
	if len(values) < 2 {
		t.Fatalf("only %d of 4 values are in the file once", len(values))
	}
	work := t.TempDir()
	ctx := context.Background()
	counts := map[string]int{}
	for _, d := range copies {
		dir, err := applyDamage(orig, work, d)
		if err != nil {
			t.Fatal(err)
		}
		before := dirState(t, dir)
		to := filepath.Join(work, "to")
		var errs [3]error
		var keys []embedded.KeyInfo
		keys, errs[0] = embedded.Keys(ctx, dir)
		_, errs[1] = embedded.ReadStats(ctx, dir)
		_, errs[2] = embedded.Compact(ctx, dir, to)
		for i, err := range errs {
			switch {
			case err == nil && i == 0 && !slices.Equal(keys, want):
				t.Errorf("%s: Keys lists other keys: %v", d.Name, sameKeys(want, keys))
			case err == nil && d.Class == "value":
				t.Errorf("%s: call %d read it without an error", d.Name, i)
			case err == nil:
				counts["read"]++
			case errors.Is(err, crdt.ErrCorruptEncoding) || errors.Is(err, crdt.ErrMisconfiguredStore) || errors.Is(err, crdt.ErrUnsupportedVersion):
				counts["refused"]++
			default:
				t.Errorf("%s: call %d: %v", d.Name, i, err)
			}
		}
		if errs[2] != nil {
			if err := absent(to); err != nil {
				t.Errorf("%s: a refused compact: %v", d.Name, err)
			}
		} else if got, err := embedded.Keys(ctx, to); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: the copy: %v (%v)", d.Name, sameKeys(want, got), err)
		}
		if after := dirState(t, dir); after != before {
			t.Errorf("%s: the damaged directory changed", d.Name)
		}
		os.RemoveAll(to)
		os.RemoveAll(dir)
	}
	t.Logf("%d damaged copies (%s); calls: %v", len(copies), strings.Join(values, ", "), counts)
	if counts["refused"] == 0 {
		t.Fatal("no damage was refused")
	}
}

// Two Compacts into one new directory and an Open of it, at once: at most
// one of them gets the directory, the others fail with ErrLocked or
// crdt.ErrInvalidConfig (it holds a file by then), and the directory then
// holds one data file: a complete copy, or the new store Open made.
func TestAdvCompactSameTargetAtOnce(t *testing.T) {
	t.Parallel()
	dir := smallStore(t, 30)
	ctx := context.Background()
	want, err := embedded.Keys(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 6 {
		to := filepath.Join(t.TempDir(), "copy")
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i < 2 {
					_, errs[i] = embedded.Compact(ctx, dir, to)
					return
				}
				time.Sleep(time.Duration(round) * time.Millisecond)
				db, err := embedded.Open(to, embedded.Options{LockTimeout: time.Millisecond})
				if err == nil {
					err = db.Close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		ok := 0
		for i, err := range errs {
			switch {
			case err == nil:
				ok++
			case i < 2 && (errors.Is(err, embedded.ErrLocked) || errors.Is(err, crdt.ErrInvalidConfig)):
			case i == 2 && (errors.Is(err, embedded.ErrLocked) || errors.Is(err, crdt.ErrMisconfiguredStore)):
			default:
				t.Fatalf("round %d, call %d: %v", round, i, err)
			}
		}
		entries, _ := os.ReadDir(to)
		if ok == 0 || len(entries) != 1 || entries[0].Name() != embedded.FileName {
			t.Fatalf("round %d: %v succeeded, the directory holds %v", round, errs, entries)
		}
		got, err := embedded.Keys(ctx, to)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if (errs[0] == nil || errs[1] == nil) && !slices.Equal(got, want) {
			t.Fatalf("round %d: a compact succeeded but the copy holds %v", round, sameKeys(want, got))
		}
		if errs[0] == nil && errs[1] == nil {
			t.Fatalf("round %d: both compacts wrote the same directory", round)
		}
		t.Logf("round %d: %v", round, errs)
	}
}

// A store that holds nothing (opened once and closed): Keys lists no key,
// ReadStats counts none, and Compact writes a copy that Open opens and
// that takes writes.
func TestAdvInspectEmptyStore(t *testing.T) {
	t.Parallel()
	dir := smallStore(t, 0)
	ctx := context.Background()
	keys, err := embedded.Keys(ctx, dir)
	if err != nil || len(keys) != 0 {
		t.Fatalf("Keys: %v, %v", keys, err)
	}
	st, err := embedded.ReadStats(ctx, dir)
	if err != nil || st.SiblingKeys+st.SiblingValues+st.Partitions+st.Rows != 0 || st.FormatVersion != embedded.FormatVersion || len(st.Buckets) != 7 {
		t.Fatalf("ReadStats: %+v, %v", st, err)
	}
	to := filepath.Join(t.TempDir(), "copy")
	if res, err := embedded.Compact(ctx, dir, to); err != nil || res.Keys != 0 {
		t.Fatalf("Compact: %+v, %v", res, err)
	}
	db, err := embedded.Open(to, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fill(t, db, "e", 3)
	intact(t, db, "e", 3)
}

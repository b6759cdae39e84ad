package embedded_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
	bolt "go.etcd.io/bbolt"
)

// storeKeys reads the keys of db through its stores, as a service would:
// every sibling key and partition it was given, with the values each
// holds now, in Keys' order.
func storeKeys(t testing.TB, db *embedded.DB, sibKeys, partitions []string) []embedded.KeyInfo {
	t.Helper()
	ctx := context.Background()
	var out []embedded.KeyInfo
	for _, k := range slices.Compact(slices.Sorted(slices.Values(sibKeys))) {
		vals, _, err := db.Siblings().Fetch(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if len(vals) > 0 {
			out = append(out, embedded.KeyInfo{Shape: embedded.ShapeSiblings, Key: k, Entries: len(vals)})
		}
	}
	for _, p := range slices.Compact(slices.Sorted(slices.Values(partitions))) {
		rows, err := db.Partitions().Snapshot(ctx, p, 1<<20, store.ReadComplete)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) > 0 {
			out = append(out, embedded.KeyInfo{Shape: embedded.ShapePartition, Key: p, Entries: len(rows)})
		}
	}
	return out
}

// sameKeys reports how got differs from want in shape, key, order and
// entries (Bytes is not in the model).
func sameKeys(want, got []embedded.KeyInfo) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d keys, want %d", len(got), len(want))
	}
	for i := range want {
		g := got[i]
		if g.Shape != want[i].Shape || g.Key != want[i].Key || g.Entries != want[i].Entries {
			return fmt.Errorf("key %d: %v %q with %d entries, want %v %q with %d", i, g.Shape, g.Key, g.Entries,
				want[i].Shape, want[i].Key, want[i].Entries)
		}
		if g.Bytes <= int64(len(g.Key)) {
			return fmt.Errorf("key %q: %d bytes stored", g.Key, g.Bytes)
		}
	}
	return nil
}

// TestKeysMatchTheStores writes random sibling keys and partitions of
// varied lengths (stored keys sort by length first), deletes some
// siblings, rows, ranges and whole partitions, and compares Keys with what
// Fetch and Snapshot return for every key written.
func TestKeysMatchTheStores(t *testing.T) {
	t.Parallel()
	rng, _ := seeded(t)
	db, dir := openTemp(t, embedded.Options{})
	ctx := context.Background()
	name := func(prefix string) string {
		return prefix + strings.Repeat("x", rng.IntN(4)) + fmt.Sprint(rng.IntN(30))
	}
	var sibKeys, partitions []string
	for range proptest.Scale(300) {
		switch rng.IntN(5) {
		case 0, 1:
			k := name("k")
			sibKeys = append(sibKeys, k)
			_, tok, err := db.Siblings().Fetch(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if rng.IntN(3) == 0 {
				tok = nil // a concurrent writer's sibling
			}
			if err := db.Siblings().Put(ctx, k, "a", []byte(strings.Repeat("v", 1+rng.IntN(50))), tok); err != nil {
				t.Fatal(err)
			}
		case 2:
			k := name("k")
			if _, tok, err := db.Siblings().Fetch(ctx, k); err != nil {
				t.Fatal(err)
			} else if err := db.Siblings().Delete(ctx, k, tok); err != nil {
				t.Fatal(err)
			}
		default:
			p := name("p")
			partitions = append(partitions, p)
			m := store.Mutation{Partition: p, Op: store.OpPut, Key: []byte(name("r")), Value: []byte("v"), Timestamp: tsBase + rng.Int64N(100)}
			switch rng.IntN(8) {
			case 0:
				m.Op, m.Value = store.OpDelete, nil
			case 1:
				m.Op, m.Value = store.OpDeleteRange, nil // to the partition's end
			case 2:
				m.Op, m.Key, m.Value = store.OpDeletePartition, nil, nil
			}
			if err := db.Partitions().Apply(ctx, []store.Mutation{m}); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := storeKeys(t, db, sibKeys, partitions)
	db.Close()
	got, err := embedded.Keys(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameKeys(want, got); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d keys listed", len(got))
	st, err := embedded.ReadStats(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var sibs, values, parts, rows int
	for _, k := range want {
		if k.Shape == embedded.ShapeSiblings {
			sibs, values = sibs+1, values+k.Entries
		} else {
			parts, rows = parts+1, rows+k.Entries
		}
	}
	if st.SiblingKeys != sibs || st.SiblingValues != values || st.Partitions != parts || st.Rows != rows {
		t.Fatalf("stats count %d sibling keys (%d values), %d partitions (%d rows); the stores hold %d (%d), %d (%d)",
			st.SiblingKeys, st.SiblingValues, st.Partitions, st.Rows, sibs, values, parts, rows)
	}
}

// The comparison catches a listing in the engine's order (length first),
// with a sibling miscounted, with a key of the wrong shape or a key
// missing.
func TestSameKeysCatchesBrokenListings(t *testing.T) {
	want := []embedded.KeyInfo{
		{Shape: embedded.ShapeSiblings, Key: "ab", Entries: 2, Bytes: 20},
		{Shape: embedded.ShapeSiblings, Key: "b", Entries: 1, Bytes: 10},
		{Shape: embedded.ShapePartition, Key: "p", Entries: 3, Bytes: 40},
	}
	if err := sameKeys(want, want); err != nil {
		t.Fatal(err)
	}
	for name, broken := range map[string]func([]embedded.KeyInfo) []embedded.KeyInfo{
		"engine order": func(k []embedded.KeyInfo) []embedded.KeyInfo { k[0], k[1] = k[1], k[0]; return k },
		"miscounted":   func(k []embedded.KeyInfo) []embedded.KeyInfo { k[0].Entries = 1; return k },
		"wrong shape":  func(k []embedded.KeyInfo) []embedded.KeyInfo { k[2].Shape = embedded.ShapeSiblings; return k },
		"missing":      func(k []embedded.KeyInfo) []embedded.KeyInfo { return k[:2] },
		"no bytes":     func(k []embedded.KeyInfo) []embedded.KeyInfo { k[1].Bytes = 0; return k },
	} {
		if err := sameKeys(want, broken(slices.Clone(want))); err == nil {
			t.Errorf("%s: not caught", name)
		}
	}
}

// Bytes is the size of a key's entries as stored: a sibling is its key's
// length prefix, the key and an 8-byte dot, then a 4-byte CRC and the
// value (README.md, "Layout and checks").
func TestKeysBytes(t *testing.T) {
	t.Parallel()
	db, dir := openTemp(t, embedded.Options{})
	ctx := context.Background()
	for _, v := range []string{"one", "three"} {
		if err := db.Siblings().Put(ctx, "acct", "a", []byte(v), nil); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	keys, err := embedded.Keys(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(2*(1+len("acct")+8+4) + len("one") + len("three"))
	if len(keys) != 1 || keys[0].Entries != 2 || keys[0].Bytes != want {
		t.Fatalf("%+v, want acct with 2 entries of %d bytes", keys, want)
	}
}

// ReadStats counts the free pages the engine itself counts when it loads
// its freelist (a read-only open of the engine never loads it and reports
// none), and the buckets' figures.
func TestReadStatsFreePages(t *testing.T) {
	t.Parallel()
	db, dir := openTemp(t, embedded.Options{})
	fill(t, db, "f", 200)
	ctx := context.Background()
	for i := range 150 {
		k := fmt.Sprintf("key-f%d", i)
		_, tok, err := db.Siblings().Fetch(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Siblings().Delete(ctx, k, tok); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	st, err := embedded.ReadStats(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bolt.Open(filepath.Join(dir, embedded.FileName), 0o600, &bolt.Options{PreLoadFreelist: true, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	free := b.Stats().FreePageN
	var info struct{ keys, pages int }
	b.View(func(tx *bolt.Tx) error {
		s := tx.Bucket([]byte("siblings")).Stats()
		info.keys, info.pages = s.KeyN, s.LeafPageN+s.LeafOverflowN
		return nil
	})
	b.Close()
	if free == 0 {
		t.Fatal("the store has no free pages: the test cannot tell a reader that reports none")
	}
	if st.FreePages != free {
		t.Fatalf("ReadStats: %d free pages, the engine counts %d", st.FreePages, free)
	}
	i := slices.IndexFunc(st.Buckets, func(b embedded.BucketStats) bool { return b.Name == "siblings" })
	if i < 0 || st.Buckets[i].Keys != info.keys || st.Buckets[i].LeafPages != info.pages || st.SiblingValues != 50 || st.Rows != 200 {
		t.Fatalf("stats %+v; the engine: %d keys in %d leaf pages", st, info.keys, info.pages)
	}
	fi, _ := os.Stat(filepath.Join(dir, embedded.FileName))
	if st.FileBytes != fi.Size() || st.DataBytes > st.FileBytes || st.PageSize != os.Getpagesize() || st.FormatVersion != embedded.FormatVersion {
		t.Fatalf("stats %+v, file of %d bytes", st, fi.Size())
	}
}

// ReadStats counts the bytes of a bucket bbolt stores inline, inside its
// parent's page (a small one: no pages of its own), and marks it Inline; a
// bucket with pages of its own is not.
func TestReadStatsInlineBuckets(t *testing.T) {
	t.Parallel()
	db, dir := openTemp(t, embedded.Options{})
	ctx := context.Background()
	if err := db.Siblings().Put(ctx, "k", "x", []byte("hello"), nil); err != nil {
		t.Fatal(err)
	}
	for i := range 100 { // rows enough for pages of their own
		id := fmt.Sprintf("r%d", i)
		if err := db.Partitions().Apply(ctx, []store.Mutation{{Partition: "part", Op: store.OpPut,
			Key: []byte(id), Value: payload(id), Timestamp: tsBase + int64(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	st, err := embedded.ReadStats(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bolt.Open(filepath.Join(dir, embedded.FileName), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	want := map[string]bolt.BucketStats{}
	b.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, bk *bolt.Bucket) error {
			want[string(name)] = bk.Stats()
			return nil
		})
	})
	for _, bs := range st.Buckets {
		w := want[bs.Name]
		inline := w.InlineBucketN > 0
		switch {
		case bs.Inline != inline:
			t.Errorf("bucket %s: Inline %v, the engine's InlineBucketN %d", bs.Name, bs.Inline, w.InlineBucketN)
		case inline && (bs.BytesInUse != w.InlineBucketInuse || bs.LeafPages != 0 || bs.BytesAllocated != 0):
			t.Errorf("inline bucket %s: %+v, the engine: %d bytes inline", bs.Name, bs, w.InlineBucketInuse)
		case !inline && bs.BytesInUse != w.LeafInuse+w.BranchInuse:
			t.Errorf("bucket %s: %+v, the engine: %d bytes in its pages", bs.Name, bs, w.LeafInuse+w.BranchInuse)
		}
	}
	i := slices.IndexFunc(st.Buckets, func(b embedded.BucketStats) bool { return b.Name == "siblings" })
	if i < 0 || !st.Buckets[i].Inline || st.Buckets[i].Keys != 1 || st.Buckets[i].BytesInUse <= len("hello") {
		t.Fatalf("the siblings bucket of one small value: %+v, want inline with its bytes counted", st.Buckets)
	}
	i = slices.IndexFunc(st.Buckets, func(b embedded.BucketStats) bool { return b.Name == "rows" })
	if i < 0 || st.Buckets[i].Inline || st.Buckets[i].LeafPages == 0 || st.Buckets[i].BytesInUse == 0 {
		t.Fatalf("the rows bucket of 100 rows: %+v, want pages of its own", st.Buckets)
	}
}

// setFormat rewrites the format marker of the data file in dir to version
// v; v == 1 also removes the digests, as a version 1 file has none.
func setFormat(t *testing.T, dir string, v uint16) {
	t.Helper()
	b, err := bolt.Open(filepath.Join(dir, embedded.FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = b.Update(func(tx *bolt.Tx) error {
		m := tx.Bucket([]byte("meta"))
		f := bytes.Clone(m.Get([]byte("format")))
		binary.BigEndian.PutUint16(f[len(f)-2:], v)
		switch v {
		case 1:
			if err := m.Delete([]byte("digest")); err != nil {
				return err
			}
		case 2:
			// The record without the transaction that wrote it.
			if err := m.Put([]byte("digest"), digestWithoutTx(m.Get([]byte("digest")))); err != nil {
				return err
			}
		}
		return m.Put([]byte("format"), f)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// formatOf returns the format marker of dir's data file and the length
// of its digest record (0: none), read with the engine alone.
func formatOf(t *testing.T, dir string) (version, digestLen int) {
	t.Helper()
	b, err := bolt.Open(filepath.Join(dir, embedded.FileName), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.View(func(tx *bolt.Tx) error {
		m := tx.Bucket([]byte("meta"))
		f := m.Get([]byte("format"))
		version, digestLen = int(binary.BigEndian.Uint16(f[len(f)-2:])), len(m.Get([]byte("digest")))
		return nil
	})
	return version, digestLen
}

// digestWithoutTx is a digest record of format 3 in format 2's layout:
// without the transaction id (the 8 bytes before the CRC-32C).
func digestWithoutTx(rec []byte) []byte {
	b := bytes.Clone(rec[:len(rec)-12])
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}

// inspectAll runs Keys, ReadStats and Compact (into a new directory) on
// dir and returns their errors.
func inspectAll(dir string) (errs [3]error) {
	ctx := context.Background()
	_, errs[0] = embedded.Keys(ctx, dir)
	_, errs[1] = embedded.ReadStats(ctx, dir)
	_, errs[2] = embedded.Compact(ctx, dir, dir+".compacted")
	return errs
}

// A file of a newer format version is refused with
// crdt.ErrUnsupportedVersion and left as it was; version 0 is damage; a
// version 1 file (no digests) is read, and compacted into a version 1
// copy that Open upgrades.
func TestInspectFormatVersions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version uint16
		want    error
	}{{embedded.FormatVersion + 1, crdt.ErrUnsupportedVersion}, {0xffff, crdt.ErrUnsupportedVersion}, {0, crdt.ErrCorruptEncoding}} {
		db, dir := openTemp(t, embedded.Options{})
		fill(t, db, "n", 5)
		db.Close()
		setFormat(t, dir, tc.version)
		before, _ := os.ReadFile(filepath.Join(dir, embedded.FileName))
		for i, err := range inspectAll(dir) {
			if !errors.Is(err, tc.want) {
				t.Fatalf("version %d, call %d: %v, want %v", tc.version, i, err, tc.want)
			}
		}
		after, _ := os.ReadFile(filepath.Join(dir, embedded.FileName))
		if !bytes.Equal(before, after) {
			t.Fatalf("version %d: the file changed", tc.version)
		}
		if _, err := os.Stat(dir + ".compacted"); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("version %d: Compact left %s.compacted (%v)", tc.version, dir, err)
		}
	}

	db, dir := openTemp(t, embedded.Options{})
	fill(t, db, "o", 20)
	want := storeKeys(t, db, func() (k []string) {
		for i := range 20 {
			k = append(k, fmt.Sprintf("key-o%d", i))
		}
		return k
	}(), []string{"part"})
	db.Close()
	setFormat(t, dir, 1)
	ctx := context.Background()
	got, err := embedded.Keys(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameKeys(want, got); err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(t.TempDir(), "compacted")
	if _, err := embedded.Compact(ctx, dir, to); err != nil {
		t.Fatal(err)
	}
	st, err := embedded.ReadStats(ctx, to)
	if err != nil || st.FormatVersion != 1 {
		t.Fatalf("the copy of a version 1 store: %+v, %v", st, err)
	}
	cp, err := embedded.Open(to, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	intact(t, cp, "o", 20)
	cp.Close()
	if st, err := embedded.ReadStats(ctx, to); err != nil || st.FormatVersion != embedded.FormatVersion {
		t.Fatalf("the copy after Open: %+v, %v", st, err)
	}
}

// A DB open on the directory makes Keys, ReadStats and Compact fail at
// once with ErrLocked; a missing data file is crdt.ErrNotFound.
func TestInspectLockedAndMissing(t *testing.T) {
	t.Parallel()
	db, dir := openTemp(t, embedded.Options{})
	fill(t, db, "l", 3)
	start := time.Now()
	for i, err := range inspectAll(dir) {
		if !errors.Is(err, embedded.ErrLocked) {
			t.Fatalf("call %d on an open store: %v", i, err)
		}
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the locked calls took %v", d)
	}
	db.Close()
	for i, err := range inspectAll(t.TempDir()) {
		if !errors.Is(err, crdt.ErrNotFound) {
			t.Fatalf("call %d on an empty directory: %v", i, err)
		}
	}
	if _, err := embedded.Keys(context.Background(), ""); !errors.Is(err, crdt.ErrInvalidConfig) {
		t.Fatalf("no directory: %v", err)
	}
}

// Compact writes a smaller copy holding the same values, changes nothing
// in the original, and refuses a target that holds files.
func TestCompact(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	buildFixture(t, dir)
	ctx := context.Background()
	path := filepath.Join(dir, embedded.FileName)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, err := embedded.Keys(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(t.TempDir(), "new", "compacted")
	res, err := embedded.Compact(ctx, dir, to)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compacted: %+v", res)
	fi, _ := os.Stat(filepath.Join(to, embedded.FileName))
	if res.Keys != len(before) || res.BytesAfter != fi.Size() || res.BytesAfter >= int64(len(orig)) {
		t.Fatalf("%+v: %d keys, original of %d bytes, copy of %d", res, len(before), len(orig), fi.Size())
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(orig, after) {
		t.Fatal("the original changed")
	}
	if after, err := embedded.Keys(ctx, to); err != nil || !slices.Equal(before, after) {
		t.Fatalf("the copy's keys differ (%v)", err)
	}
	if outcome, detail := checkFixture(to, embedded.Options{}, false); outcome != "intact" {
		t.Fatalf("the copy: %s %s", outcome, detail)
	}
	if entries, _ := os.ReadDir(to); len(entries) != 1 {
		t.Fatalf("the copy's directory holds %d files", len(entries))
	}
	// A target holding files, the store's own directory: refused.
	for _, target := range []string{to, dir} {
		if _, err := embedded.Compact(ctx, dir, target); !errors.Is(err, crdt.ErrInvalidConfig) {
			t.Fatalf("compact into %s: %v", target, err)
		}
	}
	// A target holding only the temporary file of an interrupted
	// compaction is compacted into (the file replaced); with anything
	// else beside it, refused and left as it was.
	interrupted := filepath.Join(t.TempDir(), "interrupted")
	tmp := filepath.Join(interrupted, embedded.CopyTempName)
	if err := os.MkdirAll(interrupted, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, []byte("half a copy"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(interrupted, "notes"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := embedded.Compact(ctx, dir, interrupted); !errors.Is(err, crdt.ErrInvalidConfig) {
		t.Fatalf("compact into a directory holding a temporary file and another: %v", err)
	}
	if b, err := os.ReadFile(tmp); err != nil || string(b) != "half a copy" {
		t.Fatalf("the refused target's temporary file: %q, %v", b, err)
	}
	if err := os.Remove(filepath.Join(interrupted, "notes")); err != nil {
		t.Fatal(err)
	}
	if _, err := embedded.Compact(ctx, dir, interrupted); err != nil {
		t.Fatalf("compact into a directory holding an interrupted copy: %v", err)
	}
	if after, err := embedded.Keys(ctx, interrupted); err != nil || !slices.Equal(before, after) {
		t.Fatalf("the copy over an interrupted one: keys differ (%v)", err)
	}
	if entries, _ := os.ReadDir(interrupted); len(entries) != 1 || entries[0].Name() != embedded.FileName {
		t.Fatalf("the copy over an interrupted one: the directory holds %v", entries)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(orig, after) {
		t.Fatal("the original changed")
	}
	// A value damaged under its checksum (digests recomputed, so that
	// only the records' checks see it) is not copied.
	damageValue := func() {
		b, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		b.Update(func(tx *bolt.Tx) error {
			m := tx.Bucket([]byte("meta"))
			f := bytes.Clone(m.Get([]byte("format")))
			f[len(f)-1] = 1 // format 1: no digests to disagree
			m.Put([]byte("format"), f)
			m.Delete([]byte("digest"))
			s := tx.Bucket([]byte("siblings"))
			k, v := s.Cursor().First()
			v = bytes.Clone(v)
			v[len(v)-1] ^= 1
			return s.Put(bytes.Clone(k), v)
		})
	}
	damageValue()
	bad := filepath.Join(t.TempDir(), "bad")
	if _, err := embedded.Compact(ctx, dir, bad); !errors.Is(err, crdt.ErrCorruptEncoding) {
		t.Fatalf("compact of a damaged value: %v", err)
	}
	if _, err := os.Stat(bad); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused compact left %s (%v)", bad, err)
	}
}

// checkInspect is checkFixture for Keys, ReadStats and Compact: each must
// return the fixture's keys (want) or fail with an allowed sentinel.
func checkInspect(dir string, want []embedded.KeyInfo, allowUnavailable bool) (string, string) {
	allowed := func(err error) bool {
		return errors.Is(err, crdt.ErrCorruptEncoding) || errors.Is(err, crdt.ErrMisconfiguredStore) ||
			errors.Is(err, crdt.ErrUnsupportedVersion) || (allowUnavailable && errors.Is(err, crdt.ErrUnavailable))
	}
	ctx := context.Background()
	keys, err := embedded.Keys(ctx, dir)
	var st *embedded.Stats
	var res embedded.CompactResult
	if err == nil {
		if !slices.Equal(keys, want) {
			return "wrong", fmt.Sprintf("keys: %v", sameKeys(want, keys))
		}
		st, err = embedded.ReadStats(ctx, dir)
	}
	if err == nil {
		if st.SiblingKeys+st.Partitions != len(want) {
			return "wrong", fmt.Sprintf("stats: %d keys, want %d", st.SiblingKeys+st.Partitions, len(want))
		}
		to := dir + ".compacted"
		defer os.RemoveAll(to)
		res, err = embedded.Compact(ctx, dir, to)
	}
	switch {
	case err == nil && res.Keys != len(want):
		return "wrong", fmt.Sprintf("compact: %d keys, want %d", res.Keys, len(want))
	case err == nil:
		return "intact", ""
	case allowed(err):
		return "reported", err.Error()
	}
	return "other", err.Error()
}

// TestInspectDamage runs the damage suite's copies through Keys, ReadStats
// and Compact, each copy in a child process: every copy must list the
// fixture's keys or be reported, never list wrong keys, crash or hang.
// Every kind of copy runs; the random flips are 100 (COUNTERKIT_CASES
// scales them), 25 in the race pass (-short) unless COUNTERKIT_CASES is
// set.
func TestInspectDamage(t *testing.T) {
	t.Parallel()
	orig, b := fixtureFile(t)
	l := layoutOf(t, b)
	rng, _ := seeded(t)
	flips := proptest.Scale(100)
	if testing.Short() && proptest.Scale(1) == 1 {
		flips = 25
	}
	copies := allDamage(l, rng, flips)
	res := runDamagePlan(t, damagePlan{Orig: orig, Inspect: true, Copies: copies}, damageTimeout)
	bad, counts := tallyDamage(t, copies, res)
	for i, s := range bad {
		if i == 40 {
			t.Errorf("... and %d more", len(bad)-40)
			break
		}
		t.Errorf("%s", s)
	}
	if counts["count"]["reported"] == 0 || counts["truncate"]["reported"] == 0 {
		t.Fatalf("no damaged copy was reported: %v", counts)
	}
}

// TestInspectDamageCatchesUncheckedReads runs the lowered leaf counts and
// the zeroed newer meta checksum through Keys without the file check:
// they list wrong keys, so TestInspectDamage can fail; with the check they
// are reported.
func TestInspectDamageCatchesUncheckedReads(t *testing.T) {
	t.Parallel()
	orig, b := fixtureFile(t)
	l := layoutOf(t, b)
	copies := uncheckedCopies(l)
	res := runDamagePlan(t, damagePlan{Orig: orig, Inspect: true, Unchecked: true, Copies: copies}, damageTimeout)
	_, counts := tallyDamage(t, copies, res)
	if counts["count"]["wrong"] == 0 || counts["meta"]["wrong"] != 1 {
		t.Fatalf("the suite did not catch the unchecked reads: %v", counts)
	}
	res = runDamagePlan(t, damagePlan{Orig: orig, Inspect: true, Copies: copies}, damageTimeout)
	if bad, _ := tallyDamage(t, copies, res); len(bad) > 0 {
		t.Fatalf("checked reads: %v", bad)
	}
}

package embedded_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
)

// TestFormat1LeafCountLowered: a format 1 file (0.1.0, no digests)
// whose leaf page lost its last element (its count lowered by one). The
// docs name one exception to "a damaged file is refused, never read
// wrong" for format 1: damage to a tombstone (and a lowered sequence).
// A lowered count drops a sibling or a row, which carry checksums: every
// copy must be refused or read intact; Open must not upgrade over it.
func TestFormat1LeafCountLowered(t *testing.T) {
	t.Parallel()
	_, orig, b := format1Fixture(t)
	l := layoutOf(t, b)
	work := t.TempDir()
	outcomes := map[string]int{}
	for _, pg := range l.pages {
		if l.flags(pg) != flLeaf || l.count(pg) < 2 {
			continue
		}
		d := damage{Class: "format 1 count", Edits: []edit{{pg*l.ps + 10, u16(l.count(pg) - 1)}}, Truncate: -1}
		cdir, err := applyDamage(orig, work, d)
		if err != nil {
			t.Fatal(err)
		}
		outcome, detail := checkFixture(cdir, embedded.Options{}, false)
		outcomes[outcome]++
		if outcome != "intact" && outcome != "reported" {
			t.Errorf("format 1, page %d's count lowered: %s: %s", pg, outcome, detail)
		}
	}
	t.Logf("outcomes: %v", outcomes)
}

// TestFormatMarkerBitFlip: one flipped bit turns the format marker
// of a current file (3) into 2. The record still names its transaction,
// which no format 2 file's does: the file is damaged. The docs: Open
// refuses a file damaged anywhere with crdt.ErrCorruptEncoding, "leaving
// the directory as it was".
func TestFormatMarkerBitFlip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	buildFixture(t, dir)
	path := filepath.Join(dir, embedded.FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	marker := append([]byte("counterkit embedded\x00"), 0, embedded.FormatVersion)
	n := bytes.Count(b, marker)
	if n == 0 {
		t.Fatal("no format marker in the file")
	}
	b = bytes.ReplaceAll(b, marker, append([]byte("counterkit embedded\x00"), 0, embedded.FormatVersion^1))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := embedded.Open(dir, embedded.Options{})
	if err == nil {
		db.Close()
		after, _ := os.ReadFile(path)
		t.Errorf("a format marker with a flipped bit (%d copies in the file) opened; the file changed: %v",
			n, !bytes.Equal(after, b))
	} else if !errors.Is(err, crdt.ErrCorruptEncoding) {
		t.Errorf("Open: %v, want crdt.ErrCorruptEncoding", err)
	}
}

// format1Fixture builds the fixture as a format 1 file (0.1.0, no
// digests) in a new directory: the directory, its data file and bytes.
func format1Fixture(t *testing.T) (dir, path string, b []byte) {
	t.Helper()
	dir = t.TempDir()
	buildFixture(t, dir)
	setFormat(t, dir, 1)
	path = filepath.Join(dir, embedded.FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return dir, path, b
}

// TestFormat1KeyByteFlip: a format 1 file (0.1.0, no digests) in which
// one byte of a row's or a sibling's key is changed, so that the entry
// moves to another partition or key, where nothing reads it. Its checksum
// covers the key, so every way of opening the file must refuse it or read
// it intact: a read-write Open (its upgrade checks every record), a
// read-only one, Keys and ReadStats, which once read such a file without
// the checks and returned a partition short of a row.
func TestFormat1KeyByteFlip(t *testing.T) {
	testsize.SkipSequential(t)
	t.Parallel()
	dir, orig, b := format1Fixture(t)
	work := t.TempDir()
	copies := 0
	for _, name := range []string{"part", "key-s"} {
		for off := 0; ; off++ {
			i := bytes.Index(b[off:], []byte(name))
			if i < 0 {
				break
			}
			off += i
			copies++
			// The name's last byte one higher: the entry moves to a
			// partition or key sorting just after its own, which keeps
			// the page in order when it is the page's last.
			at := off + len(name) - 1
			d := damage{Class: "format 1 key", Edits: []edit{{at, []byte{b[at] + 1}}}, Truncate: -1}
			cdir, err := applyDamage(orig, work, d)
			if err != nil {
				t.Fatal(err)
			}
			for _, ro := range []bool{false, true} {
				if outcome, detail := checkFixture(cdir, embedded.Options{ReadOnly: ro}, false); outcome != "intact" && outcome != "reported" {
					t.Errorf("byte %d of %q (read-only %v): %s: %s", off, name, ro, outcome, detail)
				}
			}
			keys, kerr := embedded.Keys(context.Background(), cdir)
			if kerr != nil && !errors.Is(kerr, crdt.ErrCorruptEncoding) {
				t.Errorf("byte %d of %q: Keys: %v", off, name, kerr)
			}
			if kerr == nil && len(keys) != len(fixtureKeys(t, dir)) {
				t.Errorf("byte %d of %q: Keys lists %d keys, no error; want %d or crdt.ErrCorruptEncoding", off, name, len(keys), len(fixtureKeys(t, dir)))
			}
			if _, err := embedded.ReadStats(context.Background(), cdir); kerr != nil && !errors.Is(err, crdt.ErrCorruptEncoding) {
				t.Errorf("byte %d of %q: Keys refused the file, ReadStats: %v", off, name, err)
			}
		}
	}
	if copies < 10 {
		t.Fatalf("only %d copies damaged: the fixture's keys were not found", copies)
	}
	t.Logf("%d damaged copies", copies)
}

// fixtureKeys lists the undamaged fixture's keys.
func fixtureKeys(t *testing.T, dir string) []embedded.KeyInfo {
	t.Helper()
	keys, err := embedded.Keys(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

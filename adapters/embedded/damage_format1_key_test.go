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
)

// TestFormat1KeyByteFlip: a format 1 file (0.1.0, no digests) in which
// one byte of a row's or a sibling's key is changed, so that the entry
// moves to another partition or key, where nothing reads it. Its checksum
// covers the key, so every way of opening the file must refuse it or read
// it intact: a read-write Open (its upgrade checks every record), a
// read-only one, Keys and ReadStats, which once read such a file without
// the checks and returned a partition short of a row.
func TestFormat1KeyByteFlip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	buildFixture(t, dir)
	setFormat(t, dir, 1)
	orig := filepath.Join(dir, embedded.FileName)
	b, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
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

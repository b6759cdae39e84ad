package embedded_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
)

// TestFormat1LeafCountLowered: a format 1 file (0.1.0, no digests)
// whose leaf page lost its last element (its count lowered by one). The
// docs name one exception to "a damaged file is refused, never read
// wrong" for format 1: damage to a tombstone (and a lowered sequence).
// A lowered count drops a sibling or a row, which carry checksums: every
// copy must be refused or read intact; Open must not upgrade over it.
func TestFormat1LeafCountLowered(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	buildFixture(t, dir)
	setFormat(t, dir, 1)
	orig := filepath.Join(dir, embedded.FileName)
	b, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
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

package embedded_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
)

// TestDamageWhileOpen damages the file of an open store on disk, one leaf
// page at a time (its element count lowered by one, which makes reads
// return one row or sibling fewer with no error of their own), and reads
// everything and verifies through the open store: each copy must be
// intact, or reported by a read or by Verify (reads one row short while
// Verify reports the bucket's digest: "verify"), never wrong with Verify
// passing; restored, it is intact again.
func TestDamageWhileOpen(t *testing.T) {
	counts := damageWhileOpen(t, embedded.Options{})
	if counts["wrong"] > 0 || counts["other"] > 0 {
		t.Fatalf("leaf pages damaged while open: %v", counts)
	}
	if counts["reported"]+counts["verify"] == 0 {
		t.Fatal("no damaged page was reported: the fixture's live leaves were not damaged")
	}
	// The check can fail: the store without its file check and digests
	// returns the short reads with Verify passing.
	if unchecked := damageWhileOpen(t, embedded.UncheckedOptions(embedded.Options{})); unchecked["wrong"] == 0 {
		t.Fatalf("the unchecked store was not caught: %v", unchecked)
	}
}

// damageWhileOpen runs TestDamageWhileOpen's damage on a store opened with
// opts and returns how many copies had each outcome of checkOpenFixture.
func damageWhileOpen(t *testing.T, opts embedded.Options) map[string]int {
	dir := t.TempDir()
	buildFixture(t, dir)
	path := filepath.Join(dir, embedded.FileName)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l := layoutOf(t, orig)
	db, err := embedded.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	corrupt := func(err error) bool { return errors.Is(err, crdt.ErrCorruptEncoding) }
	counts := map[string]int{}
	for _, pg := range l.pages {
		if l.flags(pg) != flLeaf || l.count(pg) < 2 {
			continue
		}
		off := int64(pg*l.ps + 10)
		if _, err := f.WriteAt(u16(l.count(pg)-1), off); err != nil {
			t.Fatal(err)
		}
		outcome, detail := checkOpenFixture(db, corrupt)
		if _, werr := f.WriteAt(orig[off:off+2], off); werr != nil {
			t.Fatal(werr)
		}
		counts[outcome]++
		t.Logf("page %d's count lowered while open: %s (%s)", pg, outcome, detail)
		if outcome, detail := checkOpenFixture(db, corrupt); outcome != "intact" {
			t.Fatalf("page %d restored: %s (%s)", pg, outcome, detail)
		}
	}
	// Free pages hold nothing a read returns: damaging one leaves the
	// store intact.
	t.Logf("leaf pages damaged while open: %v", counts)
	return counts
}

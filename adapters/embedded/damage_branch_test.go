package embedded_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
)

// TestBranchKeyOtherThanItsChildsFirstIsRefused: a branch element's key
// must equal its child's first key, not merely sort before it. The engine
// finds a page's element in its parent by that first key when it writes
// the page again, so with a smaller key it adds a second element for the
// same page: a file that opened and verified stopped opening after
// ordinary acknowledged writes (found by a review). Shortening each
// branch page's first key by a byte (a prefix sorts first) must be
// refused by Open, whichever page it is.
func TestBranchKeyOtherThanItsChildsFirstIsRefused(t *testing.T) {
	t.Parallel()
	_, b := fixtureFile(t)
	l := layoutOf(t, b)
	le := binary.LittleEndian
	// Pages the freelist lists hold no live tree.
	free := map[int]bool{}
	fl := l.freelist * l.ps
	n, ids := int(le.Uint16(b[fl+10:])), fl+hdr
	if n == 0xffff {
		n, ids = int(le.Uint64(b[ids:])), ids+8
	}
	for i := range n {
		free[int(le.Uint64(b[ids+8*i:]))] = true
	}
	work := t.TempDir()
	orig := filepath.Join(t.TempDir(), embedded.FileName)
	if err := os.WriteFile(orig, b, 0o600); err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, pg := range l.pages {
		if l.flags(pg) != flBranch || l.count(pg) == 0 {
			continue
		}
		e := l.elem(pg, 0)
		ks := le.Uint32(b[e+4:])
		if ks < 2 {
			continue
		}
		if free[pg] {
			continue
		}
		tried++
		d := damage{Class: "branch key", Edits: []edit{{e + 4, u32(int(ks) - 1)}}, Truncate: -1}
		dir, err := applyDamage(orig, work, d)
		if err != nil {
			t.Fatal(err)
		}
		db, err := embedded.Open(dir, embedded.Options{})
		if err == nil {
			db.Close()
			t.Errorf("page %d: a first key shorter than its child's is accepted", pg)
			continue
		}
		if !errors.Is(err, crdt.ErrCorruptEncoding) {
			t.Errorf("page %d: %v, want crdt.ErrCorruptEncoding", pg, err)
		}
	}
	if tried == 0 {
		t.Fatal("the fixture has no branch page")
	}
}

package embedded_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
)

// TestLostPageWriteIsReported: a disk that acknowledges a page write and
// loses it leaves the page as an earlier commit wrote it, beside the
// newest meta page. For every page of a store after 8 acknowledged Puts,
// put back its content from each earlier version (a lost write): Open
// refuses the file (crdt.ErrCorruptEncoding), or reads every acknowledged
// value. In a small store one page holds every bucket and the digest
// record, which then vouches for the old content: the record names the
// transaction that wrote it, and a review found 7 of 7 rollbacks of that
// page read back as stores missing acknowledged keys before it did.
func TestLostPageWriteIsReported(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const puts = 8
	var versions [][]byte
	for i := range puts {
		if err := db.Siblings().Put(ctx, fmt.Sprintf("k%d", i), "a", fmt.Appendf(nil, "value-%d", i), nil); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, embedded.FileName)) // acknowledged: durable
		if err != nil {
			t.Fatal(err)
		}
		versions = append(versions, b)
	}
	db.Close()
	final := versions[puts-1]
	l := layoutOf(t, final)
	refused, intactCopies := 0, 0
	for pg := 2; pg < l.hwm; pg++ {
		page := func(b []byte) []byte { return b[pg*l.ps : (pg+1)*l.ps] }
		for v, old := range versions[:puts-1] {
			if len(old) < (pg+1)*l.ps || bytes.Equal(page(old), page(final)) {
				continue
			}
			b := slices.Clone(final)
			copy(page(b), page(old))
			cdir := t.TempDir()
			if err := os.WriteFile(filepath.Join(cdir, embedded.FileName), b, 0o600); err != nil {
				t.Fatal(err)
			}
			db, err := embedded.Open(cdir, embedded.Options{})
			if err != nil {
				if !errors.Is(err, crdt.ErrCorruptEncoding) {
					t.Errorf("page %d from version %d: %v, want crdt.ErrCorruptEncoding", pg, v, err)
				}
				refused++
				continue
			}
			for i := range puts {
				vals, _, err := db.Siblings().Fetch(ctx, fmt.Sprintf("k%d", i))
				if err != nil || len(vals) != 1 || string(vals[0]) != fmt.Sprintf("value-%d", i) {
					t.Errorf("page %d from version %d: opened, and k%d reads %q, %v", pg, v, i, vals, err)
				}
			}
			db.Close()
			intactCopies++
		}
	}
	if refused == 0 {
		t.Fatal("no page went back to an earlier content")
	}
	t.Logf("%d lost page writes refused, %d read intact", refused, intactCopies)
}

package embedded_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
)

// TestCopyOpensAfterWrites: a copy made by Backup or by WriteBackup and
// Restore, of a store of any format after 0–3 writes, opens, takes writes
// and opens again. The engine writes a copy's transaction T on meta page
// 0 and T−1 on page 1, and its next write, T+1, to page (T+1) mod 2: with
// an odd T the pages then hold T+1 and T−1, which the check refused as
// damage, after one write or after Open's upgrade of an older format (a
// review: 128 of 1,463 sequences of three operations). The same shape
// from the copy of a format 2 store read ReadOnly, whose first Open
// upgrades it.
func TestCopyOpensAfterWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, version := range []uint16{2, embedded.FormatVersion} {
		for puts := range 4 {
			for _, how := range []string{"backup", "restore"} {
				name := fmt.Sprintf("format%d/%s/puts%d", version, how, puts)
				db, dir := openTemp(t, embedded.Options{})
				fill(t, db, "x", puts)
				db.Close()
				if version != embedded.FormatVersion {
					setFormat(t, dir, version)
				}
				src, err := embedded.Open(dir, embedded.Options{ReadOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				to := filepath.Join(t.TempDir(), "copy")
				if how == "backup" {
					err = src.Backup(ctx, to)
				} else {
					r, w := io.Pipe()
					go func() { _, err := src.WriteBackup(ctx, w); w.CloseWithError(err) }()
					_, err = embedded.Restore(ctx, r, to)
				}
				src.Close()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for round := range 3 {
					db, err := embedded.Open(to, embedded.Options{})
					if err != nil {
						t.Fatalf("%s: open %d: %v", name, round+1, err)
					}
					intact(t, db, "x", puts)
					fill(t, db, fmt.Sprint("after", round), 1)
					if err := db.Verify(); err != nil {
						t.Fatalf("%s: verify %d: %v", name, round+1, err)
					}
					db.Close()
				}
			}
		}
	}
}

// TestCompactOfFormat2StaysFormat2: Compact copies a store as it is, so a
// format 2 store's copy keeps format 2's digest record (naming no
// transaction), which a build that reads only format 2 accepts (a review
// found the copy restamped in format 3's layout under format 2's marker).
func TestCompactOfFormat2StaysFormat2(t *testing.T) {
	t.Parallel()
	db, dir := openTemp(t, embedded.Options{})
	fill(t, db, "c", 5)
	db.Close()
	setFormat(t, dir, 2)
	to := filepath.Join(t.TempDir(), "compacted")
	if _, err := embedded.Compact(context.Background(), dir, to); err != nil {
		t.Fatal(err)
	}
	v, want := formatOf(t, dir)
	if v != 2 {
		t.Fatalf("the original is format %d", v)
	}
	if v, got := formatOf(t, to); v != 2 || got != want {
		t.Fatalf("the copy is format %d with a digest record of %d bytes, the format 2 original's %d", v, got, want)
	}
}

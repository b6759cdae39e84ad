package vectors

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDirFrom(t *testing.T) {
	cache := t.TempDir()
	versioned := filepath.Join(cache, "github.com", "counterkit", "counterkit@v1.2.3")
	if err := os.MkdirAll(filepath.Join(versioned, "testdata", "vectors"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file, want, err string
	}{
		{"checkout or module cache", filepath.ToSlash(filepath.Join(versioned, "vectors", "dir.go")), filepath.Join(versioned, "testdata", "vectors"), ""},
		{"-trimpath, a required version", "github.com/counterkit/counterkit@v1.2.3/vectors/dir.go", filepath.Join(versioned, "testdata", "vectors"), ""},
		{"-trimpath, a checkout", "github.com/counterkit/counterkit/vectors/dir.go", "", "built with -trimpath"},
		{"-trimpath, a version not in the cache", "github.com/counterkit/counterkit@v9.9.9/vectors/dir.go", "", "not on this machine"},
		{"a checkout that is gone", filepath.ToSlash(filepath.Join(cache, "gone", "vectors", "dir.go")), "", "not on this machine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dirFrom(tc.file, cache)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "name the vectors directory") {
					t.Fatalf("got %q, %v; want an error containing %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

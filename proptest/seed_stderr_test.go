package proptest

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// TestRandomSeedIsWrittenToStderr: a seed drawn at random is written to
// standard error with the test that drew it (from a subtest's closure
// too), where a hang until go test's -timeout still shows it; a seed set
// by COUNTERKIT_SEED is not written.
func TestRandomSeedIsWrittenToStderr(t *testing.T) {
	stderr := func(f func()) string {
		t.Helper()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		old := os.Stderr
		os.Stderr = w
		f()
		os.Stderr = old
		w.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	t.Setenv(EnvSeed, "")
	var seed int64
	t.Run("drawn", func(t *testing.T) {
		out := stderr(func() { seed = Seed() })
		if want := fmt.Sprintf("proptest: proptest.TestRandomSeedIsWrittenToStderr drew %s=%d at random\n", EnvSeed, seed); out != want {
			t.Errorf("standard error %q, want %q", out, want)
		}
	})
	t.Setenv(EnvSeed, "42")
	if out := stderr(func() { seed = Seed() }); out != "" || seed != 42 {
		t.Errorf("seed set to 42: %d, and %q on standard error; want 42 and nothing", seed, out)
	}
	if got := func() string { return callingTest() }(); !strings.HasSuffix(got, ".TestRandomSeedIsWrittenToStderr") {
		t.Errorf("callingTest from a closure: %q", got)
	}
}

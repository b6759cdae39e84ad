package embedded_test

import (
	"math/rand/v2"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/proptest"
)

// openTemp opens a DB in a fresh temporary directory, closed at the end of
// the test.
func openTemp(t testing.TB, opts embedded.Options) (*embedded.DB, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := embedded.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, dir
}

// seeded returns a random source seeded from COUNTERKIT_SEED (or the clock)
// and logs the command that replays the test.
func seeded(t testing.TB) (*rand.Rand, int64) {
	t.Helper()
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	return rand.New(rand.NewPCG(uint64(seed), 0x656d62)), seed
}

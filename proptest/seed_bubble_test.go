//go:build go1.25

package proptest

import (
	"testing"
	"testing/synctest"
)

// TestSeedsDifferInsideBubbles: two seeds drawn inside synctest bubbles,
// whose clock is fake and starts at the same instant, differ (drawn from
// the clock, each was 946684800000000000).
func TestSeedsDifferInsideBubbles(t *testing.T) {
	t.Setenv(EnvSeed, "")
	var seeds [2]int64
	for i := range seeds {
		synctest.Test(t, func(t *testing.T) { seeds[i] = Seed() })
	}
	if seeds[0] == seeds[1] {
		t.Errorf("two synctest bubbles drew the same seed, %d", seeds[0])
	}
}

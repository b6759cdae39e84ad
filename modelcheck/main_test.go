package modelcheck

import (
	"os"
	"runtime"
	"testing"
)

// TestMain runs the checker on one P unless GOMAXPROCS says otherwise. The
// explorer decides every store call itself and waits, spinning, until the
// other goroutines are blocked (World.waitQuiet), so more Ps add no
// schedules, only spinning: on two cores the CI scopes took 148 s of CPU
// with two Ps and 54 s with one, in about the same wall time.
func TestMain(m *testing.M) {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	os.Exit(m.Run())
}

//go:build !race

package vectors

// raceEnabled reports whether the test binary was built with -race.
const raceEnabled = false

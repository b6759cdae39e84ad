//go:build race

package embedded_test

// raceEnabled reports whether the test binary was built with -race: the
// race pass (-short) then runs the crash tests too, whose children are
// this binary.
const raceEnabled = true

//go:build race

package main

// raceEnabled reports whether the test binary was built with -race; the
// process test then builds the service with -race too, reusing the cache.
const raceEnabled = true

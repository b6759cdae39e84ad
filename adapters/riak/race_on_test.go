//go:build race

package riak_test

// raceEnabled reports whether the test binary was built with -race.
const raceEnabled = true

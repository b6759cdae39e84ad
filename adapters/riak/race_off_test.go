//go:build !race

package riak_test

const raceEnabled = false

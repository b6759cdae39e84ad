package riak_test

import (
	"testing"
	"time"

	"github.com/counterkit/counterkit/conformance"
	"github.com/counterkit/counterkit/store"
)

// The behaviour suites run on every backend: the test double in a created
// bucket type and in its default type, and, with RIAK_ADDR set, a real Riak
// (in the bucket type RIAK_BUCKET_TYPE). Every subtest of a suite gets a
// fresh store.Siblings, and keys are unique, so a real bucket may be shared.

// suiteRequestTimeout is the per-request timeout of the clusters the
// suites use. They inject no faults that cost a timeout, and they store
// values of up to 16 MiB, which the double takes seconds to receive under
// the race detector on a loaded machine.
const suiteRequestTimeout = 30 * time.Second

// openSiblings returns a fresh riak.Siblings on b, on a cluster of its own
// with suiteRequestTimeout.
func openSiblings(t *testing.T, b backend) store.Siblings {
	tg := b.open(t)
	return newStore(t, newClusterTimeout(t, tg.addr, suiteRequestTimeout), tg.opts)
}

// TestDrivers runs the behaviour suite of every driver built on
// store.Siblings (conformance.Siblings: ledger, statestore, bounded) over
// riak.Siblings.
func TestDrivers(t *testing.T) { eachBackend(t, suiteOn(conformance.Siblings)) }

// suiteOn runs a behaviour suite on a backend, each of its subtests on a
// fresh store (openSiblings).
func suiteOn(suite func(*testing.T, func(*testing.T) store.Siblings)) func(*testing.T, backend) {
	return func(t *testing.T, b backend) {
		suite(t, func(t *testing.T) store.Siblings { return openSiblings(t, b) })
	}
}

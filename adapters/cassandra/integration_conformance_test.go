package cassandra

// The drivers' shared suites (package conformance), through eachTarget:
// on the model of Cassandra's rules in CI, and on the real cluster named
// by CASSANDRA_HOSTS (see harness_test.go), whose subtest skips with the
// harness's reason when it is not set. Subtests share the tables and use
// keys of their own. model_conformance_test.go runs two of them on the
// model again with small scan pages.

import (
	"testing"

	"github.com/counterkit/counterkit/conformance"
	"github.com/counterkit/counterkit/store"
)

// TestConformanceSiblings runs the drivers built on store.Siblings
// (conformance.Siblings: ledger, statestore, bounded).
func TestConformanceSiblings(t *testing.T) {
	eachTarget(t, onSiblings(Options{}, conformance.Siblings))
}

// TestConformancePartitions runs the drivers built on store.Partitions
// (conformance.Partitions: tally, deltalog, balance); long scans cross
// many pages.
func TestConformancePartitions(t *testing.T) {
	eachTarget(t, onPartitions(Options{ScanPageSize: 97}, conformance.Partitions))
}

// onSiblings and onPartitions run a suite on a target's store of that
// shape, in a DB opened with o.
func onSiblings(o Options, suite func(*testing.T, func(*testing.T) store.Siblings)) func(*testing.T, *target) {
	return func(t *testing.T, tg *target) {
		db := tg.newDB(t, o)
		suite(t, func(*testing.T) store.Siblings { return db.Siblings() })
	}
}

func onPartitions(o Options, suite func(*testing.T, func(*testing.T) store.Partitions)) func(*testing.T, *target) {
	return func(t *testing.T, tg *target) {
		db := tg.newDB(t, o)
		suite(t, func(*testing.T) store.Partitions { return db.Partitions() })
	}
}

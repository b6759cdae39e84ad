package cassandra

// The shared suites, one call each, through eachTarget: on the model of
// Cassandra's rules in CI, and on the real cluster named by
// CASSANDRA_HOSTS (see harness_test.go), whose subtest skips with the
// harness's reason when it is not set. Subtests share the tables and use
// keys of their own. model_conformance_test.go runs two of them on the
// model again with small scan pages.

import (
	"testing"

	"github.com/counterkit/counterkit/balance/balancetest"
	"github.com/counterkit/counterkit/bounded/boundedtest"
	"github.com/counterkit/counterkit/deltalog/deltalogtest"
	"github.com/counterkit/counterkit/ledger/ledgertest"
	"github.com/counterkit/counterkit/statestore/statestoretest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally/tallytest"
)

func TestConformanceStateStore(t *testing.T) {
	eachTarget(t, onSiblings(Options{}, statestoretest.Run))
}
func TestConformanceLedger(t *testing.T)  { eachTarget(t, onSiblings(Options{}, ledgertest.Run)) }
func TestConformanceBounded(t *testing.T) { eachTarget(t, onSiblings(Options{}, boundedtest.Run)) }
func TestConformanceTally(t *testing.T)   { eachTarget(t, onPartitions(Options{}, tallytest.Run)) }
func TestConformanceBalance(t *testing.T) { eachTarget(t, onPartitions(Options{}, balancetest.Run)) }

// Long scans cross many pages.
func TestConformanceDeltalog(t *testing.T) {
	eachTarget(t, onPartitions(Options{ScanPageSize: 97}, deltalogtest.Run))
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

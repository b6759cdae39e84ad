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

func TestConformanceStateStore(t *testing.T) { eachTarget(t, conformanceStateStore) }

func conformanceStateStore(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{})
	statestoretest.Run(t, func(t *testing.T) store.Siblings { return db.Siblings() })
}

func TestConformanceLedger(t *testing.T) { eachTarget(t, conformanceLedger) }

func conformanceLedger(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{})
	ledgertest.Run(t, func(t *testing.T) store.Siblings { return db.Siblings() })
}

func TestConformanceTally(t *testing.T) { eachTarget(t, conformanceTally) }

func conformanceTally(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{})
	tallytest.Run(t, func(t *testing.T) store.Partitions { return db.Partitions() })
}

func TestConformanceDeltalog(t *testing.T) { eachTarget(t, conformanceDeltalog) }

func conformanceDeltalog(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{ScanPageSize: 97}) // long scans cross many pages
	deltalogtest.Run(t, func(t *testing.T) store.Partitions { return db.Partitions() })
}

func TestConformanceBalance(t *testing.T) { eachTarget(t, conformanceBalance) }

func conformanceBalance(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{})
	balancetest.Run(t, func(t *testing.T) store.Partitions { return db.Partitions() })
}

func TestConformanceBounded(t *testing.T) { eachTarget(t, conformanceBounded) }

func conformanceBounded(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{})
	boundedtest.Run(t, func(t *testing.T) store.Siblings { return db.Siblings() })
}

package cassandra

// The shared suites, one call each, against the real cluster named by
// CASSANDRA_HOSTS (see harness_test.go); each test skips with the
// harness's reason when it is not set. Subtests share the suite keyspace
// and use keys of their own. The same suites run in CI against the model
// of Cassandra's rules (model_conformance_test.go).

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
	db := newTestDB(t, Options{})
	statestoretest.Run(t, func(t *testing.T) store.Siblings { return db.Siblings() })
}

func TestConformanceLedger(t *testing.T) {
	db := newTestDB(t, Options{})
	ledgertest.Run(t, func(t *testing.T) store.Siblings { return db.Siblings() })
}

func TestConformanceTally(t *testing.T) {
	db := newTestDB(t, Options{})
	tallytest.Run(t, func(t *testing.T) store.Partitions { return db.Partitions() })
}

func TestConformanceDeltalog(t *testing.T) {
	db := newTestDB(t, Options{ScanPageSize: 97}) // long scans cross many pages
	deltalogtest.Run(t, func(t *testing.T) store.Partitions { return db.Partitions() })
}

func TestConformanceBalance(t *testing.T) {
	db := newTestDB(t, Options{})
	balancetest.Run(t, func(t *testing.T) store.Partitions { return db.Partitions() })
}

func TestConformanceBounded(t *testing.T) {
	db := newTestDB(t, Options{})
	boundedtest.Run(t, func(t *testing.T) store.Siblings { return db.Siblings() })
}

package cassandra

// Every shared conformance suite, one call each, against the real cluster
// named by CASSANDRA_HOSTS (see harness_test.go); each test skips with the
// harness's reason when it is not set. Subtests share the suite keyspace
// and use keys of their own.
//
// statestore and ledger also run against a model of Cassandra's timestamp
// rules in CI (model_conformance_test.go); tally, deltalog and balance
// depend on clustering order, range deletes, static columns and paging,
// which only a server checks.

import (
	"testing"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/balance/balancetest"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/deltalog/deltalogtest"
	"github.com/counterkit/counterkit/statestore"
	"github.com/counterkit/counterkit/statestore/storetest"
	"github.com/counterkit/counterkit/tally"
	"github.com/counterkit/counterkit/tally/tallytest"
)

func TestConformanceStates(t *testing.T) {
	db := newTestDB(t, Options{})
	storetest.Run(t, func(t *testing.T) statestore.Store { return db.States() })
}

// TestConformanceLedger runs ledgertest; LedgerStore validates every value.
func TestConformanceLedger(t *testing.T) {
	db := newTestDB(t, Options{})
	runLedgerSuite(t, func(t *testing.T) *LedgerStore { return db.Ledger() })
}

func TestConformanceTally(t *testing.T) {
	db := newTestDB(t, Options{})
	tallytest.Run(t, func(t *testing.T) tally.Store { return db.Tally() })
}

func TestConformanceDeltalog(t *testing.T) {
	db := newTestDB(t, Options{LogPageSize: 97}) // LongScanCrossesPages crosses many pages
	deltalogtest.Run(t, func(t *testing.T) deltalog.Store { return db.Log() })
}

func TestConformanceBalance(t *testing.T) {
	db := newTestDB(t, Options{})
	balancetest.Run(t, func(t *testing.T) balance.Store { return db.Balance() })
}

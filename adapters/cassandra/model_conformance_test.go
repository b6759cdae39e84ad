package cassandra

// The shared suites, run in CI against the adapter's real stores with
// their I/O routed to the model of Cassandra's rules (model_test.go). The
// same suites run against a real cluster in
// integration_conformance_test.go.

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

func TestModelStateStore(t *testing.T) {
	statestoretest.Run(t, func(t *testing.T) store.Siblings { s, _ := modelSiblings(t); return s })
}

func TestModelLedger(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) store.Siblings { s, _ := modelSiblings(t); return s })
}

func TestModelTally(t *testing.T) {
	tallytest.Run(t, func(t *testing.T) store.Partitions { p, _ := modelPartitions(t, Options{}); return p })
}

func TestModelDeltalog(t *testing.T) {
	deltalogtest.Run(t, func(t *testing.T) store.Partitions { p, _ := modelPartitions(t, Options{ScanPageSize: 7}); return p })
}

func TestModelBalance(t *testing.T) {
	balancetest.Run(t, func(t *testing.T) store.Partitions { p, _ := modelPartitions(t, Options{ScanPageSize: 5}); return p })
}

func TestModelBounded(t *testing.T) {
	boundedtest.Run(t, func(t *testing.T) store.Siblings { s, _ := modelSiblings(t); return s })
}

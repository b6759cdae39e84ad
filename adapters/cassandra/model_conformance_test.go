package cassandra

// The log-shaped suites again on the model, with scan pages of a few rows
// so that every long scan crosses many pages (the eachTarget runs in
// integration_conformance_test.go use the cluster's page sizes).

import (
	"testing"

	"github.com/counterkit/counterkit/balance/balancetest"
	"github.com/counterkit/counterkit/deltalog/deltalogtest"
	"github.com/counterkit/counterkit/store"
)

func TestModelDeltalog(t *testing.T) {
	deltalogtest.Run(t, func(t *testing.T) store.Partitions { p, _ := modelPartitions(t, Options{ScanPageSize: 7}); return p })
}

func TestModelBalance(t *testing.T) {
	balancetest.Run(t, func(t *testing.T) store.Partitions { p, _ := modelPartitions(t, Options{ScanPageSize: 5}); return p })
}

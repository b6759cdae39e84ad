package riak_test

import (
	"testing"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/ledger/ledgertest"
	"github.com/counterkit/counterkit/statestore"
	"github.com/counterkit/counterkit/statestore/storetest"
)

// TestStateStoreConformance runs the shared statestore suite against the
// test double and, with RIAK_ADDR set, a real Riak; every subtest of the
// suite gets a fresh store.
func TestStateStoreConformance(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		storetest.Run(t, func(t *testing.T) statestore.Store {
			cl, bucket := b.open(t)
			s, err := riak.NewStateStore(ctx, cl, riak.Options{Bucket: bucket}, riak.MergeCounters)
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}

// TestLedgerConformance runs the shared ledger store suite against the test
// double and, with RIAK_ADDR set, a real Riak.
func TestLedgerConformance(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ledgertest.Run(t, func(t *testing.T) ledger.Store {
			cl, bucket := b.open(t)
			return newStore(t, cl, riak.Options{Bucket: bucket})
		})
	})
}

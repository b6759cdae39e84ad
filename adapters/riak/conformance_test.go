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
// test double (in a created bucket type and in its default type) and, with
// RIAK_ADDR set, a real Riak; every subtest of the suite gets a fresh store.
func TestStateStoreConformance(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		storetest.Run(t, func(t *testing.T) statestore.Store {
			tg := b.open(t)
			s, err := riak.NewStateStore(ctx, tg.cl, tg.opts, riak.MergeCounters)
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}

// TestLedgerConformance runs the shared ledger store suite against the test
// double (in a created bucket type and in its default type) and, with
// RIAK_ADDR set, a real Riak.
func TestLedgerConformance(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ledgertest.Run(t, func(t *testing.T) ledger.Store {
			tg := b.open(t)
			return newStore(t, tg.cl, tg.opts)
		})
	})
}

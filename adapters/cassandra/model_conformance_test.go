package cassandra

// The shared statestore and ledger conformance suites, run in CI against
// the adapter's real stores with their I/O routed to rowModel (see
// model_test.go). The same suites run against a real cluster in
// integration_conformance_test.go.

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/ledger/ledgertest"
	"github.com/counterkit/counterkit/statestore"
	"github.com/counterkit/counterkit/statestore/storetest"
)

// unitDB is a DB without a session, for tests whose I/O goes to a model.
func unitDB(t testing.TB) *DB {
	t.Helper()
	db, err := newDB(nil, "ks", Options{})
	require.NoError(t, err)
	return db
}

func modelStates(db *DB, m *rowModel) *StateStore {
	s := db.States()
	m.attach(&s.rows)
	return s
}

func modelLedger(db *DB, m *rowModel) *LedgerStore {
	l := db.Ledger()
	m.attach(&l.rows)
	return l
}

func TestModelStatesConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) statestore.Store { return modelStates(unitDB(t), newRowModel()) })
}

// runLedgerSuite runs ledgertest against stores from newStore. Every value
// the suite Puts is a tpncounter encoding, so LedgerStore's validation runs
// unchanged.
func runLedgerSuite(t *testing.T, newStore func(t *testing.T) *LedgerStore) {
	ledgertest.Run(t, func(t *testing.T) ledger.Store { return newStore(t) })
}

func TestModelLedgerConformance(t *testing.T) {
	runLedgerSuite(t, func(t *testing.T) *LedgerStore { return modelLedger(unitDB(t), newRowModel()) })
}

// TestModelLedgerRefusesBadValues: raw bytes and every other
// non-tpncounter encoding are refused with the decoder's sentinel and nothing
// is written.
func TestModelLedgerRefusesBadValues(t *testing.T) {
	ctx := context.Background()
	m := newRowModel()
	l := modelLedger(unitDB(t), m)
	for _, v := range []string{"one", "from-a", "merged"} {
		require.ErrorIs(t, l.Put(ctx, "k", "a", []byte(v), nil), crdt.ErrCorruptEncoding, v)
	}
	for _, tc := range storetest.BadEncodings() {
		err := l.Put(ctx, "k", "a", tc.Data, nil)
		require.Error(t, err, tc.Name)
		if tc.Name != "other type" && tc.Name != "unsupported version" {
			// gcounter-specific cases: any decoder sentinel will do.
			require.True(t, isDecodeSentinel(err), "%s: %v", tc.Name, err)
		} else {
			require.ErrorIs(t, err, crdt.ErrTypeMismatch, tc.Name) // a gcounter is not a tpncounter
		}
	}
	_, writes := m.counts()
	require.Zero(t, writes, "refused Puts write nothing")
	sibs, tok, err := l.Fetch(ctx, "k")
	require.NoError(t, err)
	require.Empty(t, sibs)
	require.Nil(t, tok)
}

func isDecodeSentinel(err error) bool {
	for _, s := range []error{crdt.ErrCorruptEncoding, crdt.ErrTypeMismatch, crdt.ErrUnsupportedVersion, crdt.ErrTooLarge} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

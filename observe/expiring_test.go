package observe_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/statestore"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// expiringStore is a memory store that says its values expire after ttl
// (store.Expiring), as a Cassandra DB with SiblingsTTL does; it deletes.
type expiringStore struct {
	*memory.Siblings
	ttl time.Duration
}

func (e expiringStore) TTL() time.Duration { return e.ttl }

// expiringNoDelete is the same without store.SiblingDeleter.
type expiringNoDelete struct {
	store.Siblings
	store.Expiring
}

// TestSiblingsKeepsExpiring: a wrapped store is a store.Expiring, with
// its inner store's TTL, exactly when the inner store is one (with or
// without Delete), so that a ledger, a bounded Account and statestore
// refuse it for counter state as they refuse the store itself, and a
// ledger refuses it as a records store expiring records too soon.
func TestSiblingsKeepsExpiring(t *testing.T) {
	ctx := context.Background()
	day := 24 * time.Hour
	for _, tc := range []struct {
		name           string
		inner          store.Siblings
		ttl            time.Duration
		deletes, isExp bool
	}{
		{"for good", memory.NewSiblings(), 0, true, false},
		{"for good, no delete", struct{ store.Siblings }{memory.NewSiblings()}, 0, false, false},
		{"expiring", expiringStore{memory.NewSiblings(), 2 * day}, 2 * day, true, true},
		{"expiring, no delete", expiringNoDelete{memory.NewSiblings(), expiringStore{nil, 2 * day}}, 2 * day, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sib := observe.Siblings(tc.inner, &recorder{})
			_, del := sib.(store.SiblingDeleter)
			_, exp := sib.(store.Expiring)
			require.Equal(t, tc.deletes, del, "SiblingDeleter")
			require.Equal(t, tc.isExp, exp, "Expiring")
			require.Equal(t, tc.ttl, store.TTL(sib))

			_, err := ledger.New(sib, "acct", ledger.Options{Actor: "a"})
			_, berr := bounded.Open(sib, "bacct", bounded.AccountOptions{Actor: "a"})
			_, serr := statestore.Update[tpncounter.Counter](ctx, sib, "st", "a", func(*tpncounter.Counter) error { return nil })
			for i, err := range []error{err, berr, serr} {
				if tc.isExp {
					require.ErrorIs(t, err, crdt.ErrInvalidConfig, "constructor %d", i)
				} else {
					require.NoError(t, err, "constructor %d", i)
				}
			}

			// As a records store: refused when it keeps records for less
			// than RetryWindow (here 3 days).
			_, err = ledger.New(memory.NewSiblings(), "acct", ledger.Options{Actor: "a", RetryWindow: 3 * day, Records: sib})
			if tc.isExp {
				require.ErrorIs(t, err, crdt.ErrInvalidConfig)
			} else {
				require.NoError(t, err)
			}
		})
	}
}

// A wrapped store that lists its keys and deletes in batches (the memory
// store) does both through the wrapper, reported as "keys" and
// "delete_batch", so that ledger.ExpireAllRecords sweeps through it and
// deletes each page of dead records in one write.
func TestSiblingsForwardsTheSweep(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	sib := observe.Siblings(memory.NewSiblings(), rec)
	sweepable, ok := sib.(interface {
		store.Siblings
		store.SiblingDeleter
		ledger.KeyLister
	})
	require.True(t, ok, "the memory store lists its keys, so the wrapper does")
	_, ok = sib.(store.SiblingBatchDeleter)
	require.True(t, ok, "the memory store deletes in batches, so the wrapper does")

	l, err := ledger.New(sib, "acct", ledger.Options{Actor: "a"})
	require.NoError(t, err)
	for _, x := range []crdt.TxnID{"t1", "t2", "t3"} {
		_, err := l.Credit(ctx, x, 1)
		require.NoError(t, err)
	}
	rec.take()
	later := func() time.Time { return time.Now().Add(ledger.DefaultExpireAfter + time.Hour) }
	res, err := ledger.ExpireAllRecords(ctx, sweepable, ledger.ExpireOptions{Clock: later})
	require.NoError(t, err)
	require.Equal(t, ledger.ExpireResult{Deleted: 2, Dating: 1}, res) // t3 dates a
	ops := map[string]int{}
	for _, e := range rec.take() {
		require.Equal(t, "store.siblings", e.Component)
		require.Equal(t, observe.OK, e.Outcome, "%s: %v", e.Op, e.Err)
		ops[e.Op]++
		if e.Op == "delete_batch" {
			require.Equal(t, 2, e.Rows)
		}
	}
	require.Equal(t, map[string]int{"keys": 2, "fetch": 4, "delete_batch": 1}, ops) // 3 records and acct
	keys, err := sweepable.Keys(ctx, ledger.RecordKeyPrefix, "", 10)
	require.NoError(t, err)
	require.Equal(t, []string{ledger.RecordKey("acct", "t3")}, keys)
}

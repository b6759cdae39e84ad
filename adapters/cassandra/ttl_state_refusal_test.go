package cassandra

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/statestore"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

// TestSiblingsTTLRefusedForCounterState: a DB with any SiblingsTTL, down
// to a nanosecond (a row kept a second), is refused with
// crdt.ErrInvalidConfig by everything that keeps counter state in a
// store.Siblings (a ledger, a Sharded ledger, a Book, a bounded Account,
// statestore's Save and Update), directly and through the observe and
// faulty wrappers, and nothing is read or written; the same DB without a
// TTL is accepted.
func TestSiblingsTTLRefusedForCounterState(t *testing.T) {
	ctx := context.Background()
	for _, ttl := range []time.Duration{0, time.Nanosecond, time.Second, ledger.DefaultExpireAfter, MaxSiblingsTTL} {
		db, err := newDB(nil, "ks", Options{SiblingsTTL: ttl})
		require.NoError(t, err)
		m := newCQLModel(db)
		m.attach(db)
		f := faulty.NewSiblings(db.Siblings(), faulty.Options{})
		for _, st := range []store.Siblings{
			db.Siblings(),
			observe.Siblings(db.Siblings(), observe.Func(func(context.Context, observe.Event) {})),
			f, f.Store(),
		} {
			_, lerr := ledger.New(st, "acct", ledger.Options{Actor: "a"})
			_, serr := ledger.NewSharded(st, "hot", 4, ledger.Options{Actor: "a"})
			_, kerr := ledger.NewBook(st, ledger.BookOptions{Options: ledger.Options{Actor: "a"}})
			_, berr := bounded.Open(st, "bacct", bounded.AccountOptions{Actor: "a"})
			if ttl == 0 {
				for i, err := range []error{lerr, serr, kerr, berr} {
					require.NoError(t, err, "constructor %d on %T", i, st)
				}
				continue
			}
			saveErr := statestore.Save(ctx, st, "views", "a", &gcounter.Counter{})
			_, updErr := statestore.Update[gcounter.Counter](ctx, st, "views", "a", func(*gcounter.Counter) error { return nil })
			for i, err := range []error{lerr, serr, kerr, berr, saveErr, updErr} {
				require.ErrorIs(t, err, crdt.ErrInvalidConfig, "SiblingsTTL %v, call %d on %T", ttl, i, st)
			}
		}
		if ttl > 0 {
			reads, writes := m.counts()
			require.Zero(t, reads+writes, "SiblingsTTL %v", ttl)
		}
	}
}

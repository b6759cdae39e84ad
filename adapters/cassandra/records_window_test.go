package cassandra

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/ledger/ledgertest"
	"github.com/counterkit/counterkit/store"
)

// TestModelRecordsTTLLastInstantOfTheWindow: a records DB with the
// shortest SiblingsTTL ledger.New accepts keeps a record through the last
// instant of the retry window on the model of Cassandra's rules, even
// for a record written in the last nanosecond of a second (Cassandra
// counts the TTL from the second, truncated), and drops it a nanosecond
// after (ledgertest.RecordsKeepTheWindow). SiblingsTTL is rounded up to
// whole seconds and TTL reports a second less, so the window itself
// (plus FutureSkew for timed transactions) is refused and a nanosecond
// more is the least accepted.
func TestModelRecordsTTLLastInstantOfTheWindow(t *testing.T) {
	ledgertest.RecordsKeepTheWindow(t, func(t *testing.T, least time.Duration, now func() time.Time, opts ledger.Options) (store.Siblings, store.Siblings) {
		accDB, err := newDB(nil, "ks", Options{Now: now})
		require.NoError(t, err)
		m := newCQLModel(accDB)
		m.attach(accDB)
		records := func(ttl time.Duration) *Siblings {
			db, err := newDB(nil, "ks", Options{TablePrefix: "counterkit_records_", SiblingsTTL: ttl, Now: now})
			require.NoError(t, err)
			m.createTables(db)
			m.attach(db)
			return db.Siblings()
		}
		short := records(least)
		require.Equal(t, least-time.Second, short.TTL())
		opts.Records = short
		_, err = ledger.New(accDB.Siblings(), "acct", opts)
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "a TTL of the window exactly keeps a row a second less")
		least1 := records(least + time.Nanosecond)
		require.Equal(t, least, least1.TTL())
		return accDB.Siblings(), least1
	})
}

package riak_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/ledger/ledgertest"
	"github.com/counterkit/counterkit/store"
)

// TestExpiryLastInstantOfTheWindow: records in a bucket whose backend
// expires them after exactly the retry window (plus FutureSkew for timed
// transactions), the shortest Expiry ledger.New accepts (a second less is
// refused), are kept through the window's last instant on the double,
// even for a record written in the last nanosecond of a second (bitcask
// stamps the write's second, truncated), and gone a nanosecond after
// (ledgertest.RecordsKeepTheWindow).
func TestExpiryLastInstantOfTheWindow(t *testing.T) {
	ledgertest.RecordsKeepTheWindow(t, func(t *testing.T, least time.Duration, now func() time.Time, opts ledger.Options) (store.Siblings, store.Siblings) {
		srv := startExpiringDouble(t, least, now)
		cl := newCluster(t, srv.Addr())
		accounts := newStore(t, cl, riak.Options{BucketType: fakeType})
		opts.Records = newStore(t, cl, riak.Options{BucketType: expiringType, Expiry: least - time.Second})
		_, err := ledger.New(accounts, "acct", opts)
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "an Expiry a second short")
		return accounts, newStore(t, cl, riak.Options{BucketType: expiringType, Expiry: least})
	})
}

package riak_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestExpiryLastInstantOfTheWindow: records in a bucket whose backend
// expires them after exactly the retry window (plus FutureSkew for timed
// transactions), the shortest Expiry ledger.New accepts (a second less is
// refused), are kept through the window's last instant on the double,
// even for a record written in the last nanosecond of a second (bitcask
// stamps the write's second, truncated), and gone a nanosecond after.
// The retry comes through another ledger after the counter has folded
// the transaction away, so only its record can recognise it.
func TestExpiryLastInstantOfTheWindow(t *testing.T) {
	const w = ledger.DefaultRetryWindow
	for _, timed := range []bool{false, true} {
		t.Run(fmt.Sprint("timed=", timed), func(t *testing.T) {
			c := &stepClock{t: time.Date(2026, 1, 1, 0, 0, 0, int(time.Second-time.Nanosecond), time.UTC)}
			t0 := c.now()
			least := w
			opts := ledger.Options{Actor: "svc", Clock: c.now, Counter: tpncounter.Options{HistoryLength: 1, FoldedLength: 1}}
			when := t0 // the transaction's time: its window ends at when+w
			if timed {
				least += ledger.DefaultFutureSkew
				when = t0.Add(ledger.DefaultFutureSkew) // as far ahead as accepted
				opts.Counter.TxnTime = func(txn crdt.TxnID) (time.Time, bool) {
					if txn == "pay-0" {
						return when, true
					}
					return t0, true
				}
			}
			srv := startExpiringDouble(t, least, c.now)
			cl := newCluster(t, srv.Addr())
			accounts := newStore(t, cl, riak.Options{BucketType: fakeType})

			short := opts
			short.Records = newStore(t, cl, riak.Options{BucketType: expiringType, Expiry: least - time.Second})
			_, err := ledger.New(accounts, "acct", short)
			require.ErrorIs(t, err, crdt.ErrInvalidConfig)

			recs := newStore(t, cl, riak.Options{BucketType: expiringType, Expiry: least})
			opts.Records = recs
			l, err := ledger.New(accounts, "acct", opts)
			require.NoError(t, err)
			res, err := l.Credit(ctx, "pay-0", 100)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Applied, res.Outcome)
			for i := range 4 {
				_, err := l.Credit(ctx, crdt.TxnID(fmt.Sprint("o-", i)), 1)
				require.NoError(t, err)
			}

			rk := ledger.RecordKey("acct", "pay-0")
			c.until(when.Add(w)) // the window's last instant
			got, _, err := recs.Fetch(ctx, rk)
			require.NoError(t, err)
			require.Len(t, got, 1, "the record at %v", c.now())
			opts.Actor = "svc-b"
			b, err := ledger.New(accounts, "acct", opts)
			require.NoError(t, err)
			res, err = b.Credit(ctx, "pay-0", 100)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Duplicate, res.Outcome)
			require.Equal(t, int64(104), res.Value)

			c.add(time.Nanosecond)
			got, _, err = recs.Fetch(ctx, rk)
			require.NoError(t, err)
			require.Empty(t, got, "the record past the window's last instant at %v", c.now())
		})
	}
}

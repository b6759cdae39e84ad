package cassandra

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestModelRecordsTTLLastInstantOfTheWindow: a records DB with the
// shortest SiblingsTTL ledger.New accepts keeps a record through the last
// instant of the retry window on the model of Cassandra's rules, even
// for a record written in the last nanosecond of a second (Cassandra
// counts the TTL from the second, truncated). SiblingsTTL is rounded up to
// whole seconds and TTL reports a second less, so the window itself
// (plus FutureSkew for timed transactions) is refused and a nanosecond
// more is the least accepted; the record is gone a nanosecond after the
// window. The retry comes through another ledger
// after the counter has folded the transaction away, so only its record
// can recognise it.
func TestModelRecordsTTLLastInstantOfTheWindow(t *testing.T) {
	const w = ledger.DefaultRetryWindow
	for _, timed := range []bool{false, true} {
		t.Run(fmt.Sprint("timed=", timed), func(t *testing.T) {
			ctx := context.Background()
			sec := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			c := &stepClock{t: sec.Add(time.Second - time.Nanosecond)}
			t0 := c.Now()
			least := w
			opts := ledger.Options{Actor: "svc", Clock: c.Now, Counter: tpncounter.Options{HistoryLength: 1, FoldedLength: 1}}
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
			accDB, err := newDB(nil, "ks", Options{Now: c.Now})
			require.NoError(t, err)
			m := newCQLModel(accDB)
			m.attach(accDB)
			records := func(ttl time.Duration) *Siblings {
				db, err := newDB(nil, "ks", Options{TablePrefix: "counterkit_records_", SiblingsTTL: ttl, Now: c.Now})
				require.NoError(t, err)
				m.createTables(db)
				m.attach(db)
				return db.Siblings()
			}

			short := opts
			short.Records = records(least)
			require.Equal(t, least-time.Second, short.Records.(*Siblings).TTL())
			_, err = ledger.New(accDB.Siblings(), "acct", short)
			require.ErrorIs(t, err, crdt.ErrInvalidConfig, "a TTL of the window exactly keeps a row a second less")

			opts.Records = records(least + time.Nanosecond)
			require.Equal(t, least, opts.Records.(*Siblings).TTL())
			l, err := ledger.New(accDB.Siblings(), "acct", opts)
			require.NoError(t, err)
			res, err := l.Credit(ctx, "pay-0", 100)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Applied, res.Outcome)
			for i := range 4 {
				_, err := l.Credit(ctx, crdt.TxnID(fmt.Sprint("o-", i)), 1)
				require.NoError(t, err)
			}

			c.Add(when.Add(w).Sub(c.Now())) // the window's last instant
			got, _, err := opts.Records.Fetch(ctx, ledger.RecordKey("acct", "pay-0"))
			require.NoError(t, err)
			require.Len(t, got, 1, "the record at %v", c.Now())
			opts.Actor = "svc-b"
			b, err := ledger.New(accDB.Siblings(), "acct", opts)
			require.NoError(t, err)
			res, err = b.Credit(ctx, "pay-0", 100)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Duplicate, res.Outcome)
			require.Equal(t, int64(104), res.Value)

			c.Add(time.Nanosecond)
			got, _, err = opts.Records.Fetch(ctx, ledger.RecordKey("acct", "pay-0"))
			require.NoError(t, err)
			require.Empty(t, got, "the record past the window's last instant at %v", c.Now())
		})
	}
}

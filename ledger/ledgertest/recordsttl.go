package ledgertest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// RecordsTTLStores opens, on one store under test whose values expire by
// the clock now, the accounts' store and a records store whose values
// live for least, the shortest lifetime ledger.New accepts (the default
// RetryWindow, plus the default FutureSkew for timed transactions). It
// also checks the store's own boundary: that a records store a second (or
// a nanosecond, as the store rounds) shorter is refused.
type RecordsTTLStores func(t *testing.T, least time.Duration, now func() time.Time, opts ledger.Options) (accounts, records store.Siblings)

// RecordsKeepTheWindow checks, for an untimed and a timed transaction,
// that a records store from open keeps a record through the last instant
// of the retry window, even one written in the last nanosecond of a
// second (stores that expire by whole seconds count from the second,
// truncated): a retry through another ledger there, after the counter has
// folded the transaction away so that only its record can recognise it,
// is a duplicate; and that the record is gone a nanosecond later.
func RecordsKeepTheWindow(t *testing.T, open RecordsTTLStores) {
	const w = ledger.DefaultRetryWindow
	for _, timed := range []bool{false, true} {
		t.Run(fmt.Sprint("timed=", timed), func(t *testing.T) {
			ctx := context.Background()
			var ns atomic.Int64
			ns.Store(time.Date(2026, 1, 1, 0, 0, 0, int(time.Second-time.Nanosecond), time.UTC).UnixNano())
			now := func() time.Time { return time.Unix(0, ns.Load()).UTC() }
			t0 := now()
			least := w
			opts := ledger.Options{Actor: "svc", Clock: now, Counter: tpncounter.Options{HistoryLength: 1, FoldedLength: 1}}
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
			accounts, records := open(t, least, now, opts)
			opts.Records = records
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
			ns.Store(when.Add(w).UnixNano()) // the window's last instant
			got, _, err := records.Fetch(ctx, rk)
			require.NoError(t, err)
			require.Len(t, got, 1, "the record at %v", now())
			opts.Actor = "svc-b"
			b, err := ledger.New(accounts, "acct", opts)
			require.NoError(t, err)
			res, err = b.Credit(ctx, "pay-0", 100)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Duplicate, res.Outcome)
			require.Equal(t, int64(104), res.Value)

			ns.Add(1)
			got, _, err = records.Fetch(ctx, rk)
			require.NoError(t, err)
			require.Empty(t, got, "the record past the window's last instant at %v", now())
		})
	}
}

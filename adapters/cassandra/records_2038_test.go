package cassandra

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestModelRecordsTTLPast2038StopsTheLedger: New accepts SiblingsTTL up to
// MaxSiblingsTTL, but a 4.x server refuses a row it would expire past
// 2038-01-19 (CASSANDRA-14092). A ledger with such a records DB lands its
// first credit in the counter, its record owed (the call ambiguous), then
// fails every write (crdt.ErrUnavailable) until the record can be
// written; both errors carry the server's refusal. The counter counts the
// credit once.
func TestModelRecordsTTLPast2038StopsTheLedger(t *testing.T) {
	ctx := context.Background()
	c := &stepClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	accDB, err := newDB(nil, "ks", Options{Now: c.Now})
	require.NoError(t, err)
	recDB, err := newDB(nil, "ks", Options{TablePrefix: "counterkit_records_", SiblingsTTL: MaxSiblingsTTL, Now: c.Now})
	require.NoError(t, err)
	m := newCQLModel(accDB)
	m.createTables(recDB)
	m.attach(accDB)
	m.attach(recDB)
	l, err := ledger.New(accDB.Siblings(), "acct", ledger.Options{Actor: "svc", Clock: c.Now, Records: recDB.Siblings()})
	require.NoError(t, err)

	res, err := l.Credit(ctx, "t1", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.ErrorContains(t, err, "CASSANDRA-14092")
	require.Equal(t, tpncounter.Applied, res.Outcome)
	require.True(t, res.Landed)
	_, err = l.Credit(ctx, "t2", 5)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.ErrorContains(t, err, "CASSANDRA-14092")
	require.Empty(t, m.siblingRows(recDB, ledger.RecordKey("acct", "t1")))
	v, err := l.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(5), v)
}

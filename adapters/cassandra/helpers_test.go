package cassandra

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/tpncounter"
)

// gEnc returns the encoding of a gcounter whose actors hold counts.
func gEnc(t testing.TB, counts map[crdt.ActorID]int64) []byte {
	t.Helper()
	g := gcounter.New()
	for a, n := range counts {
		require.NoError(t, g.Increment(a, n))
	}
	b, err := g.MarshalBinary()
	require.NoError(t, err)
	return b
}

// ledgerEnc returns the encoding of a tpncounter holding one transaction
// per txn id, all applied by actor with amount 1.
func ledgerEnc(t testing.TB, actor crdt.ActorID, txns ...crdt.TxnID) []byte {
	t.Helper()
	c, err := tpncounter.New(tpncounter.Options{})
	require.NoError(t, err)
	for _, x := range txns {
		_, err := c.Apply(actor, x, 1)
		require.NoError(t, err)
	}
	b, err := c.MarshalBinary()
	require.NoError(t, err)
	return b
}

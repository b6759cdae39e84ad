package tpncounter

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Seqs gives each half's seq of an actor's entry, retired or live, dormant
// or not: a ledger dates each half on its own (SPEC.md 6.9 RetiredGrace).
func TestSeqs(t *testing.T) {
	c := retireFixture(t, Options{}) // old: 3 credits and a debit
	require.Equal(t, [2]uint64{3, 1}, c.Seqs("old"))
	require.Equal(t, [2]uint64{2, 0}, c.Seqs("live"))
	require.Equal(t, [2]uint64{0, 0}, c.Seqs("none"))
	_, err := c.Retire("old")
	require.NoError(t, err)
	b, err := c.MarshalBinary()
	require.NoError(t, err)
	d := newT(t, Options{})
	require.NoError(t, d.UnmarshalBinary(b))
	require.Equal(t, [2]uint64{3, 1}, d.Seqs("old"), "dormant")
	_, err = d.Apply("old", "again", 1)
	require.NoError(t, err)
	require.Equal(t, [2]uint64{4, 1}, d.Seqs("old"), "one half revived")
}

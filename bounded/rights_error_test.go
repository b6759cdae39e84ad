package bounded

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
)

// TestInsufficientRightsMessage checks that a transfer and a retraction
// refused for want of rights say, like a debit, what the actor asked for
// and what it may spend, wrapping crdt.ErrInsufficientRights.
func TestInsufficientRightsMessage(t *testing.T) {
	c := mustNew(t, Options{})
	_, err := c.Apply("a", "c1", 10)
	require.NoError(t, err)
	err = c.Transfer("a", "b", 11)
	require.ErrorIs(t, err, crdt.ErrInsufficientRights)
	require.EqualError(t, err, `counterkit: insufficient rights: actor "a" may debit 10 now, not 11`)

	_, err = c.Apply("a", "d1", -4)
	require.NoError(t, err)
	_, err = c.Retract("a", "c1") // its 10 would take a's 6 below zero
	require.ErrorIs(t, err, crdt.ErrInsufficientRights)
	require.EqualError(t, err, `counterkit: insufficient rights: actor "a" may debit 6 now, not 10`)
}

package tally_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tally"
)

// TestUnresolvedStagesNothing: an Update refused with ErrUnresolved
// (which wraps crdt.ErrAmbiguousWrite, the earlier write's kind) staged
// nothing: the Retry that resolves the earlier write counts that write
// alone, and the refused update counts once applied again (Mutator's
// Outcomes; SPEC.md 7.4 "Checks and sends").
func TestUnresolvedStagesNothing(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	fs := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
	c, err := tally.New[*tally.Sum](fs, "k", exampleConfig(&now))
	require.NoError(t, err)
	m, err := c.NewMutator()
	require.NoError(t, err)
	fs.SetPolicy(faulty.Only(func(faulty.Call) faulty.Fault { return faulty.Lose }, faulty.MethodApply))
	require.ErrorIs(t, m.Update(ctx, obsAdd(5)), crdt.ErrAmbiguousWrite)
	fs.SetPolicy(nil)
	err = m.Update(ctx, obsAdd(10))
	require.ErrorIs(t, err, tally.ErrUnresolved)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.NoError(t, m.Retry(ctx))
	v, err := c.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(5), v.Value(), "the refused update is not counted by the Retry")
	require.NoError(t, m.Update(ctx, obsAdd(10)))
	v, err = c.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(15), v.Value())
}

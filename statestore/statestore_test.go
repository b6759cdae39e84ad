package statestore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/statestore"
)

// fixed is a Store that returns canned encodings and records saves; it can
// be told to fail the next save ambiguously after storing it.
type fixed struct {
	encs      [][]byte
	saves     int
	ambiguous bool
}

func (f *fixed) Load(ctx context.Context, key string) ([][]byte, error) { return f.encs, ctx.Err() }

func (f *fixed) Save(ctx context.Context, key string, actor crdt.ActorID, state []byte) error {
	if err := statestore.Check(state); err != nil {
		return err
	}
	f.saves++
	if len(f.encs) == 0 {
		f.encs = [][]byte{nil}
	}
	m, err := statestore.MergeEncoded(f.encs[0], state) // one merged row
	if err != nil {
		return err
	}
	f.encs[0] = m
	if f.ambiguous {
		f.ambiguous = false
		return fmt.Errorf("timeout after send: %w", crdt.ErrAmbiguousWrite)
	}
	return nil
}

func enc(t *testing.T, c crdt.Codec) []byte {
	t.Helper()
	b, err := c.MarshalBinary()
	require.NoError(t, err)
	return b
}

func TestLoadMergesEveryEncoding(t *testing.T) {
	a, b := pncounter.New(), pncounter.New()
	require.NoError(t, a.Apply("a", 5))
	require.NoError(t, b.Apply("a", 3)) // older view of a
	require.NoError(t, b.Apply("b", -2))
	f := &fixed{encs: [][]byte{enc(t, a), enc(t, b)}}
	got, err := statestore.Load[pncounter.Counter](context.Background(), f, "k")
	require.NoError(t, err)
	require.EqualValues(t, 3, got.Value()) // max(5,3) - 2
}

func TestLoadReportsBadEncodings(t *testing.T) {
	g := gcounter.New()
	require.NoError(t, g.Increment("a", 1))
	f := &fixed{encs: [][]byte{enc(t, g), {0x01}}}
	_, err := statestore.Load[gcounter.Counter](context.Background(), f, "k")
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	_, err = statestore.Load[pncounter.Counter](context.Background(), &fixed{encs: [][]byte{enc(t, g)}}, "k")
	require.ErrorIs(t, err, crdt.ErrTypeMismatch)
}

func TestLoadReportsOverflowingMerge(t *testing.T) {
	a, b := gcounter.New(), gcounter.New()
	require.NoError(t, a.Increment("a", 1<<62))
	require.NoError(t, b.Increment("b", 1<<62))
	_, err := statestore.Load[gcounter.Counter](context.Background(), &fixed{encs: [][]byte{enc(t, a), enc(t, b)}}, "k")
	require.ErrorIs(t, err, crdt.ErrOverflow)
}

// TestAmbiguousWriteRetry shows the documented recovery: after an
// ambiguous save that actually landed, re-saving the returned state counts
// once, while calling Update again would count twice.
func TestAmbiguousWriteRetry(t *testing.T) {
	ctx := context.Background()
	f := &fixed{ambiguous: true}
	c, err := statestore.Update(ctx, f, "k", "a", func(c *gcounter.Counter) error { return c.Increment("a", 10) })
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.NotNil(t, c)
	require.NoError(t, statestore.Save(ctx, f, "k", "a", c))
	got, err := statestore.Load[gcounter.Counter](ctx, f, "k")
	require.NoError(t, err)
	require.EqualValues(t, 10, got.Value())
	require.Equal(t, 2, f.saves)
}

func TestUpdateValidatesActorBeforeIO(t *testing.T) {
	f := &fixed{}
	_, err := statestore.Update(context.Background(), f, "k", "", func(c *gcounter.Counter) error { return nil })
	require.ErrorIs(t, err, crdt.ErrInvalidActor)
	require.ErrorIs(t, statestore.Save(context.Background(), f, "k", "", gcounter.New()), crdt.ErrInvalidActor)
	require.Zero(t, f.saves)
}

func TestCheck(t *testing.T) {
	g, p := gcounter.New(), pncounter.New()
	require.NoError(t, g.Increment("a", 1))
	require.NoError(t, p.Apply("a", -1))
	require.NoError(t, statestore.Check(enc(t, g)))
	require.NoError(t, statestore.Check(enc(t, p)))
	require.ErrorIs(t, statestore.Check(nil), crdt.ErrCorruptEncoding)
	tally := []byte{0x93, 0xab, 't', 'a', 'l', 'l', 'y', '.', 's', 'h', 'a', 'r', 'd', 0x01, 0x90}
	require.ErrorIs(t, statestore.Check(tally), crdt.ErrTypeMismatch)
	pBad := enc(t, p)
	require.ErrorIs(t, statestore.Check(pBad[:len(pBad)-1]), crdt.ErrCorruptEncoding)
}

func TestMergeEncoded(t *testing.T) {
	a, b := pncounter.New(), pncounter.New()
	require.NoError(t, a.Apply("a", 5))
	require.NoError(t, b.Apply("b", -7))
	m, err := statestore.MergeEncoded(enc(t, a), enc(t, b))
	require.NoError(t, err)
	var got pncounter.Counter
	require.NoError(t, got.UnmarshalBinary(m))
	require.EqualValues(t, -2, got.Value())

	first, err := statestore.MergeEncoded(nil, enc(t, a))
	require.NoError(t, err)
	require.Equal(t, enc(t, a), first)

	g := gcounter.New()
	_, err = statestore.MergeEncoded(enc(t, a), enc(t, g))
	require.ErrorIs(t, err, crdt.ErrTypeMismatch)
	_, err = statestore.MergeEncoded([]byte{0xc1}, enc(t, a))
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
}

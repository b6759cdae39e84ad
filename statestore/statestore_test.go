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
	"github.com/counterkit/counterkit/store"
)

// fixed is a store.Siblings that returns canned siblings and records puts;
// it can be told to fail the next put ambiguously after storing it.
type fixed struct {
	encs      [][]byte
	puts      int
	ambiguous bool
}

func (f *fixed) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	return f.encs, store.Token("all"), ctx.Err()
}

func (f *fixed) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	f.puts++
	if token != nil {
		f.encs = nil
	}
	f.encs = append(f.encs, value)
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

// TestLoadPastInt64: two blind saves of 2^62 each leave siblings whose sum
// passes int64. The key stays readable (SPEC.md 4.1): Load merges them, and
// Update refuses an increment (crdt.ErrOverflow) without writing.
func TestLoadPastInt64(t *testing.T) {
	ctx := context.Background()
	a, b := gcounter.New(), gcounter.New()
	require.NoError(t, a.Increment("a", 1<<62))
	require.NoError(t, b.Increment("b", 1<<62))
	f := &fixed{encs: [][]byte{enc(t, a), enc(t, b)}}
	got, err := statestore.Load[gcounter.Counter](ctx, f, "k")
	require.NoError(t, err)
	require.Equal(t, "9223372036854775808", got.BigValue().String())
	_, err = statestore.Update(ctx, f, "k", "a", func(c *gcounter.Counter) error { return c.Increment("a", 1) })
	require.ErrorIs(t, err, crdt.ErrOverflow)
	require.Len(t, f.encs, 2, "nothing written")
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
	require.Equal(t, 2, f.puts)
}

func TestUpdateValidatesActorBeforeIO(t *testing.T) {
	f := &fixed{}
	_, err := statestore.Update(context.Background(), f, "k", "", func(c *gcounter.Counter) error { return nil })
	require.ErrorIs(t, err, crdt.ErrInvalidActor)
	require.ErrorIs(t, statestore.Save(context.Background(), f, "k", "", gcounter.New()), crdt.ErrInvalidActor)
	require.Zero(t, f.puts)
}

// TestUpdateSupersedesWhatItRead: Update writes with the token of its read,
// so siblings it merged are replaced by one value; Save adds beside them.
func TestUpdateSupersedesWhatItRead(t *testing.T) {
	ctx := context.Background()
	a, b := gcounter.New(), gcounter.New()
	require.NoError(t, a.Increment("a", 1))
	require.NoError(t, b.Increment("b", 2))
	f := &fixed{encs: [][]byte{enc(t, a), enc(t, b)}}
	_, err := statestore.Update(ctx, f, "k", "c", func(c *gcounter.Counter) error { return c.Increment("c", 4) })
	require.NoError(t, err)
	require.Len(t, f.encs, 1)
	got, err := statestore.Load[gcounter.Counter](ctx, f, "k")
	require.NoError(t, err)
	require.EqualValues(t, 7, got.Value())
	require.NoError(t, statestore.Save(ctx, f, "k", "d", b))
	require.Len(t, f.encs, 2)
}

func TestInvalidKeyIsRefusedBeforeIO(t *testing.T) {
	f := &fixed{}
	for _, k := range []string{"", "nul\x00"} {
		_, err := statestore.Load[gcounter.Counter](context.Background(), f, k)
		require.ErrorIs(t, err, crdt.ErrInvalidKey)
		require.ErrorIs(t, statestore.Save(context.Background(), f, k, "a", gcounter.New()), crdt.ErrInvalidKey)
	}
	require.Zero(t, f.puts)
}

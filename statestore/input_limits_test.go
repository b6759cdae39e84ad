package statestore_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/statestore"
)

func storedSiblings(t *testing.T, s *memory.Siblings, key string) [][]byte {
	t.Helper()
	vs, _, err := s.Fetch(context.Background(), key)
	require.NoError(t, err)
	return vs
}

// TestBadInputChangesNothing: every refusal wraps the documented
// sentinel, panics nowhere and leaves the stored siblings as they were,
// and the key still updates afterwards.
func TestBadInputChangesNothing(t *testing.T) {
	ctx := context.Background()
	s := memory.NewSiblings()
	_, err := statestore.Update(ctx, s, "k", "a", func(c *pncounter.Counter) error { return c.Apply("a", math.MaxInt64) })
	require.NoError(t, err)
	before := storedSiblings(t, s, "k")
	inc := func(actor crdt.ActorID, d int64) func(*pncounter.Counter) error {
		return func(c *pncounter.Counter) error { return c.Apply(actor, d) }
	}
	for _, tc := range []struct {
		name  string
		key   string
		actor crdt.ActorID
		delta int64
		want  error
	}{
		{"overflow", "k", "a", 1, crdt.ErrOverflow},
		{"overflow other actor", "k", "b", 1, crdt.ErrOverflow},
		{"min int64", "k", "a", math.MinInt64, crdt.ErrInvalidAmount},
		{"empty actor", "k", "", 1, crdt.ErrInvalidActor},
		{"long actor", "k", crdt.ActorID(strings.Repeat("x", 256)), 1, crdt.ErrInvalidActor},
		{"control actor", "k", "a\x7f", 1, crdt.ErrInvalidActor},
		{"bad utf8 actor", "k", "a\xff", 1, crdt.ErrInvalidActor},
		{"long key", strings.Repeat("k", 256), "a", 1, crdt.ErrInvalidKey},
		{"nul key", "k\x00", "a", 1, crdt.ErrInvalidKey},
		{"bad utf8 key", "k\xc3", "a", 1, crdt.ErrInvalidKey},
		{"c1 key", "k\u0085", "a", 1, crdt.ErrInvalidKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := statestore.Update(ctx, s, tc.key, tc.actor, inc(tc.actor, tc.delta))
			require.ErrorIs(t, err, tc.want)
			if tc.want == crdt.ErrInvalidActor || tc.want == crdt.ErrInvalidKey {
				require.ErrorIs(t, statestore.Save(ctx, s, tc.key, tc.actor, pncounter.New()), tc.want)
			}
			require.Equal(t, before, storedSiblings(t, s, "k"))
		})
	}
	// 255-byte key and actor are valid.
	long := strings.Repeat("é", 127) + "x"
	_, err = statestore.Update(ctx, s, long, crdt.ActorID(long), inc(crdt.ActorID(long), -1))
	require.NoError(t, err)
	c, err := statestore.Load[pncounter.Counter](ctx, s, long)
	require.NoError(t, err)
	require.EqualValues(t, -1, c.Value())

	// A sibling of another type or not a counter at all.
	g := gcounter.New()
	require.NoError(t, g.Increment("g", 1))
	gb, err := g.MarshalBinary()
	require.NoError(t, err)
	p := pncounter.New()
	require.NoError(t, p.Apply("p", -1))
	pb, err := p.MarshalBinary()
	require.NoError(t, err)
	for _, bad := range []struct {
		b    []byte
		want error
	}{{gb, crdt.ErrTypeMismatch}, {[]byte("junk"), crdt.ErrCorruptEncoding}, {pb[:len(pb)-1], crdt.ErrCorruptEncoding}, {append(pb, 0), crdt.ErrCorruptEncoding}} {
		s := memory.NewSiblings()
		_, err := statestore.Update(ctx, s, "k", "a", inc("a", 1))
		require.NoError(t, err)
		require.NoError(t, s.Put(ctx, "k", "x", bad.b, nil))
		before := storedSiblings(t, s, "k")
		_, err = statestore.Load[pncounter.Counter](ctx, s, "k")
		require.ErrorIs(t, err, bad.want)
		_, err = statestore.Update(ctx, s, "k", "a", inc("a", 1))
		require.ErrorIs(t, err, bad.want)
		require.Equal(t, before, storedSiblings(t, s, "k"), "nothing written over it")
	}
}

// TestLimitSiblingsPastTheMergeCap: three Saves, each of a valid gcounter
// state of 22,000 actors (under MaxActors, within the store's limit), all
// acknowledged, leave a key whose siblings merge past
// gcounter.MaxMergedActors (65,536, SPEC.md 4.2). Load and Update then
// fail with crdt.ErrTooLarge, writing nothing (the stated limit, package
// doc); the way back the doc gives, a Put with a Fetch's token of a state
// that replaces the siblings, makes the key readable and writable again.
func TestLimitSiblingsPastTheMergeCap(t *testing.T) {
	ctx := context.Background()
	s := memory.NewSiblings()
	var total int64
	for part := range 3 {
		c := gcounter.New()
		for i := range 22000 {
			require.NoError(t, c.Increment(crdt.ActorID(fmt.Sprintf("r%d-%05d", part, i)), 1))
		}
		total += c.Value()
		require.NoError(t, statestore.Save(ctx, s, "total", crdt.ActorID(fmt.Sprint("copier-", part)), c), "save %d acknowledged", part)
	}
	before := storedSiblings(t, s, "total")
	_, err := statestore.Load[gcounter.Counter](ctx, s, "total")
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	_, err = statestore.Update(ctx, s, "total", "copier-0", func(c *gcounter.Counter) error { return c.Increment("copier-0", 1) })
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	require.Equal(t, before, storedSiblings(t, s, "total"), "nothing written")

	// The way back: the caller replaces the siblings it fetched.
	_, token, err := s.Fetch(ctx, "total")
	require.NoError(t, err)
	repaired := gcounter.New()
	require.NoError(t, repaired.Increment("repair", total))
	b, err := repaired.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, s.Put(ctx, "total", "repair", b, token))
	_, err = statestore.Update(ctx, s, "total", "copier-0", func(c *gcounter.Counter) error { return c.Increment("copier-0", 1) })
	require.NoError(t, err)
	c, err := statestore.Load[gcounter.Counter](ctx, s, "total")
	require.NoError(t, err)
	require.EqualValues(t, 66001, c.Value())
}

// Package statestoretest runs statestore's behaviours (gcounter and
// pncounter states over a store.Siblings) against any backend:
//
//	func TestStateStore(t *testing.T) {
//		statestoretest.Run(t, func(t *testing.T) store.Siblings { return newStore(t) })
//	}
//
// Each behaviour is its own subtest with a fresh store and random keys, so
// a shared database works too. It assumes only what store.Siblings
// promises.
package statestoretest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/internal/kitrun"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/statestore"
	"github.com/counterkit/counterkit/store"
)

// Run runs the conformance suite against stores made by newStore, which is
// called once per subtest and may use t.Cleanup to release the store.
func Run(t *testing.T, newStore func(t *testing.T) store.Siblings) {
	t.Helper()
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s store.Siblings)
	}{
		{"RoundTrip", testRoundTrip},
		{"AbsentKey", testAbsentKey},
		{"KeysAreIndependent", testKeysAreIndependent},
		{"ConcurrentActors", testConcurrentActors},
		{"StaleSaveLosesNothing", testStaleSaveLosesNothing},
		{"ResaveIsIdempotent", testResaveIsIdempotent},
		{"UpdateFuncErrorSavesNothing", testUpdateFuncError},
		{"ReportsBadSiblings", testReportsBadSiblings},
		{"RejectsInvalidActor", testRejectsInvalidActor},
		{"MixedTypesDetected", testMixedTypes},
		{"LargeState", testLargeState},
		{"HonoursCancellation", testCancellation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newStore(t))
		})
	}
}

// key returns a key unique to this subtest run.
func key(t *testing.T, name string) string {
	return fmt.Sprintf("storetest/%s/%s/%016x", strings.ReplaceAll(t.Name(), "/", "."), name, rand.Uint64())
}

func load[V any, T interface {
	*V
	statestore.Counter[T]
}](t *testing.T, s store.Siblings, k string) T {
	t.Helper()
	c, err := statestore.Load[V, T](context.Background(), s, k)
	require.NoError(t, err)
	return c
}

func incr(t *testing.T, s store.Siblings, k string, actor crdt.ActorID, n int64) *gcounter.Counter {
	t.Helper()
	c, err := statestore.Update(context.Background(), s, k, actor, func(c *gcounter.Counter) error {
		return c.Increment(actor, n)
	})
	require.NoError(t, err)
	return c
}

func apply(t *testing.T, s store.Siblings, k string, actor crdt.ActorID, d int64) {
	t.Helper()
	_, err := statestore.Update(context.Background(), s, k, actor, func(c *pncounter.Counter) error {
		return c.Apply(actor, d)
	})
	require.NoError(t, err)
}

func testRoundTrip(t *testing.T, s store.Siblings) {
	kg, kp := key(t, "g"), key(t, "pn")
	incr(t, s, kg, "alice", 3)
	incr(t, s, kg, "bob", 4)
	incr(t, s, kg, "alice", 5)
	g := load[gcounter.Counter](t, s, kg)
	require.EqualValues(t, 12, g.Value())
	require.EqualValues(t, 8, g.Get("alice"))
	require.EqualValues(t, 4, g.Get("bob"))

	apply(t, s, kp, "alice", 10)
	apply(t, s, kp, "Zoë 🦀", -4)
	apply(t, s, kp, "alice", -1)
	p := load[pncounter.Counter](t, s, kp)
	require.EqualValues(t, 5, p.Value())
	require.EqualValues(t, 9, p.Get("alice"))
	require.EqualValues(t, -4, p.Get("Zoë 🦀"))

	// The raw siblings are what the store was given: each decodes on its
	// own.
	encs, _, err := s.Fetch(context.Background(), kp)
	require.NoError(t, err)
	require.NotEmpty(t, encs)
	for _, b := range encs {
		require.NoError(t, new(pncounter.Counter).UnmarshalBinary(b))
	}
}

func testAbsentKey(t *testing.T, s store.Siblings) {
	k := key(t, "absent")
	encs, _, err := s.Fetch(context.Background(), k)
	require.NoError(t, err)
	require.Empty(t, encs)
	require.True(t, load[gcounter.Counter](t, s, k).Equal(gcounter.New()))
	require.True(t, load[pncounter.Counter](t, s, k).Equal(pncounter.New()))
}

func testKeysAreIndependent(t *testing.T, s store.Siblings) {
	k1, k2 := key(t, "one"), key(t, "two")
	incr(t, s, k1, "a", 1)
	incr(t, s, k2, "a", 10)
	incr(t, s, k1, "b", 2)
	require.EqualValues(t, 3, load[gcounter.Counter](t, s, k1).Value())
	require.EqualValues(t, 10, load[gcounter.Counter](t, s, k2).Value())
	require.EqualValues(t, 0, load[gcounter.Counter](t, s, key(t, "three")).Value())
}

// testConcurrentActors runs several actors in parallel goroutines, each
// applying its own serial stream of Updates to one key, and checks that
// every update is counted exactly once, per actor and in total.
func testConcurrentActors(t *testing.T, s store.Siblings) {
	const actors, updates = 4, 15
	k := key(t, "shared")
	want := make([]int64, actors)
	delta := func(i, j int) int64 { return int64((i+1)*(j+1)) * int64(1-2*(j%3/2)) } // mixes credits and debits
	for i := range actors {
		for j := range updates {
			want[i] += delta(i, j)
		}
	}
	require.NoError(t, kitrun.Parallel(actors, func(i int) error {
		actor := crdt.ActorID(fmt.Sprintf("actor-%d", i))
		for j := range updates {
			_, err := statestore.Update(context.Background(), s, k, actor, func(c *pncounter.Counter) error {
				return c.Apply(actor, delta(i, j))
			})
			if err != nil {
				return fmt.Errorf("%s: %w", actor, err)
			}
		}
		return nil
	}))
	got := load[pncounter.Counter](t, s, k)
	var total int64
	for i, w := range want {
		require.Equal(t, w, got.Get(crdt.ActorID(fmt.Sprintf("actor-%d", i))), "actor-%d", i)
		total += w
	}
	require.Equal(t, total, got.Value())
}

// testStaleSaveLosesNothing: actor b saves a state built before a's latest
// update; a's update must survive.
func testStaleSaveLosesNothing(t *testing.T, s store.Siblings) {
	ctx := context.Background()
	k := key(t, "stale")
	incr(t, s, k, "a", 1)
	stale := load[gcounter.Counter](t, s, k) // b reads {a:1}
	incr(t, s, k, "a", 1)                    // a moves on to {a:2}
	require.NoError(t, stale.Increment("b", 5))
	require.NoError(t, statestore.Save(ctx, s, k, "b", stale)) // b writes {a:1, b:5}
	got := load[gcounter.Counter](t, s, k)
	require.EqualValues(t, 2, got.Get("a"), "a's second increment was lost")
	require.EqualValues(t, 5, got.Get("b"))
	require.EqualValues(t, 7, got.Value())
}

// testResaveIsIdempotent: re-sending a saved state, the documented retry
// after an ambiguous write, never counts twice.
func testResaveIsIdempotent(t *testing.T, s store.Siblings) {
	ctx := context.Background()
	k := key(t, "resave")
	incr(t, s, k, "other", 1)
	c := incr(t, s, k, "a", 4)
	for range 3 {
		require.NoError(t, statestore.Save(ctx, s, k, "a", c))
	}
	got := load[gcounter.Counter](t, s, k)
	require.EqualValues(t, 5, got.Value())
	require.True(t, got.Equal(c))
}

func testUpdateFuncError(t *testing.T, s store.Siblings) {
	k := key(t, "fnerr")
	incr(t, s, k, "a", 2)
	boom := errors.New("boom")
	_, err := statestore.Update(context.Background(), s, k, "a", func(c *gcounter.Counter) error {
		_ = c.Increment("a", 100)
		return boom
	})
	require.ErrorIs(t, err, boom)
	_, err = statestore.Update(context.Background(), s, k, "a", func(c *gcounter.Counter) error {
		return c.Increment("a", -1)
	})
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	require.EqualValues(t, 2, load[gcounter.Counter](t, s, k).Value())
}

// testReportsBadSiblings: a sibling that does not decode (written by
// something else, or damaged) makes Load and Update fail with the
// decoder's sentinel, and Update writes nothing over it.
func testReportsBadSiblings(t *testing.T, s store.Siblings) {
	ctx := context.Background()
	g := gcounter.New()
	require.NoError(t, g.Increment("a", 1))
	valid, err := g.MarshalBinary()
	require.NoError(t, err)
	huge := make([]byte, gcounter.MaxEncodedSize+1)
	copy(huge, valid)
	newer := bytes.Clone(valid)
	newer[10] = gcounter.FormatVersion + 1 // version byte: ["gcounter", 3, ...]
	for _, tc := range []struct {
		Name string
		Data []byte
		Want error
	}{
		{"garbage", []byte("not msgpack at all"), crdt.ErrCorruptEncoding},
		{"truncated", valid[:len(valid)-1], crdt.ErrCorruptEncoding},
		{"trailing byte", append(bytes.Clone(valid), 0), crdt.ErrCorruptEncoding},
		{"unsupported version", newer, crdt.ErrUnsupportedVersion},
		{"other type", []byte("\x93\xabtally.shard\x01\x90"), crdt.ErrTypeMismatch},
		{"oversized", huge, crdt.ErrTooLarge},
	} {
		k := key(t, "bad")
		incr(t, s, k, "a", 3)
		if err := s.Put(ctx, k, "intruder", tc.Data, nil); err != nil {
			// A store may refuse a value over its size limit; then the
			// key never holds it.
			require.ErrorIs(t, err, crdt.ErrTooLarge, tc.Name)
			continue
		}
		_, err := statestore.Load[gcounter.Counter](ctx, s, k)
		require.ErrorIs(t, err, tc.Want, tc.Name)
		before, _, err := s.Fetch(ctx, k)
		require.NoError(t, err)
		_, err = statestore.Update(ctx, s, k, "a", func(c *gcounter.Counter) error { return c.Increment("a", 1) })
		require.ErrorIs(t, err, tc.Want, tc.Name)
		after, _, err := s.Fetch(ctx, k)
		require.NoError(t, err)
		require.ElementsMatch(t, before, after, "%s: a failed Update wrote", tc.Name)
	}
}

func testRejectsInvalidActor(t *testing.T, s store.Siblings) {
	ctx := context.Background()
	k := key(t, "actor")
	incr(t, s, k, "a", 3)
	g := gcounter.New()
	require.NoError(t, g.Increment("b", 1))
	for _, actor := range []crdt.ActorID{"", "tab\there", crdt.ActorID(strings.Repeat("x", crdt.MaxIDLen+1))} {
		require.ErrorIs(t, statestore.Save(ctx, s, k, actor, g), crdt.ErrInvalidActor, "actor %q", actor)
		_, err := statestore.Update(ctx, s, k, actor, func(c *gcounter.Counter) error { return nil })
		require.ErrorIs(t, err, crdt.ErrInvalidActor, "actor %q", actor)
	}
	require.EqualValues(t, 3, load[gcounter.Counter](t, s, k).Value())
}

// testMixedTypes: a gcounter and a pncounter saved under one key must be
// detected, either by Save or by a typed Load, never silently mixed.
func testMixedTypes(t *testing.T, s store.Siblings) {
	ctx := context.Background()
	k := key(t, "mixed")
	incr(t, s, k, "a", 3)
	p := pncounter.New()
	require.NoError(t, p.Apply("b", -1))
	err := statestore.Save(ctx, s, k, "b", p)
	if err != nil {
		require.ErrorIs(t, err, crdt.ErrTypeMismatch)
		require.EqualValues(t, 3, load[gcounter.Counter](t, s, k).Value())
		return
	}
	_, err = statestore.Load[gcounter.Counter](ctx, s, k)
	require.ErrorIs(t, err, crdt.ErrTypeMismatch)
}

func testLargeState(t *testing.T, s store.Siblings) {
	ctx := context.Background()
	k := key(t, "large")
	c := pncounter.New()
	for i := range 2000 {
		actor := crdt.ActorID(fmt.Sprintf("actor-%04d-%s", i, strings.Repeat("x", 40)))
		require.NoError(t, c.Apply(actor, int64(i)*1_000_003+1))
		require.NoError(t, c.Apply(actor, -int64(i)))
	}
	require.NoError(t, statestore.Save(ctx, s, k, "writer", c))
	require.True(t, load[pncounter.Counter](t, s, k).Equal(c))
}

func testCancellation(t *testing.T, s store.Siblings) {
	k := key(t, "ctx")
	incr(t, s, k, "a", 3)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	_, err := statestore.Load[gcounter.Counter](ctx, s, k)
	require.ErrorIs(t, err, context.Canceled)

	g := gcounter.New()
	require.NoError(t, g.Increment("b", 100))
	require.ErrorIs(t, statestore.Save(ctx, s, k, "b", g), context.Canceled)
	_, err = statestore.Update(ctx, s, k, "a", func(c *gcounter.Counter) error { return c.Increment("a", 1) })
	require.ErrorIs(t, err, context.Canceled)

	require.EqualValues(t, 3, load[gcounter.Counter](t, s, k).Value(), "a cancelled save changed the stored state")
}

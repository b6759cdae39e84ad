// Package tallytest is the conformance suite for tally.Store
// implementations. Every backend (the memory store, the Cassandra adapter)
// runs the same behaviours with one call:
//
//	func TestConformance(t *testing.T) {
//		tallytest.Run(t, func(t *testing.T) tally.Store { return newStore(t) })
//	}
//
// Each behaviour is its own subtest and gets a fresh store from newStore
// (or, for a shared database, a store whose keys no other subtest uses; the
// suite also uses a fresh random key per subtest). The suite assumes only
// what tally.Store documents: last-write-wins by explicit write timestamp,
// Cassandra's tie-break, atomic GC batches, complete reads. It never relies
// on timing, on stale reads or on anything specific to the memory store.
package tallytest

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tally"
)

// Run runs every behaviour against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) tally.Store) {
	for _, b := range behaviours {
		t.Run(b.name, func(t *testing.T) {
			s := newStore(t)
			key := "tallytest-" + uuid.NewString()
			b.run(t, s, key)
		})
	}
}

type behaviour struct {
	name string
	run  func(t *testing.T, s tally.Store, key string)
}

var behaviours = []behaviour{
	{"EmptyKeyReadsNothing", emptyKey},
	{"PutThenCompleteRead", putThenRead},
	{"GreaterTimestampWins", greaterTimestampWins},
	{"SmallerTimestampLoses", smallerTimestampLoses},
	{"EqualTimestampGreaterValueWins", equalTimestampGreaterValue},
	{"RowsAreIndependent", rowsIndependent},
	{"KeysAreIndependent", keysIndependent},
	{"BinaryDataRoundTrips", binaryData},
	{"ApplyGCWritesTallyAndDeletes", applyGC},
	{"DeleteShadowsEqualAndOlderWrites", deleteShadows},
	{"NewerWriteOutlivesOlderDelete", newerWriteOutlivesDelete},
	{"ApplyGCIsIdempotent", gcIdempotent},
	{"TallyLastWriteWins", tallyLWW},
	{"TallyEqualTimestampGreaterValueWins", tallyEqualTS},
	{"GCWithoutDeletes", gcWithoutDeletes},
	{"NonCompleteReadShowsOnlyWrittenData", nonCompleteRead},
	{"CanceledContext", canceledContext},
	{"InvalidMutatorRejected", invalidMutator},
	{"CounterEndToEnd", counterEndToEnd},
}

func ctx() context.Context { return context.Background() }

func put(t *testing.T, s tally.Store, key string, id crdt.ActorID, data string, ts int64) {
	t.Helper()
	require.NoError(t, s.PutShard(ctx(), key, tally.EncodedShard{Mutator: id, Data: []byte(data)}, ts))
}

// rows reads completely and returns mutator → data, and the tally.
func rows(t *testing.T, s tally.Store, key string) (map[crdt.ActorID]string, []byte) {
	t.Helper()
	shards, tb, err := s.Read(ctx(), key, true)
	require.NoError(t, err)
	out := map[crdt.ActorID]string{}
	for _, sh := range shards {
		_, dup := out[sh.Mutator]
		require.False(t, dup, "mutator %q returned twice", sh.Mutator)
		out[sh.Mutator] = string(sh.Data)
	}
	return out, tb
}

func emptyKey(t *testing.T, s tally.Store, key string) {
	shards, tb, err := s.Read(ctx(), key, true)
	require.NoError(t, err)
	require.Empty(t, shards)
	require.Nil(t, tb, "no tally cell: nil")
}

func putThenRead(t *testing.T, s tally.Store, key string) {
	put(t, s, key, "m1", "state-1", 100)
	got, tb := rows(t, s, key)
	require.Equal(t, map[crdt.ActorID]string{"m1": "state-1"}, got)
	require.Nil(t, tb)
}

func greaterTimestampWins(t *testing.T, s tally.Store, key string) {
	put(t, s, key, "m1", "old", 100)
	put(t, s, key, "m1", "new", 101)
	got, _ := rows(t, s, key)
	require.Equal(t, "new", got["m1"])
}

func smallerTimestampLoses(t *testing.T, s tally.Store, key string) {
	put(t, s, key, "m1", "new", 200)
	put(t, s, key, "m1", "late-old", 199)
	got, _ := rows(t, s, key)
	require.Equal(t, "new", got["m1"], "a late write with a smaller timestamp must not overwrite")
}

func equalTimestampGreaterValue(t *testing.T, s tally.Store, key string) {
	for _, order := range [][2]string{{"aaa", "bbb"}, {"bbb", "aaa"}} {
		id := crdt.ActorID("m-" + order[0])
		put(t, s, key, id, order[0], 300)
		put(t, s, key, id, order[1], 300)
		got, _ := rows(t, s, key)
		require.Equal(t, "bbb", got[id], "equal timestamps: the greater value wins, in either arrival order")
	}
}

func rowsIndependent(t *testing.T, s tally.Store, key string) {
	put(t, s, key, "m1", "one", 100)
	put(t, s, key, "m2", "two", 50)
	put(t, s, key, "m3", "three", 500)
	got, _ := rows(t, s, key)
	require.Equal(t, map[crdt.ActorID]string{"m1": "one", "m2": "two", "m3": "three"}, got)
}

func keysIndependent(t *testing.T, s tally.Store, key string) {
	other := key + "-other"
	put(t, s, key, "m1", "mine", 100)
	put(t, s, other, "m1", "theirs", 200)
	require.NoError(t, s.ApplyGC(ctx(), other, tally.GCBatch{WriteTS: 300, Tally: []byte("t"), Delete: []crdt.ActorID{"m1"}}))
	got, tb := rows(t, s, key)
	require.Equal(t, map[crdt.ActorID]string{"m1": "mine"}, got)
	require.Nil(t, tb)
}

func binaryData(t *testing.T, s tally.Store, key string) {
	data := []byte{0, 0xff, 0x93, 0, 'x', 0xc0}
	ids := []crdt.ActorID{"日本-🦀", "zoë", crdt.ActorID(bytes.Repeat([]byte("x"), crdt.MaxIDLen))}
	for i, id := range ids {
		require.NoError(t, s.PutShard(ctx(), key, tally.EncodedShard{Mutator: id, Data: data}, int64(100+i)))
	}
	tallyBytes := append([]byte{0}, data...)
	require.NoError(t, s.ApplyGC(ctx(), key, tally.GCBatch{WriteTS: 1, Tally: tallyBytes}))
	got, tb := rows(t, s, key)
	require.Len(t, got, len(ids))
	for _, id := range ids {
		require.Equal(t, string(data), got[id])
	}
	require.Equal(t, tallyBytes, tb)
}

func applyGC(t *testing.T, s tally.Store, key string) {
	put(t, s, key, "a", "A", 10)
	put(t, s, key, "b", "B", 20)
	put(t, s, key, "c", "C", 30)
	require.NoError(t, s.ApplyGC(ctx(), key, tally.GCBatch{WriteTS: 25, Tally: []byte("tally-ab"), Delete: []crdt.ActorID{"a", "b"}}))
	got, tb := rows(t, s, key)
	require.Equal(t, map[crdt.ActorID]string{"c": "C"}, got)
	require.Equal(t, []byte("tally-ab"), tb)
}

func deleteShadows(t *testing.T, s tally.Store, key string) {
	put(t, s, key, "a", "A", 50)
	require.NoError(t, s.ApplyGC(ctx(), key, tally.GCBatch{WriteTS: 50, Tally: []byte("t"), Delete: []crdt.ActorID{"a"}}))
	got, _ := rows(t, s, key)
	require.Empty(t, got, "a delete at the write's own timestamp shadows it")
	put(t, s, key, "a", "A-late", 49)
	put(t, s, key, "a", "ZZZ-late", 50)
	got, _ = rows(t, s, key)
	require.Empty(t, got, "late writes at or below the delete's timestamp stay invisible")
}

func newerWriteOutlivesDelete(t *testing.T, s tally.Store, key string) {
	require.NoError(t, s.ApplyGC(ctx(), key, tally.GCBatch{WriteTS: 50, Tally: []byte("t"), Delete: []crdt.ActorID{"a"}}))
	put(t, s, key, "a", "A", 51)
	got, _ := rows(t, s, key)
	require.Equal(t, map[crdt.ActorID]string{"a": "A"}, got, "a write above the delete's timestamp is live (Cassandra semantics)")
}

func gcIdempotent(t *testing.T, s tally.Store, key string) {
	put(t, s, key, "a", "A", 10)
	put(t, s, key, "b", "B", 60)
	b := tally.GCBatch{WriteTS: 40, Tally: []byte("tally-a"), Delete: []crdt.ActorID{"a"}}
	for range 3 {
		require.NoError(t, s.ApplyGC(ctx(), key, b))
		got, tb := rows(t, s, key)
		require.Equal(t, map[crdt.ActorID]string{"b": "B"}, got)
		require.Equal(t, []byte("tally-a"), tb)
	}
}

func tallyLWW(t *testing.T, s tally.Store, key string) {
	newer := tally.GCBatch{WriteTS: 200, Tally: []byte("tally-200")}
	older := tally.GCBatch{WriteTS: 100, Tally: []byte("tally-100-zzz")}
	require.NoError(t, s.ApplyGC(ctx(), key, newer))
	require.NoError(t, s.ApplyGC(ctx(), key, older))
	_, tb := rows(t, s, key)
	require.Equal(t, []byte("tally-200"), tb, "a late GC batch with a smaller timestamp must not replace the tally")
}

func tallyEqualTS(t *testing.T, s tally.Store, key string) {
	require.NoError(t, s.ApplyGC(ctx(), key, tally.GCBatch{WriteTS: 100, Tally: []byte("bbb")}))
	require.NoError(t, s.ApplyGC(ctx(), key, tally.GCBatch{WriteTS: 100, Tally: []byte("aaa")}))
	_, tb := rows(t, s, key)
	require.Equal(t, []byte("bbb"), tb)
}

func gcWithoutDeletes(t *testing.T, s tally.Store, key string) {
	put(t, s, key, "a", "A", 10)
	require.NoError(t, s.ApplyGC(ctx(), key, tally.GCBatch{WriteTS: 5, Tally: []byte("t")}))
	got, tb := rows(t, s, key)
	require.Equal(t, map[crdt.ActorID]string{"a": "A"}, got)
	require.Equal(t, []byte("t"), tb)
}

func nonCompleteRead(t *testing.T, s tally.Store, key string) {
	written := map[string]bool{"v1": true, "v2": true}
	put(t, s, key, "a", "v1", 10)
	put(t, s, key, "a", "v2", 20)
	require.NoError(t, s.ApplyGC(ctx(), key, tally.GCBatch{WriteTS: 5, Tally: []byte("t")}))
	shards, tb, err := s.Read(ctx(), key, false)
	require.NoError(t, err)
	for _, sh := range shards {
		require.Equal(t, crdt.ActorID("a"), sh.Mutator)
		require.True(t, written[string(sh.Data)], "a stale read may only show values that were written, got %q", sh.Data)
	}
	if tb != nil {
		require.Equal(t, []byte("t"), tb)
	}
}

func canceledContext(t *testing.T, s tally.Store, key string) {
	c, cancel := context.WithCancel(ctx())
	cancel()
	err := s.PutShard(c, key, tally.EncodedShard{Mutator: "a", Data: []byte("A")}, 1)
	require.ErrorIs(t, err, context.Canceled)
	_, _, err = s.Read(c, key, true)
	require.ErrorIs(t, err, context.Canceled)
	err = s.ApplyGC(c, key, tally.GCBatch{WriteTS: 1, Tally: []byte("t")})
	require.ErrorIs(t, err, context.Canceled)
}

func invalidMutator(t *testing.T, s tally.Store, key string) {
	err := s.PutShard(ctx(), key, tally.EncodedShard{Mutator: "", Data: []byte("A")}, 1)
	require.ErrorIs(t, err, crdt.ErrInvalidActor)
	err = s.ApplyGC(ctx(), key, tally.GCBatch{WriteTS: 1, Tally: []byte("t"), Delete: []crdt.ActorID{"ok", "bad\x00"}})
	require.ErrorIs(t, err, crdt.ErrInvalidActor)
	_, tb := rows(t, s, key)
	require.Nil(t, tb, "a rejected batch writes nothing")
}

// counterEndToEnd drives a tally.Counter over the store: three mutators
// with a test clock, a GC once they are final, and reads before and after.
func counterEndToEnd(t *testing.T, s tally.Store, key string) {
	now := time.Now().Truncate(time.Microsecond)
	clock := func() time.Time { return now }
	n := 0
	cfg := tally.Config{Clock: clock, NewID: func() crdt.ActorID { n++; return crdt.ActorID(fmt.Sprintf("m%d", n)) }}
	c, err := tally.New[*tally.Sum](s, key, cfg)
	require.NoError(t, err)
	var want int64
	for i := range 3 {
		m, err := c.NewMutator()
		require.NoError(t, err)
		for j := range 5 {
			amount := int64(10*i + j)
			require.NoError(t, m.Update(ctx(), func(v *tally.Sum) error { return v.Add(amount) }))
			want += amount
		}
		now = now.Add(time.Minute)
	}
	v, err := c.ReadComplete(ctx())
	require.NoError(t, err)
	require.Equal(t, want, v.Value())

	now = now.Add(tally.DefaultLifetime + tally.DefaultGrace + time.Hour)
	plan, err := c.GC(ctx())
	require.NoError(t, err)
	require.Equal(t, 3, plan.Folded)
	got, tb := rows(t, s, key)
	require.Empty(t, got, "GC deleted the folded shards")
	require.NotNil(t, tb)
	v, err = c.ReadComplete(ctx())
	require.NoError(t, err)
	require.Equal(t, want, v.Value())
	plan, err = c.GC(ctx())
	require.NoError(t, err)
	require.True(t, plan.Empty(), "nothing left to fold")
}

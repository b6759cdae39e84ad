// Package tallytest runs the tally counter's behaviours against any
// store.Partitions. Every backend (the memory store, the Cassandra adapter,
// an embedded engine) runs them with one call:
//
//	func TestTally(t *testing.T) {
//		tallytest.Run(t, func(t *testing.T) store.Partitions { return newStore(t) })
//	}
//
// Each behaviour is its own subtest with a store from newStore and a fresh
// random counter key, on a test clock. The suite assumes only what
// store.Partitions documents (last write wins by timestamp, deletes shadow
// older writes, atomic batches, complete reads at store.ReadComplete).
package tallytest

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/kitrun"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
)

// Run runs every behaviour against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) store.Partitions) {
	for _, b := range behaviours {
		t.Run(b.name, func(t *testing.T) {
			b.run(t, newEnv(t, newStore(t)))
		})
	}
}

type behaviour struct {
	name string
	run  func(t *testing.T, e *env)
}

var behaviours = []behaviour{
	{"EmptyCounterReadsZero", emptyCounter},
	{"UpdatesAreCountedOnce", updatesCounted},
	{"ShardRowsFollowTheLayout", shardRows},
	{"FlushOverwritesItsOwnRow", flushOverwrites},
	{"GCFoldsFinalShardsIntoTheTallyRow", gcFolds},
	{"PastInt64KeepsTheKey", pastInt64},
	{"FoldedShardStaysFoldedAfterALateWrite", foldedStaysFolded},
	{"GCBatchesCommuteAndRepeat", gcCommute},
	{"CountersAreIndependent", countersIndependent},
	{"LongAndUnicodeMutatorIDs", longIDs},
	{"DistinctShardsRoundTrip", distinctRoundTrip},
	{"CorruptRowIsRefused", corruptRow},
	{"StaleReadNeverCountsTwice", staleRead},
	{"ConcurrentMutators", concurrentMutators},
	{"CanceledContext", canceledContext},
}

func ctx() context.Context { return context.Background() }

// env is one subtest's store, counter key and test clock.
type env struct {
	s   store.Partitions
	key string

	mu  sync.Mutex
	now time.Time
	ids int
}

func newEnv(t *testing.T, s store.Partitions) *env {
	require.NotNil(t, s)
	return &env{s: s, key: "tallytest-" + uuid.NewString(), now: time.Now().Truncate(time.Microsecond)}
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = e.now.Add(d)
}

func (e *env) cfg() tally.Options {
	return tally.Options{Clock: e.clock, NewID: func() crdt.ActorID {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.ids++
		return crdt.ActorID(fmt.Sprintf("m%d", e.ids))
	}}
}

// final moves the clock past the GC cutoff of every mutator made so far.
func (e *env) final() { e.advance(tally.DefaultLifetime + tally.DefaultGrace + time.Hour) }

func sumCounter(t *testing.T, e *env, key string) *tally.Counter[*tally.Sum] {
	t.Helper()
	c, err := tally.New[*tally.Sum](e.s, key, e.cfg())
	require.NoError(t, err)
	return c
}

func mutator[A tally.Aggregate[A]](t *testing.T, c *tally.Counter[A]) *tally.Mutator[A] {
	t.Helper()
	m, err := c.NewMutator()
	require.NoError(t, err)
	return m
}

func add(n int64) func(*tally.Sum) error { return func(s *tally.Sum) error { return s.Add(n) } }

func value(t *testing.T, c *tally.Counter[*tally.Sum]) int64 {
	t.Helper()
	v, err := c.ReadComplete(ctx())
	require.NoError(t, err)
	return v.Value()
}

// pastInt64: shards whose sum passes int64 read exactly (Value clamps),
// GC folds the one the tally can hold, and a shard that brings the sum
// back lets GC fold the rest (SPEC.md 7.1, 7.4).
func pastInt64(t *testing.T, e *env) {
	c := sumCounter(t, e, e.key)
	for _, n := range []int64{math.MaxInt64, math.MaxInt64} {
		require.NoError(t, mutator(t, c).Update(ctx(), add(n)))
		e.advance(time.Minute)
	}
	v, err := c.ReadComplete(ctx())
	require.NoError(t, err)
	require.Equal(t, int64(math.MaxInt64), v.Value())
	require.Equal(t, "18446744073709551614", v.BigValue().String())
	e.final()
	plan, err := c.GC(ctx())
	require.NoError(t, err)
	require.Equal(t, [2]int{1, 1}, [2]int{plan.Folded, plan.Live})
	require.Equal(t, int64(math.MaxInt64), value(t, c))
	require.NoError(t, mutator(t, c).Update(ctx(), add(-math.MaxInt64)))
	e.final()
	plan, err = c.GC(ctx())
	require.NoError(t, err)
	require.Equal(t, [2]int{2, 0}, [2]int{plan.Folded, plan.Live})
	require.Equal(t, int64(math.MaxInt64), value(t, c))
}

// rows reads key's partition completely: row key → value.
func rows(t *testing.T, e *env, key string) map[string][]byte {
	t.Helper()
	rs, err := e.s.Snapshot(ctx(), key, 1000, store.ReadComplete)
	require.NoError(t, err)
	out := map[string][]byte{}
	for i, r := range rs {
		if i > 0 {
			require.Less(t, string(rs[i-1].Key), string(r.Key), "rows in ascending key order")
		}
		out[string(r.Key)] = r.Value
	}
	return out
}

func emptyCounter(t *testing.T, e *env) {
	c := sumCounter(t, e, e.key)
	require.Zero(t, value(t, c))
	v, err := c.Read(ctx())
	require.NoError(t, err)
	require.Zero(t, v.Value())
	plan, err := c.GC(ctx())
	require.NoError(t, err)
	require.True(t, plan.Empty())
	require.Empty(t, rows(t, e, e.key), "reading and an empty GC write nothing")
}

func updatesCounted(t *testing.T, e *env) {
	c := sumCounter(t, e, e.key)
	var want int64
	for i := range 3 {
		m := mutator(t, c)
		for j := range 5 {
			n := int64(10*i + j)
			require.NoError(t, m.Update(ctx(), add(n)))
			want += n
		}
		e.advance(time.Minute)
	}
	require.Equal(t, want, value(t, c))
	v, err := c.Read(ctx())
	require.NoError(t, err)
	require.LessOrEqual(t, v.Value(), want)
}

func shardRows(t *testing.T, e *env) {
	c := sumCounter(t, e, e.key)
	m := mutator(t, c)
	require.NoError(t, m.Update(ctx(), add(42)))
	got := rows(t, e, e.key)
	require.Len(t, got, 1)
	b, ok := got[string(tally.ShardRowKey(m.ID()))]
	require.True(t, ok, "the shard row is keyed 's' + mutator id")
	sh, err := tally.DecodeShard[*tally.Sum](b)
	require.NoError(t, err)
	require.Equal(t, m.ID(), sh.Mutator)
	require.Equal(t, int64(42), sh.State.Value())
	require.Equal(t, m.ExpiresAt().UnixMicro(), sh.ExpiresAt)
}

func flushOverwrites(t *testing.T, e *env) {
	c := sumCounter(t, e, e.key)
	m := mutator(t, c)
	for range 10 {
		require.NoError(t, m.Update(ctx(), add(1)))
	}
	for range 100 {
		require.NoError(t, m.Stage(add(1)))
	}
	require.NoError(t, m.Flush(ctx()))
	require.Len(t, rows(t, e, e.key), 1, "one row per mutator, however many flushes")
	require.Equal(t, int64(110), value(t, c))
}

// shardBytes encodes a Sum shard of m holding n.
func shardBytes(t *testing.T, m *tally.Mutator[*tally.Sum], n int64) []byte {
	t.Helper()
	s := new(tally.Sum)
	require.NoError(t, s.Add(n))
	b, err := tally.Shard[*tally.Sum]{Mutator: m.ID(), ExpiresAt: m.ExpiresAt().UnixMicro(), State: s}.MarshalBinary()
	require.NoError(t, err)
	return b
}

func putShard(t *testing.T, e *env, key string, id crdt.ActorID, data []byte, ts int64) {
	t.Helper()
	require.NoError(t, e.s.Apply(ctx(), []store.Mutation{{Partition: key, Op: store.OpPut, Key: tally.ShardRowKey(id), Value: data, Timestamp: ts}}))
}

func gcFolds(t *testing.T, e *env) {
	c := sumCounter(t, e, e.key)
	var ids []crdt.ActorID
	for i := range 3 {
		m := mutator(t, c)
		require.NoError(t, m.Update(ctx(), add(int64(i+1))))
		ids = append(ids, m.ID())
		e.advance(time.Minute)
	}
	e.final()
	young := mutator(t, c)
	require.NoError(t, young.Update(ctx(), add(100)))
	plan, err := c.GC(ctx())
	require.NoError(t, err)
	require.Equal(t, 3, plan.Folded)
	require.Equal(t, 1, plan.Live)
	require.Equal(t, ids, plan.Batch.Delete)

	got := rows(t, e, e.key)
	require.Len(t, got, 2, "the young shard and the tally row")
	require.Contains(t, got, string(tally.ShardRowKey(young.ID())))
	tb, ok := got[tally.TallyRowKey]
	require.True(t, ok, "the tally row is keyed 't'")
	require.Equal(t, plan.Batch.Tally, tb)
	tl, err := tally.DecodeTally[*tally.Sum](tb)
	require.NoError(t, err)
	require.Equal(t, int64(6), tl.State.Value())
	require.Equal(t, plan.Batch.WriteTS, tl.FoldedThrough)
	require.Equal(t, int64(106), value(t, c))

	plan, err = c.GC(ctx())
	require.NoError(t, err)
	require.True(t, plan.Empty(), "nothing left to fold")
}

func foldedStaysFolded(t *testing.T, e *env) {
	c := sumCounter(t, e, e.key)
	m := mutator(t, c)
	sent := e.clock().UnixMicro()
	require.NoError(t, m.Update(ctx(), add(7)))
	e.final()
	plan, err := c.GC(ctx())
	require.NoError(t, err)
	require.Equal(t, 1, plan.Folded)
	// A copy of the shard's write, in flight all along, lands after the GC:
	// its timestamp is below expires_at ≤ the batch's, so the delete hides it.
	putShard(t, e, e.key, m.ID(), shardBytes(t, m, 7), sent)
	putShard(t, e, e.key, m.ID(), shardBytes(t, m, 7), m.ExpiresAt().UnixMicro()-1)
	require.Len(t, rows(t, e, e.key), 1, "only the tally row")
	require.Equal(t, int64(7), value(t, c))
}

func gcCommute(t *testing.T, e *env) {
	c := sumCounter(t, e, e.key)
	var want int64
	for i := range 4 {
		m := mutator(t, c)
		require.NoError(t, m.Update(ctx(), add(int64(i+1))))
		want += int64(i + 1)
		e.advance(2 * time.Hour)
	}
	// Expiries are 2h apart; fold the first two, then all four.
	e.advance(tally.DefaultLifetime + tally.DefaultGrace - 5*time.Hour)
	planA, err := c.PlanGC(ctx())
	require.NoError(t, err)
	e.advance(5 * time.Hour)
	planB, err := c.PlanGC(ctx())
	require.NoError(t, err)
	require.Less(t, planA.Folded, planB.Folded)
	require.Equal(t, 4, planB.Folded)
	for _, b := range []tally.GCBatch{planB.Batch, planA.Batch, planB.Batch, planA.Batch} {
		require.NoError(t, e.s.Apply(ctx(), b.Mutations(e.key)))
		require.Equal(t, want, value(t, c))
	}
	got := rows(t, e, e.key)
	require.Len(t, got, 1)
	require.Equal(t, planB.Batch.Tally, got[tally.TallyRowKey], "the later GC's tally wins")
}

func countersIndependent(t *testing.T, e *env) {
	other := e.key + "-other"
	a, b := sumCounter(t, e, e.key), sumCounter(t, e, other)
	ma, mb := mutator(t, a), mutator(t, b)
	require.NoError(t, ma.Update(ctx(), add(1)))
	require.NoError(t, mb.Update(ctx(), add(20)))
	e.final()
	_, err := b.GC(ctx())
	require.NoError(t, err)
	require.Equal(t, int64(1), value(t, a))
	require.Equal(t, int64(20), value(t, b))
	require.Len(t, rows(t, e, e.key), 1)
	require.NotContains(t, rows(t, e, e.key), tally.TallyRowKey, "another counter's GC writes only its own partition")
}

func longIDs(t *testing.T, e *env) {
	ids := []crdt.ActorID{"日本-🦀", "zoë", crdt.ActorID(strings.Repeat("x", crdt.MaxIDLen)), "a\u00a0b"}
	i := 0
	cfg := e.cfg()
	cfg.NewID = func() crdt.ActorID { i++; return ids[i-1] }
	c, err := tally.New[*tally.Sum](e.s, e.key, cfg)
	require.NoError(t, err)
	for range ids {
		m := mutator(t, c)
		require.NoError(t, m.Update(ctx(), add(1)))
	}
	got := rows(t, e, e.key)
	for _, id := range ids {
		require.Contains(t, got, string(tally.ShardRowKey(id)))
	}
	require.Equal(t, int64(len(ids)), value(t, c))
	e.final()
	plan, err := c.GC(ctx())
	require.NoError(t, err)
	require.Equal(t, len(ids), plan.Folded)
	require.Len(t, rows(t, e, e.key), 1)
}

func distinctRoundTrip(t *testing.T, e *env) {
	c, err := tally.New[*tally.Distinct](e.s, e.key, e.cfg())
	require.NoError(t, err)
	var want tally.Distinct
	for s := range 3 {
		m := mutator(t, c)
		for i := range 20_000 { // a dense sketch: a 16 KiB row
			id := fmt.Sprint(s*10_000 + i)
			want.AddString(id)
			require.NoError(t, m.Stage(func(d *tally.Distinct) error { d.AddString(id); return nil }))
		}
		require.NoError(t, m.Flush(ctx()))
	}
	v, err := c.ReadComplete(ctx())
	require.NoError(t, err)
	require.True(t, want.Equal(v), "the union of the shards, register for register")
	e.final()
	_, err = c.GC(ctx())
	require.NoError(t, err)
	v, err = c.ReadComplete(ctx())
	require.NoError(t, err)
	require.True(t, want.Equal(v))
}

func corruptRow(t *testing.T, e *env) {
	c := sumCounter(t, e, e.key)
	m := mutator(t, c)
	require.NoError(t, m.Update(ctx(), add(1)))
	require.NoError(t, e.s.Apply(ctx(), []store.Mutation{{Partition: e.key, Op: store.OpPut, Key: []byte("x-not-tally"), Value: []byte{1}, Timestamp: 1}}))
	_, err := c.ReadComplete(ctx())
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "a row key outside the layout")
	e.final()
	_, err = c.GC(ctx())
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	require.Len(t, rows(t, e, e.key), 2, "GC never deletes what it cannot read")
}

func staleRead(t *testing.T, e *env) {
	c := sumCounter(t, e, e.key)
	var want int64
	for i := range 5 {
		m := mutator(t, c)
		require.NoError(t, m.Update(ctx(), add(int64(i+1))))
		want += int64(i + 1)
		if i == 2 {
			e.final()
			_, err := c.GC(ctx())
			require.NoError(t, err)
		}
	}
	for range 5 {
		v, err := c.Read(ctx())
		require.NoError(t, err)
		require.GreaterOrEqual(t, v.Value(), int64(0))
		require.LessOrEqual(t, v.Value(), want, "a read at store.ReadAny may miss updates, never count one twice")
	}
	require.Equal(t, want, value(t, c))
}

func concurrentMutators(t *testing.T, e *env) {
	c := sumCounter(t, e, e.key)
	const workers, updates = 8, 20
	ms := make([]*tally.Mutator[*tally.Sum], workers)
	for i := range ms {
		ms[i] = mutator(t, c)
	}
	require.NoError(t, kitrun.Parallel(workers, func(i int) error {
		for range updates {
			if err := ms[i].Update(ctx(), add(1)); err != nil {
				return err
			}
			if _, err := c.Read(ctx()); err != nil {
				return err
			}
		}
		return nil
	}))
	require.Equal(t, int64(workers*updates), value(t, c))
}

func canceledContext(t *testing.T, e *env) {
	c := sumCounter(t, e, e.key)
	m := mutator(t, c)
	done, cancel := context.WithCancel(ctx())
	cancel()
	err := m.Update(done, add(1))
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, crdt.ErrUnavailable, "nothing is sent on a done context")
	require.False(t, m.Unresolved())
	_, err = c.Read(done)
	require.ErrorIs(t, err, context.Canceled)
	_, err = c.GC(done)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, m.Update(ctx(), add(2)))
	require.Equal(t, int64(2), value(t, c), "the canceled update was not counted")
}

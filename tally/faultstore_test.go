package tally_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
)

// fault is what a faultStore makes of one call.
type fault int

// The faults. A read with any fault but pass is refused (crdt.ErrUnavailable).
const (
	pass    fault = iota // served normally
	refuse               // no effect, crdt.ErrUnavailable
	lose                 // no effect, crdt.ErrAmbiguousWrite
	loseAck              // applied, then crdt.ErrAmbiguousWrite
	hold                 // crdt.ErrAmbiguousWrite now; applied on deliver, or never
)

// call is one store call as a faultStore's policy sees it.
type call struct {
	seq       uint64 // 1, 2, ... per store
	method    string // "apply" or "snapshot"
	muts      []store.Mutation
	partition string // snapshot
	level     store.Read
}

// shardPut reports the mutator and timestamp of a call that writes one
// shard row.
func (c call) shardPut() (crdt.ActorID, int64, bool) {
	if c.method != "apply" || len(c.muts) != 1 || c.muts[0].Op != store.OpPut {
		return "", 0, false
	}
	k := c.muts[0].Key
	if len(k) < 2 || k[0] != tally.ShardRowKey("x")[0] {
		return "", 0, false
	}
	return crdt.ActorID(k[1:]), c.muts[0].Timestamp, true
}

// isGC reports whether the call writes a tally row.
func (c call) isGC() bool {
	return c.method == "apply" && len(c.muts) > 0 && string(c.muts[0].Key) == tally.TallyRowKey
}

// faultStore wraps a store.Partitions with a fault policy decided per
// call (refused, lost, landed-but-unacknowledged and held writes, refused
// reads) and counts its calls. The policy runs under the store's lock and
// must not call the store.
type faultStore struct {
	inner store.Partitions

	mu     sync.Mutex
	policy func(call) fault
	seq    uint64
	held   map[uint64][]store.Mutation

	snapshots, applies atomic.Int64
}

var _ store.Partitions = (*faultStore)(nil)

func newFaultStore(inner store.Partitions) *faultStore {
	return &faultStore{inner: inner, held: map[uint64][]store.Mutation{}}
}

func (s *faultStore) setPolicy(p func(call) fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.policy = p
}

func (s *faultStore) resetCalls() { s.snapshots.Store(0); s.applies.Store(0) }

// calls returns the number of snapshots and applies served, faulted ones
// included.
func (s *faultStore) calls() [2]int64 { return [2]int64{s.snapshots.Load(), s.applies.Load()} }

func (s *faultStore) decide(c call) fault {
	s.seq++
	c.seq = s.seq
	if s.policy == nil {
		return pass
	}
	return s.policy(c)
}

func (s *faultStore) Apply(ctx context.Context, muts []store.Mutation) error {
	s.applies.Add(1)
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := store.CheckMutations(muts); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.decide(call{method: "apply", muts: muts})
	switch f {
	case pass:
		return s.inner.Apply(ctx, muts)
	case refuse:
		return fmt.Errorf("%w: injected refusal of apply #%d", crdt.ErrUnavailable, s.seq)
	case lose:
		return fmt.Errorf("%w: injected timeout of apply #%d (dropped)", crdt.ErrAmbiguousWrite, s.seq)
	case loseAck:
		if err := s.inner.Apply(ctx, muts); err != nil {
			return err
		}
		return fmt.Errorf("%w: injected timeout of apply #%d (applied)", crdt.ErrAmbiguousWrite, s.seq)
	case hold:
		s.held[s.seq] = cloneMuts(muts)
		return fmt.Errorf("%w: injected timeout of apply #%d (held in flight)", crdt.ErrAmbiguousWrite, s.seq)
	}
	return fmt.Errorf("unknown fault %d", f)
}

func cloneMuts(muts []store.Mutation) []store.Mutation {
	out := slices.Clone(muts)
	for i := range out {
		out[i].Key, out[i].End, out[i].Value = slices.Clone(out[i].Key), slices.Clone(out[i].End), slices.Clone(out[i].Value)
	}
	return out
}

func (s *faultStore) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error) {
	s.snapshots.Add(1)
	s.mu.Lock()
	f := s.decide(call{method: "snapshot", partition: partition, level: level})
	seq := s.seq
	s.mu.Unlock()
	if f != pass {
		return nil, fmt.Errorf("%w: injected failure of snapshot #%d", crdt.ErrUnavailable, seq)
	}
	return s.inner.Snapshot(ctx, partition, limit, level)
}

func (s *faultStore) Scan(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	return s.inner.Scan(ctx, partition, from, level, fn)
}

// heldSeqs returns the seq of every held write, ascending.
func (s *faultStore) heldSeqs() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedKeys(s.held)
}

// deliver applies held write seq now and reports whether there was one.
func (s *faultStore) deliver(seq uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	muts, ok := s.held[seq]
	if ok {
		delete(s.held, seq)
		if err := s.inner.Apply(context.Background(), muts); err != nil {
			panic(err)
		}
	}
	return ok
}

// drop discards held write seq for good.
func (s *faultStore) drop(seq uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.held[seq]
	delete(s.held, seq)
	return ok
}

// staleRows wraps a store.Partitions so that a store.ReadAny snapshot
// shows, for each row independently, any value the row has held since the
// wrapper was made, or its absence: a stronger adversary than any real
// replica set, which the tally's readers must survive without counting
// twice. store.ReadComplete snapshots pass through.
type staleRows struct {
	inner store.Partitions
	mu    sync.Mutex
	rng   *rand.Rand
	hist  map[string]map[string][][]byte // partition → row key → versions (nil: absent)
}

func newStaleRows(inner store.Partitions, rng *rand.Rand) *staleRows {
	return &staleRows{inner: inner, rng: rng, hist: map[string]map[string][][]byte{}}
}

func (s *staleRows) Apply(ctx context.Context, muts []store.Mutation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.inner.Apply(ctx, muts); err != nil {
		return err
	}
	done := map[string]bool{}
	for _, m := range muts {
		if done[m.Partition] {
			continue
		}
		done[m.Partition] = true
		rows, err := s.inner.Snapshot(context.Background(), m.Partition, 1<<30, store.ReadComplete)
		if err != nil {
			return err
		}
		h := s.hist[m.Partition]
		if h == nil {
			h = map[string][][]byte{}
			s.hist[m.Partition] = h
		}
		now := map[string][]byte{}
		for _, r := range rows {
			now[string(r.Key)] = r.Value
		}
		for k := range h {
			if _, ok := now[k]; !ok {
				now[k] = nil
			}
		}
		for k, v := range now {
			vs := h[k]
			if vs == nil {
				vs = [][]byte{nil} // absent before its first write
			}
			if last := vs[len(vs)-1]; (last == nil) != (v == nil) || string(last) != string(v) {
				vs = append(vs, v)
			}
			h[k] = vs
		}
	}
	return nil
}

func (s *staleRows) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error) {
	if level == store.ReadComplete {
		return s.inner.Snapshot(ctx, partition, limit, level)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hist[partition]
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys) // reproducible picks
	var rows []store.Row
	for _, k := range keys {
		vs := h[k]
		if v := vs[s.rng.IntN(len(vs))]; v != nil {
			rows = append(rows, store.Row{Key: []byte(k), Value: slices.Clone(v)})
		}
	}
	if len(rows) > limit {
		return nil, fmt.Errorf("stale snapshot of %d rows: %w", len(rows), crdt.ErrTooLarge)
	}
	return rows, nil
}

func (s *staleRows) Scan(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	return s.inner.Scan(ctx, partition, from, level, fn)
}

// countShards counts the shard rows of counter key, reading completely.
func countShards(s store.Partitions, key string) (int, error) {
	rows, err := s.Snapshot(context.Background(), key, 1<<30, store.ReadComplete)
	n := 0
	for _, r := range rows {
		if string(r.Key) != tally.TallyRowKey {
			n++
		}
	}
	return n, err
}

func liveShards(t testing.TB, s store.Partitions, key string) int {
	t.Helper()
	n, err := countShards(s, key)
	require.NoError(t, err)
	return n
}

// TestStaleRowsShowsEveryPastVersion: ReadAny snapshots show, per row, only
// values the row really held (or its absence), and every one of them over
// enough reads; ReadComplete is always current.
func TestStaleRowsShowsEveryPastVersion(t *testing.T) {
	ctx := context.Background()
	s := newStaleRows(memory.NewPartitions(), rand.New(rand.NewPCG(1, 2)))
	put := func(v byte, ts int64) store.Mutation {
		return store.Mutation{Partition: "k", Op: store.OpPut, Key: []byte("sm"), Value: []byte{v}, Timestamp: ts}
	}
	for ts := int64(1); ts <= 5; ts++ {
		require.NoError(t, s.Apply(ctx, []store.Mutation{put(byte(ts), ts)}))
	}
	require.NoError(t, s.Apply(ctx, tally.GCBatch{WriteTS: 9, Tally: []byte("T"), Delete: []crdt.ActorID{"m"}}.Mutations("k")))
	seen := map[int]bool{}
	for range 300 {
		rows, err := s.Snapshot(ctx, "k", 10, store.ReadAny)
		require.NoError(t, err)
		shard := 0
		for _, r := range rows {
			if string(r.Key) == "sm" {
				shard = int(r.Value[0])
			} else {
				require.Equal(t, "T", string(r.Value))
			}
		}
		seen[shard] = true
		rows, err = s.Snapshot(ctx, "k", 10, store.ReadComplete)
		require.NoError(t, err)
		require.Equal(t, []store.Row{{Key: []byte("t"), Value: []byte("T")}}, rows)
	}
	require.Len(t, seen, 6, "every past version, and absence, shows up in stale reads")
}

// TestFaultStore: each fault does what it says.
func TestFaultStore(t *testing.T) {
	ctx := context.Background()
	s := newFaultStore(memory.NewPartitions())
	put := func(data string, ts int64) error {
		return s.Apply(ctx, []store.Mutation{{Partition: "k", Op: store.OpPut, Key: []byte("sm"), Value: []byte(data), Timestamp: ts}})
	}
	read := func() string {
		rows, err := s.Snapshot(ctx, "k", 10, store.ReadComplete)
		require.NoError(t, err)
		if len(rows) == 0 {
			return ""
		}
		return string(rows[0].Value)
	}
	var next fault
	s.setPolicy(func(c call) fault {
		if c.method != "apply" {
			return pass
		}
		return next
	})
	next = refuse
	require.ErrorIs(t, put("refused", 1), crdt.ErrUnavailable)
	require.Equal(t, "", read())
	next = lose
	require.ErrorIs(t, put("lost", 2), crdt.ErrAmbiguousWrite)
	require.Equal(t, "", read())
	next = loseAck
	require.ErrorIs(t, put("landed", 3), crdt.ErrAmbiguousWrite)
	require.Equal(t, "landed", read())
	next = hold
	require.ErrorIs(t, put("held-late", 5), crdt.ErrAmbiguousWrite)
	require.ErrorIs(t, put("held-dropped", 6), crdt.ErrAmbiguousWrite)
	require.Equal(t, "landed", read())
	held := s.heldSeqs()
	require.Len(t, held, 2)
	require.True(t, s.deliver(held[0]))
	require.Equal(t, "held-late", read())
	require.True(t, s.drop(held[1]))
	require.False(t, s.deliver(held[1]))
	require.Equal(t, "held-late", read())
	require.Equal(t, [2]int64{6, 5}, s.calls())
	s.setPolicy(func(call) fault { return lose })
	_, err := s.Snapshot(ctx, "k", 10, store.ReadComplete)
	require.ErrorIs(t, err, crdt.ErrUnavailable, "a faulted read is refused")
}

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
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tally"
)

// recorder sits above a faulty.Partitions. It counts the calls made
// through it and keeps the batch (or read level) of the call in progress,
// which a faulty.Call does not carry, so that a policy can tell a shard
// write, its mutator and timestamp, from a GC batch, and a complete read
// from a stale one. Tests using it make one call at a time.
type recorder struct {
	*faulty.Partitions

	mu    sync.Mutex
	muts  []store.Mutation // of the Apply in progress
	level store.Read       // of the Snapshot in progress

	snapshots, applies atomic.Int64
}

func newRecorder(inner store.Partitions, o faulty.Options) *recorder {
	return &recorder{Partitions: faulty.NewPartitions(inner, o)}
}

func (r *recorder) Apply(ctx context.Context, muts []store.Mutation) error {
	r.applies.Add(1)
	r.mu.Lock()
	r.muts = muts
	r.mu.Unlock()
	return r.Partitions.Apply(ctx, muts)
}

func (r *recorder) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error) {
	r.snapshots.Add(1)
	r.mu.Lock()
	r.muts, r.level = nil, level
	r.mu.Unlock()
	return r.Partitions.Snapshot(ctx, partition, limit, level)
}

// current returns the batch of the Apply in progress and the level of the
// Snapshot in progress (for a policy, which runs inside the call).
func (r *recorder) current() ([]store.Mutation, store.Read) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.muts, r.level
}

func (r *recorder) resetCalls() { r.snapshots.Store(0); r.applies.Store(0) }

// calls returns the number of snapshots and applies made, faulted ones
// included.
func (r *recorder) calls() [2]int64 { return [2]int64{r.snapshots.Load(), r.applies.Load()} }

// deliverCall delivers the held batch of call n and reports whether there
// was one.
func (r *recorder) deliverCall(n uint64) bool {
	for i, c := range r.HeldCalls() {
		if c.N == n {
			if err := r.Deliver(i); err != nil {
				panic(err)
			}
			return true
		}
	}
	return false
}

// shardFaults returns a policy that serves fs, in order, to the shard
// writes (then passes them) and records their timestamps in ts; every
// other call passes.
func (r *recorder) shardFaults(ts *[]int64, fs ...faulty.Fault) faulty.Policy {
	return func(c faulty.Call) faulty.Fault {
		muts, _ := r.current()
		_, wts, ok := shardPut(c, muts)
		if !ok {
			return faulty.Pass
		}
		*ts = append(*ts, wts)
		if len(fs) == 0 {
			return faulty.Pass
		}
		f := fs[0]
		fs = fs[1:]
		return f
	}
}

// shardPut reports the mutator and timestamp of an Apply that writes one
// shard row.
func shardPut(c faulty.Call, muts []store.Mutation) (crdt.ActorID, int64, bool) {
	if c.Method != faulty.MethodApply || len(muts) != 1 || muts[0].Op != store.OpPut {
		return "", 0, false
	}
	k := muts[0].Key
	if len(k) < 2 || k[0] != tally.ShardRowKey("x")[0] {
		return "", 0, false
	}
	return crdt.ActorID(k[1:]), muts[0].Timestamp, true
}

// isGC reports whether an Apply writes a tally row.
func isGC(c faulty.Call, muts []store.Mutation) bool {
	return c.Method == faulty.MethodApply && len(muts) > 0 && string(muts[0].Key) == tally.TallyRowKey
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

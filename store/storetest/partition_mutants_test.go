package storetest

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/storekit"
	"github.com/counterkit/counterkit/store"
)

// modelStore is a store.Partitions built on the model, with knobs that
// break one rule each. With no knob set it keeps the contract, so the kit
// is also checked against an implementation independent of memory's.
type modelStore struct {
	mu sync.Mutex
	m  model

	tieSmaller    bool // equal timestamps: the smaller value wins
	strictDeletes bool // a delete hides only strictly older values
	forgetDeletes bool // a delete hides only values already applied
	mutationsOnly bool // mutations checked one by one: no batch limits
}

func (s *modelStore) Apply(ctx context.Context, muts []store.Mutation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.mutationsOnly {
		for _, m := range muts {
			if err := store.CheckMutations([]store.Mutation{m}); err != nil {
				return err
			}
		}
	} else if err := store.CheckMutations(muts); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range storekit.CloneBatch(muts) {
		if s.strictDeletes && m.Op != store.OpPut {
			m.Timestamp-- // now shadows ts < original only
		}
		if s.forgetDeletes && m.Op != store.OpPut {
			// Expand the delete into deletes of the rows it hides now.
			for _, old := range s.m.muts {
				if old.Partition == m.Partition && old.Op == store.OpPut && m.Shadows(old.Key, old.Timestamp) {
					s.m.muts = append(s.m.muts, store.Mutation{Partition: m.Partition, Op: store.OpDelete, Key: old.Key, Timestamp: m.Timestamp, Value: []byte("forgotten")})
				}
			}
			continue
		}
		if s.tieSmaller && m.Op == store.OpPut {
			m.Value = invert(m.Value)
		}
		s.m.muts = append(s.m.muts, m)
	}
	return nil
}

// invert maps bytes to 0xff-b, reversing their order for equal lengths.
func invert(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = 0xff - c
	}
	return out
}

func (s *modelStore) read(partition string) []store.Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rows []store.Row
	if s.forgetDeletes {
		rows = s.rowsForgetting(partition)
	} else {
		rows = s.m.rows(partition)
	}
	out := make([]store.Row, len(rows))
	for i, r := range rows {
		v := r.Value
		if s.tieSmaller {
			v = invert(v)
		}
		out[i] = store.Row{Key: slices.Clone(r.Key), Value: slices.Clone(v)}
	}
	return out
}

// rowsForgetting: a delete (expanded to point deletes, marked "forgotten")
// hides only the puts that came before it.
func (s *modelStore) rowsForgetting(partition string) []store.Row {
	type del struct {
		at int
		m  store.Mutation
	}
	var dels []del
	for i, d := range s.m.muts {
		if d.Partition == partition && d.Op == store.OpDelete {
			dels = append(dels, del{i, d})
		}
	}
	best := map[string]store.Mutation{}
	for i, p := range s.m.muts {
		if p.Partition != partition || p.Op != store.OpPut {
			continue
		}
		hidden := false
		for _, d := range dels {
			if d.at > i && d.m.Shadows(p.Key, p.Timestamp) {
				hidden = true
				break
			}
		}
		if hidden {
			continue
		}
		if b, ok := best[string(p.Key)]; !ok || store.Wins(p.Value, p.Timestamp, b.Value, b.Timestamp) {
			best[string(p.Key)] = p
		}
	}
	var out []store.Row
	for k, p := range best {
		out = append(out, store.Row{Key: []byte(k), Value: p.Value})
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Key, out[j].Key) < 0 })
	return out
}

func (s *modelStore) Scan(ctx context.Context, partition string, from []byte, _ store.Read, fn func(store.Row) bool) error {
	if err := crdt.ValidateKey("partition key", partition); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, r := range s.read(partition) {
		if bytes.Compare(r.Key, from) >= 0 && !fn(r) {
			return nil
		}
	}
	return nil
}

func (s *modelStore) Snapshot(ctx context.Context, partition string, limit int, _ store.Read) ([]store.Row, error) {
	if err := crdt.ValidateKey("partition key", partition); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, fmt.Errorf("model: limit %d: %w", limit, crdt.ErrInvalidConfig)
	}
	rows := s.read(partition)
	if len(rows) > limit {
		return nil, fmt.Errorf("model: %d rows: %w", len(rows), crdt.ErrTooLarge)
	}
	return rows, nil
}

// partWrap changes one method of a store.
type partWrap struct {
	store.Partitions
	apply    func(ctx context.Context, muts []store.Mutation) error
	scan     func(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error
	snapshot func(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error)
}

func (w *partWrap) Apply(ctx context.Context, muts []store.Mutation) error {
	if w.apply != nil {
		return w.apply(ctx, muts)
	}
	return w.Partitions.Apply(ctx, muts)
}

func (w *partWrap) Scan(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	if w.scan != nil {
		return w.scan(ctx, partition, from, level, fn)
	}
	return w.Partitions.Scan(ctx, partition, from, level, fn)
}

func (w *partWrap) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error) {
	if w.snapshot != nil {
		return w.snapshot(ctx, partition, limit, level)
	}
	return w.Partitions.Snapshot(ctx, partition, limit, level)
}

// mapMuts wraps memory.Partitions with an Apply that rewrites each batch.
func mapMuts(f func(muts []store.Mutation) []store.Mutation) func() store.Partitions {
	return func() store.Partitions {
		in := memory.NewPartitions()
		return &partWrap{Partitions: in, apply: func(ctx context.Context, muts []store.Mutation) error {
			if err := store.CheckMutations(muts); err != nil {
				return err
			}
			return in.Apply(ctx, f(storekit.CloneBatch(muts)))
		}}
	}
}

var partitionMutants = []struct {
	name     string
	mustFail []string
	make     func() store.Partitions
}{
	{"timestamps ignored (arrival order wins)", []string{"lww", "delete-shadows", "late-write", "model", "idempotence"}, func() store.Partitions {
		var mu sync.Mutex
		var clock int64
		return mapMuts(func(muts []store.Mutation) []store.Mutation {
			mu.Lock()
			defer mu.Unlock()
			clock++
			for i := range muts {
				muts[i].Timestamp = clock
			}
			return muts
		})()
	}},
	{"equal timestamps: the smaller value wins", []string{"lww", "model", "idempotence"}, func() store.Partitions { return &modelStore{tieSmaller: true} }},
	{"a delete hides only strictly older values", []string{"delete-shadows", "late-write", "model"}, func() store.Partitions { return &modelStore{strictDeletes: true} }},
	{"tombstones forgotten: a late write under a delete shows", []string{"late-write", "idempotence"}, func() store.Partitions { return &modelStore{forgetDeletes: true} }},
	{"range delete includes End", []string{"range-bounds"}, mapMuts(func(muts []store.Mutation) []store.Mutation {
		for i, m := range muts {
			if m.Op == store.OpDeleteRange && m.End != nil {
				muts[i].End = append(m.End, 0)
			}
		}
		return muts
	})},
	{"range delete excludes Key", []string{"range-bounds"}, mapMuts(func(muts []store.Mutation) []store.Mutation {
		for i, m := range muts {
			if m.Op == store.OpDeleteRange && m.Key != nil {
				next := append(slices.Clone(m.Key), 0)
				if m.End != nil && bytes.Compare(next, m.End) >= 0 {
					muts[i].Op, muts[i].Key, muts[i].End = store.OpDelete, []byte("\xff\xff\xff nothing"), nil
					continue
				}
				muts[i].Key = next
			}
		}
		return muts
	})},
	{"reads in signed byte order", []string{"scan", "snapshot", "range-bounds", "model"}, func() store.Partitions {
		in := memory.NewPartitions()
		signed := func(rows []store.Row) {
			sort.SliceStable(rows, func(i, j int) bool {
				a, b := rows[i].Key, rows[j].Key
				for k := 0; k < len(a) && k < len(b); k++ {
					if a[k] != b[k] {
						return int8(a[k]) < int8(b[k])
					}
				}
				return len(a) < len(b)
			})
		}
		return &partWrap{Partitions: in,
			snapshot: func(ctx context.Context, p string, limit int, l store.Read) ([]store.Row, error) {
				rows, err := in.Snapshot(ctx, p, limit, l)
				signed(rows)
				return rows, err
			},
			scan: func(ctx context.Context, p string, from []byte, l store.Read, fn func(store.Row) bool) error {
				rows, err := in.Snapshot(ctx, p, 1<<30, l)
				if err != nil {
					return err
				}
				signed(rows)
				for _, r := range rows {
					if bytes.Compare(r.Key, from) >= 0 && !fn(r) {
						return nil
					}
				}
				return nil
			},
		}
	}},
	{"Scan does not stop when fn returns false", []string{"scan"}, func() store.Partitions {
		in := memory.NewPartitions()
		return &partWrap{Partitions: in, scan: func(ctx context.Context, p string, from []byte, l store.Read, fn func(store.Row) bool) error {
			return in.Scan(ctx, p, from, l, func(r store.Row) bool { fn(r); return true })
		}}
	}},
	{"Scan ignores from", []string{"scan", "model"}, func() store.Partitions {
		in := memory.NewPartitions()
		return &partWrap{Partitions: in, scan: func(ctx context.Context, p string, _ []byte, l store.Read, fn func(store.Row) bool) error {
			return in.Scan(ctx, p, nil, l, fn)
		}}
	}},
	{"Scan loses the last page", []string{"scan"}, func() store.Partitions {
		in := memory.NewPartitions()
		return &partWrap{Partitions: in, scan: func(ctx context.Context, p string, from []byte, l store.Read, fn func(store.Row) bool) error {
			n := 0
			return in.Scan(ctx, p, from, l, func(r store.Row) bool { n++; return n <= 1000 && fn(r) })
		}}
	}},
	{"Snapshot ignores its limit", []string{"snapshot"}, func() store.Partitions {
		in := memory.NewPartitions()
		return &partWrap{Partitions: in, snapshot: func(ctx context.Context, p string, _ int, l store.Read) ([]store.Row, error) {
			return in.Snapshot(ctx, p, 1<<30, l)
		}}
	}},
	{"Snapshot reads limit+1 rows, which wraps at math.MaxInt", []string{"snapshot"}, func() store.Partitions {
		in := memory.NewPartitions()
		return &partWrap{Partitions: in, snapshot: func(ctx context.Context, p string, limit int, l store.Read) ([]store.Row, error) {
			if limit+1 < 0 {
				return nil, nil // a read of a negative number of rows
			}
			return in.Snapshot(ctx, p, limit, l)
		}}
	}},
	{"Snapshot takes a negative limit as 0", []string{"snapshot"}, func() store.Partitions {
		in := memory.NewPartitions()
		return &partWrap{Partitions: in, snapshot: func(ctx context.Context, p string, limit int, l store.Read) ([]store.Row, error) {
			return in.Snapshot(ctx, p, max(limit, 0), l)
		}}
	}},
	{"Snapshot not isolated", []string{"isolation"}, func() store.Partitions {
		// Snapshot reads row by row. So that the check sees part of a
		// batch whatever the scheduler does, a batch applied during a
		// Snapshot waits for it to pass its first row, and the Snapshot
		// waits there for the batch (each a moment at most).
		in := &memory.Partitions{PageSize: 1}
		var snapshots, reading, applying, applied atomic.Int64
		wait := func(d time.Duration, until func() bool) {
			for end := time.Now().Add(d); !until() && time.Now().Before(end); {
				runtime.Gosched()
			}
		}
		return &partWrap{Partitions: in, apply: func(ctx context.Context, muts []store.Mutation) error {
			applying.Add(1)
			defer applying.Add(-1)
			if snapshots.Load() > 0 {
				wait(20*time.Millisecond, func() bool { return reading.Load() > 0 })
			}
			err := in.Apply(ctx, muts)
			applied.Add(1)
			return err
		}, snapshot: func(ctx context.Context, p string, limit int, l store.Read) ([]store.Row, error) {
			snapshots.Add(1)
			defer snapshots.Add(-1)
			var rows []store.Row
			err := in.Scan(ctx, p, nil, l, func(r store.Row) bool {
				rows = append(rows, r)
				if len(rows) == 1 && applying.Load() > 0 {
					from := applied.Load()
					reading.Add(1)
					wait(100*time.Millisecond, func() bool { return applied.Load() != from })
					reading.Add(-1)
				}
				return true
			})
			if len(rows) > limit {
				return nil, crdt.ErrTooLarge
			}
			return rows, err
		}}
	}},
	{"Apply not atomic", []string{"atomic", "refusals"}, func() store.Partitions {
		in := memory.NewPartitions()
		return &partWrap{Partitions: in, apply: func(ctx context.Context, muts []store.Mutation) error {
			for _, m := range muts {
				if err := in.Apply(ctx, []store.Mutation{m}); err != nil {
					return err
				}
			}
			return nil
		}}
	}},
	{"invalid mutations skipped", []string{"atomic", "refusals"}, func() store.Partitions {
		in := memory.NewPartitions()
		return &partWrap{Partitions: in, apply: func(ctx context.Context, muts []store.Mutation) error {
			var ok []store.Mutation
			for _, m := range muts {
				if store.CheckMutations([]store.Mutation{m}) == nil {
					ok = append(ok, m)
				}
			}
			return in.Apply(ctx, ok)
		}}
	}},
	{"batch limits not enforced", []string{"refusals"}, func() store.Partitions { return &modelStore{mutationsOnly: true} }},
	{"the largest rows refused", []string{"limits"}, func() store.Partitions {
		in := memory.NewPartitions()
		return &partWrap{Partitions: in, apply: func(ctx context.Context, muts []store.Mutation) error {
			for _, m := range muts {
				if len(m.Value) > 1<<20 {
					return fmt.Errorf("value over 1 MiB: %w", crdt.ErrTooLarge)
				}
			}
			return in.Apply(ctx, muts)
		}}
	}},
	{"reads share memory", []string{"copies"}, func() store.Partitions {
		in := memory.NewPartitions()
		var mu sync.Mutex
		cache := map[string][]store.Row{}
		snap := func(ctx context.Context, p string, limit int, l store.Read) ([]store.Row, error) {
			rows, err := in.Snapshot(ctx, p, limit, l)
			if err != nil {
				return nil, err
			}
			mu.Lock()
			defer mu.Unlock()
			if c, ok := cache[p]; ok && len(c) == len(rows) {
				return c, nil
			}
			cache[p] = rows
			return rows, nil
		}
		return &partWrap{Partitions: in, snapshot: snap,
			scan: func(ctx context.Context, p string, from []byte, l store.Read, fn func(store.Row) bool) error {
				rows, err := snap(ctx, p, 1<<30, l)
				if err != nil {
					return err
				}
				for _, r := range rows {
					if bytes.Compare(r.Key, from) >= 0 && !fn(r) {
						return nil
					}
				}
				return nil
			},
		}
	}},
	{"Apply keeps the caller's range bounds", []string{"copies"}, func() store.Partitions {
		// Deletes are re-applied, from the caller's own slices, on every
		// later batch.
		in := memory.NewPartitions()
		var mu sync.Mutex
		var dels []store.Mutation
		return &partWrap{Partitions: in, apply: func(ctx context.Context, muts []store.Mutation) error {
			if err := in.Apply(ctx, muts); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, m := range muts {
				if m.Op == store.OpDeleteRange {
					dels = append(dels, m)
				}
			}
			return in.Apply(ctx, dels)
		}}
	}},
	{"context ignored", []string{"cancelled"}, func() store.Partitions {
		in := memory.NewPartitions()
		bg := context.Background()
		return &partWrap{Partitions: in,
			apply: func(_ context.Context, muts []store.Mutation) error { return in.Apply(bg, muts) },
			scan: func(_ context.Context, p string, from []byte, l store.Read, fn func(store.Row) bool) error {
				return in.Scan(bg, p, from, l, fn)
			},
			snapshot: func(_ context.Context, p string, limit int, l store.Read) ([]store.Row, error) {
				return in.Snapshot(bg, p, limit, l)
			},
		}
	}},
}

// TestPartitionMutantsAreCaught: each mutant fails the checks it lists.
// In the race pass (-short) only concurrentChecks run (runChecks): a
// mutant that must fail none of them skips, and the others are held to
// those.
func TestPartitionMutantsAreCaught(t *testing.T) {
	for _, m := range partitionMutants {
		t.Run(m.name, func(t *testing.T) {
			skipSequentialMutant(t, m.mustFail)
			res := runChecks(t, partitionChecks, m.make, m.mustFail...)
			if slices.Contains(m.mustFail, "isolation") {
				// A race the mutant makes likely, not certain: a few more chances.
				iso := partitionChecks[slices.IndexFunc(partitionChecks, func(c check[store.Partitions]) bool { return c.name == "isolation" })]
				for i := 0; i < 20 && res["isolation"] == nil; i++ {
					res["isolation"] = runChecks(t, []check[store.Partitions]{iso}, m.make)["isolation"]
				}
			}
			var caught []string
			for _, n := range names(partitionChecks) {
				if res[n] != nil {
					caught = append(caught, n)
				}
			}
			for _, n := range m.mustFail {
				if err, ran := res[n]; ran && err == nil {
					t.Errorf("check %s passed on a store where %s", n, m.name)
				}
			}
			if len(caught) == 0 {
				t.Fatalf("no check caught a store where %s", m.name)
			}
			t.Logf("caught by %v; first: %v", caught, res[caught[0]])
		})
	}
}

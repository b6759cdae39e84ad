package embedded_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
)

var (
	modelParts = []string{"p1", "p2", "p10"}
	modelKeys  = []string{"", "a", "a\x00", "b", "ba", "c", "d", "zz"}
)

var tsBase = time.Now().UnixMicro()

func randMutation(rng *rand.Rand) store.Mutation {
	m := store.Mutation{
		Partition: modelParts[rng.IntN(len(modelParts))],
		Key:       []byte(modelKeys[rng.IntN(len(modelKeys))]),
		// A small spread: ties and late writes are common.
		Timestamp: tsBase + rng.Int64N(12),
	}
	switch r := rng.IntN(20); {
	case r < 12:
		m.Op = store.OpPut
		m.Value = []byte{byte('A' + rng.IntN(4)), byte(rng.IntN(3))}
	case r < 15:
		m.Op = store.OpDelete
	case r < 19:
		m.Op = store.OpDeleteRange
		if rng.IntN(4) > 0 {
			for {
				e := modelKeys[rng.IntN(len(modelKeys))]
				if e > string(m.Key) {
					m.End = []byte(e)
					break
				}
				if string(m.Key) == "zz" {
					break
				}
			}
		}
	default:
		m.Op = store.OpDeletePartition
		m.Key = nil
	}
	return m
}

func samePartitions(t *testing.T, ctx context.Context, want, got store.Partitions, rng *rand.Rand) error {
	t.Helper()
	for _, p := range modelParts {
		w, err1 := want.Snapshot(ctx, p, 100, store.ReadComplete)
		g, err2 := got.Snapshot(ctx, p, 100, store.ReadComplete)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("snapshot %s: %v / %v", p, err1, err2)
		}
		if !sameRows(w, g) {
			return fmt.Errorf("partition %s: memory %s, embedded %s", p, showRows(w), showRows(g))
		}
		from := []byte(modelKeys[rng.IntN(len(modelKeys))])
		stop := 1 + rng.IntN(5)
		var ws, gs []store.Row
		want.Scan(ctx, p, from, store.ReadComplete, func(r store.Row) bool { ws = append(ws, r); return len(ws) < stop })
		got.Scan(ctx, p, from, store.ReadComplete, func(r store.Row) bool { gs = append(gs, r); return len(gs) < stop })
		if !sameRows(ws, gs) {
			return fmt.Errorf("scan %s from %q: memory %s, embedded %s", p, from, showRows(ws), showRows(gs))
		}
	}
	return nil
}

func sameRows(a, b []store.Row) bool {
	return slices.EqualFunc(a, b, func(x, y store.Row) bool {
		return bytes.Equal(x.Key, y.Key) && bytes.Equal(x.Value, y.Value)
	})
}

func showRows(rs []store.Row) string {
	s := "["
	for _, r := range rs {
		v := r.Value
		if len(v) > 24 {
			v = append(v[:24:24], "..."...)
		}
		s += fmt.Sprintf(" %q=%q", r.Key, v)
	}
	return s + " ]"
}

// TestPartitionsBehaveLikeMemory applies the same random batches (ties,
// late writes under deletes, overlapping ranges, partition drops) to
// memory.Partitions and to the embedded store, reopening the directory now
// and then, and compares every partition after each batch.
func TestPartitionsBehaveLikeMemory(t *testing.T) {
	t.Parallel()
	rng, _ := seeded(t)
	ctx := context.Background()
	for c := range proptest.Scale(15) {
		dir := t.TempDir()
		opts := embedded.Options{PageSize: 1 + rng.IntN(3)}
		db, err := embedded.Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		mem := memory.NewPartitions()
		var log []string
		for step := range 40 {
			batch := make([]store.Mutation, 1+rng.IntN(4))
			for i := range batch {
				batch[i] = randMutation(rng)
				log = append(log, fmt.Sprintf("%d: %s %s %q..%q ts=%d %q", step, batch[i].Op, batch[i].Partition, batch[i].Key, batch[i].End, batch[i].Timestamp, batch[i].Value))
			}
			if err := mem.Apply(ctx, batch); err != nil {
				t.Fatal(err)
			}
			if err := db.Partitions().Apply(ctx, batch); err != nil {
				t.Fatalf("case %d step %d: %v", c, step, err)
			}
			if rng.IntN(10) == 0 {
				db.Close()
				if db, err = embedded.Open(dir, opts); err != nil {
					t.Fatal(err)
				}
			}
			if err := samePartitions(t, ctx, mem, db.Partitions(), rng); err != nil {
				db.Close()
				t.Fatalf("case %d step %d: %v\nbatches:\n%s", c, step, err, joinLines(log))
			}
		}
		db.Close()
	}
}

func joinLines(l []string) string {
	s := ""
	for _, x := range l {
		s += x + "\n"
	}
	return s
}

// TestSiblingsBehaveLikeMemory runs three clients that fetch, put with
// their last token (or none) and delete, against memory.Siblings and the
// embedded store, and compares the siblings of every key after each step.
func TestSiblingsBehaveLikeMemory(t *testing.T) {
	t.Parallel()
	rng, _ := seeded(t)
	ctx := context.Background()
	keys := []string{"k1", "k2", "k"}
	for c := range proptest.Scale(12) {
		dir := t.TempDir()
		db, err := embedded.Open(dir, embedded.Options{})
		if err != nil {
			t.Fatal(err)
		}
		mem := memory.NewSiblings()
		type tokens struct{ mem, emb store.Token }
		held := map[[2]int]tokens{} // client, key → tokens of its last fetch
		n := 0
		for step := range 40 {
			cl, ki := rng.IntN(3), rng.IntN(len(keys))
			key := keys[ki]
			switch r := rng.IntN(10); {
			case r < 4:
				_, tm, err1 := mem.Fetch(ctx, key)
				_, te, err2 := db.Siblings().Fetch(ctx, key)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				held[[2]int{cl, ki}] = tokens{tm, te}
			case r < 9:
				n++
				v := []byte(fmt.Sprintf("v%d", n))
				tk := held[[2]int{cl, ki}]
				if rng.IntN(4) == 0 {
					tk = tokens{}
				}
				if err := mem.Put(ctx, key, "actor", v, tk.mem); err != nil {
					t.Fatal(err)
				}
				if err := db.Siblings().Put(ctx, key, "actor", v, tk.emb); err != nil {
					t.Fatal(err)
				}
			default:
				tk := held[[2]int{cl, ki}]
				if err := mem.Delete(ctx, key, tk.mem); err != nil {
					t.Fatal(err)
				}
				if err := db.Siblings().Delete(ctx, key, tk.emb); err != nil {
					t.Fatal(err)
				}
			}
			if rng.IntN(10) == 0 {
				db.Close()
				if db, err = embedded.Open(dir, embedded.Options{}); err != nil {
					t.Fatal(err)
				}
			}
			for _, k := range keys {
				wv, _, _ := mem.Fetch(ctx, k)
				gv, _, err := db.Siblings().Fetch(ctx, k)
				if err != nil {
					t.Fatal(err)
				}
				slices.SortFunc(wv, bytes.Compare)
				slices.SortFunc(gv, bytes.Compare)
				if !slices.EqualFunc(wv, gv, bytes.Equal) {
					t.Fatalf("case %d step %d key %s: memory %q, embedded %q", c, step, k, wv, gv)
				}
			}
		}
		db.Close()
	}
}

package memory

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/store"
)

// model is the rule of store.Mutation applied to every mutation so far:
// a row is its put with the greatest timestamp (then value), unless a
// deletion covering it has a timestamp at least as great.
type model struct{ muts []store.Mutation }

func (md *model) rows(partition string) []store.Row {
	best := map[string]store.Mutation{}
	for _, m := range md.muts {
		if m.Partition != partition || m.Op != store.OpPut {
			continue
		}
		if b, ok := best[string(m.Key)]; !ok || store.Wins(m.Value, m.Timestamp, b.Value, b.Timestamp) {
			best[string(m.Key)] = m
		}
	}
	var out []store.Row
	for k, p := range best {
		shadowed := false
		for _, d := range md.muts {
			if d.Partition == partition && d.Op != store.OpPut && d.Shadows([]byte(k), p.Timestamp) {
				shadowed = true
				break
			}
		}
		if !shadowed {
			out = append(out, store.Row{Key: []byte(k), Value: p.Value})
		}
	}
	slices.SortFunc(out, func(a, b store.Row) int { return bytes.Compare(a.Key, b.Key) })
	return out
}

// TestPartitionsAgainstModel applies random batches (keys of 0 to 60
// bytes sharing long prefixes, so short and long keys, values up to 3 chunks,
// timestamps that tie, every op) to Partitions in shuffled order and
// compares each partition's rows, by Snapshot and by Scan from a random
// key, with the model. It also checks the values' chunks: live and garbage
// bytes add up, and garbage is compacted once it is most of them. It runs
// on one goroutine: the race pass (-short) leaves it to the full pass.
func TestPartitionsAgainstModel(t *testing.T) {
	testsize.SkipSequential(t)
	for seed := range uint64(10) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			ctx := context.Background()
			s := &Partitions{PageSize: 1 + rng.IntN(5)}
			var md model
			parts := []string{"p", "q"}
			key := func() []byte {
				// 'a's with up to two 'b's: keys that share long prefixes.
				k := bytes.Repeat([]byte{'a'}, []int{0, 1, 17, 33, 39, 40, 41, 42, 60}[rng.IntN(9)])
				for range rng.IntN(3) {
					if len(k) > 0 {
						k[rng.IntN(len(k))] = 'b'
					}
				}
				return k
			}
			value := func() []byte {
				n := 1 + rng.IntN(64)
				switch rng.IntN(20) {
				case 0:
					n = chunkSize/4 + rng.IntN(3*chunkSize)
				case 1:
					n = chunkSize / 4
				}
				return bytes.Repeat([]byte{byte(rng.IntN(256))}, n)
			}
			for step := range 200 {
				var batch []store.Mutation
				part := parts[rng.IntN(len(parts))] // large batches span one partition
				for range 1 + rng.IntN(8) {
					m := store.Mutation{Partition: part, Timestamp: 1 + int64(rng.IntN(40+step))}
					switch r := rng.IntN(20); {
					case r < 14:
						m.Op, m.Key, m.Value = store.OpPut, key(), value()
					case r < 17:
						m.Op, m.Key = store.OpDelete, key()
					case r < 19:
						m.Op, m.Key = store.OpDeleteRange, key()
						if end := key(); string(end) > string(m.Key) {
							m.End = end
						}
					default:
						m.Op = store.OpDeletePartition
					}
					batch = append(batch, m)
				}
				if err := s.Apply(ctx, batch); err != nil {
					t.Fatal(err)
				}
				md.muts = append(md.muts, batch...)
				for _, part := range parts {
					want := md.rows(part)
					got, err := s.Snapshot(ctx, part, 1_000_000, store.ReadComplete)
					if err != nil {
						t.Fatal(err)
					}
					if !rowsEqual(got, want) {
						t.Fatalf("step %d, partition %s:\n got %s\nwant %s", step, part, show(got), show(want))
					}
					from := key()
					var scanned []store.Row
					if err := s.Scan(ctx, part, from, store.ReadComplete, func(r store.Row) bool {
						scanned = append(scanned, r)
						return true
					}); err != nil {
						t.Fatal(err)
					}
					i, _ := slices.BinarySearchFunc(want, from, func(r store.Row, k []byte) int { return bytes.Compare(r.Key, k) })
					if !rowsEqual(scanned, want[i:]) {
						t.Fatalf("step %d, partition %s, scan from %q:\n got %s\nwant %s", step, part, from, show(scanned), show(want[i:]))
					}
					if p := s.parts[part]; p != nil {
						live := 0
						for _, r := range want {
							live += len(r.Value)
						}
						if p.size-p.garbage != live {
							t.Fatalf("step %d: chunks hold %d bytes, %d garbage, live values are %d", step, p.size, p.garbage, live)
						}
						if p.garbage >= compactMin && p.garbage >= p.size/2 {
							t.Fatalf("step %d: %d bytes of garbage in %d not compacted", step, p.garbage, p.size)
						}
					}
				}
			}
		})
	}
}

// TestPartitionsValuesAreCopies: a value written is copied in, and a value
// read is a copy out, also after compaction moved it.
func TestPartitionsValuesAreCopies(t *testing.T) {
	ctx := context.Background()
	s := NewPartitions()
	v := []byte("value")
	put := func(k string, v []byte, ts int64) {
		t.Helper()
		if err := s.Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte(k), Value: v, Timestamp: ts}}); err != nil {
			t.Fatal(err)
		}
	}
	put("k", v, 1)
	v[0] = 'X'
	for i := range 2 * chunkSize {
		put("other", []byte{byte(i), 1, 2, 3, 4, 5, 6, 7}, int64(i+1)) // garbage, compacted
	}
	rows, err := s.Snapshot(ctx, "p", 10, store.ReadComplete)
	if err != nil || len(rows) != 2 || string(rows[0].Key) != "k" || string(rows[0].Value) != "value" {
		t.Fatalf("%s, %v", show(rows), err)
	}
	rows[0].Value[0] = 'Y'
	rows, _ = s.Snapshot(ctx, "p", 10, store.ReadComplete)
	if string(rows[0].Value) != "value" {
		t.Fatalf("a read value shares memory with the store: %q", rows[0].Value)
	}
	if p := s.parts["p"]; p.size > 4*compactMin {
		t.Fatalf("%d bytes in chunks for 13 bytes of values", p.size)
	}
	// A partition of one small row takes one small chunk.
	if err := s.Apply(ctx, []store.Mutation{{Partition: "small", Op: store.OpPut, Key: []byte("k"), Value: v, Timestamp: 1}}); err != nil {
		t.Fatal(err)
	}
	if c := s.parts["small"].chunks; len(c) != 1 || cap(c[0]) != firstChunk {
		t.Fatalf("one row of %d bytes: %d chunks, the first of %d bytes", len(v), len(c), cap(c[0]))
	}
}

func rowsEqual(a, b []store.Row) bool {
	return slices.EqualFunc(a, b, func(x, y store.Row) bool {
		return bytes.Equal(x.Key, y.Key) && bytes.Equal(x.Value, y.Value)
	})
}

func show(rows []store.Row) string {
	var b bytes.Buffer
	for _, r := range rows {
		v := r.Value
		if len(v) > 8 {
			v = v[:8]
		}
		fmt.Fprintf(&b, "%q=%x(%d) ", r.Key, v, len(r.Value))
	}
	return b.String()
}

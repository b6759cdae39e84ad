package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/store"
)

// blocksModel is an efficient reference: per partition, the winning put
// per key (ignoring deletes), the newest point delete per key, the range
// deletes and the newest partition delete. A row is live when its winning
// put is newer than every deletion covering it (store.Mutation.Shadows).
type blocksModel struct {
	parts map[string]*blocksPart
}

type blocksPart struct {
	puts   map[string]store.Mutation
	points map[string]int64
	ranges []store.Mutation
	drop   int64
}

func (md *blocksModel) apply(m store.Mutation) {
	if md.parts == nil {
		md.parts = map[string]*blocksPart{}
	}
	p := md.parts[m.Partition]
	if p == nil {
		p = &blocksPart{puts: map[string]store.Mutation{}, points: map[string]int64{}}
		md.parts[m.Partition] = p
	}
	switch m.Op {
	case store.OpPut:
		m.Key, m.Value = slices.Clone(m.Key), slices.Clone(m.Value)
		if b, ok := p.puts[string(m.Key)]; !ok || store.Wins(m.Value, m.Timestamp, b.Value, b.Timestamp) {
			p.puts[string(m.Key)] = m
		}
	case store.OpDelete:
		p.points[string(m.Key)] = max(p.points[string(m.Key)], m.Timestamp)
	case store.OpDeleteRange:
		m.Key, m.End = slices.Clone(m.Key), slices.Clone(m.End)
		p.ranges = append(p.ranges, m)
	case store.OpDeletePartition:
		p.drop = max(p.drop, m.Timestamp)
	}
}

func (md *blocksModel) rows(partition string) []store.Row {
	p := md.parts[partition]
	if p == nil {
		return nil
	}
	var out []store.Row
	for k, put := range p.puts {
		if p.drop >= put.Timestamp || p.points[k] >= put.Timestamp {
			continue
		}
		if slices.ContainsFunc(p.ranges, func(r store.Mutation) bool { return r.Shadows([]byte(k), put.Timestamp) }) {
			continue
		}
		out = append(out, store.Row{Key: []byte(k), Value: put.Value})
	}
	slices.SortFunc(out, func(a, b store.Row) int { return bytes.Compare(a.Key, b.Key) })
	return out
}

func blocksDiff(got, want []store.Row) string {
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("%d rows, want %d: missing %q", len(got), len(want), want[i].Key)
		case i >= len(want):
			return fmt.Sprintf("%d rows, want %d: extra %q", len(got), len(want), got[i].Key)
		case !bytes.Equal(got[i].Key, want[i].Key):
			return fmt.Sprintf("row %d key %q, want %q", i, got[i].Key, want[i].Key)
		case !bytes.Equal(got[i].Value, want[i].Value):
			return fmt.Sprintf("row %d key %q value %x (%d), want %x (%d)", i, got[i].Key, got[i].Value[:min(8, len(got[i].Value))], len(got[i].Value), want[i].Value[:min(8, len(want[i].Value))], len(want[i].Value))
		}
	}
	return ""
}

// blocksKey draws keys from families that stress the block search: a
// numeric space (many rows, so many blocks), ties in the first 8 bytes,
// short keys with zero bytes, and keys past inlineKey differing in the tail.
func blocksKey(r *rand.Rand, space int) []byte {
	i := r.IntN(space)
	switch r.IntN(8) {
	case 0:
		return []byte(fmt.Sprintf("tietie%02d%06d", i%3, i)) // heads tie within the family
	case 1:
		return append([]byte("z"), bytes.Repeat([]byte{0}, i%10)...) // "z", "z\x00", ...
	case 2:
		return []byte(strings.Repeat("L", inlineKey) + fmt.Sprintf("%06d", i)) // tail only differs
	case 3:
		return []byte(strings.Repeat("M", inlineKey-1+i%3) + fmt.Sprint(i%50)) // inlineKey−1..inlineKey+1 bytes + digits
	case 4:
		if i%97 == 0 {
			return []byte{} // the empty key
		}
	}
	return []byte(fmt.Sprintf("%07d", i))
}

func blocksValue(r *rand.Rand, tag int) []byte {
	n := 1 + r.IntN(24)
	switch r.IntN(200) {
	case 0:
		n = chunkSize/4 + 1 + r.IntN(chunkSize) // a chunk of its own
	case 1:
		n = chunkSize / 4
	}
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(tag + i)
	}
	v[0] = byte(r.IntN(256))
	return v
}

// TestBlocksPartitionsBigDifferential applies tens of thousands of random
// mutations (puts mostly, point deletes, narrow and wide range deletes,
// the odd partition delete, late writes under tombstones, timestamps that
// tie) over 3 partitions of up to ~15,000 live rows, and compares Snapshot
// and paged Scans (small page sizes, random starts, early stops) with the
// model, plus the chunks' accounting.
func TestBlocksPartitionsBigDifferential(t *testing.T) {
	testsize.SkipSequential(t)
	if testing.Short() {
		t.Skip("long")
	}
	seed := blocksSeedFor(t)
	r := rand.New(rand.NewPCG(seed, 3))
	ctx := context.Background()
	s := &Partitions{PageSize: 1 + r.IntN(7)}
	t.Logf("page size %d", s.PageSize)
	var md blocksModel
	parts := []string{"p", "q", "r"}
	const space = 40_000
	ts := int64(1000)
	for step := range 160 {
		part := parts[r.IntN(len(parts))]
		var batch []store.Mutation
		nmut := 1 + r.IntN(8)
		if step%6 == 0 {
			nmut = 2000 + r.IntN(3000) // many rows per batch
		}
		for range nmut {
			ts += int64(r.IntN(3))
			at := ts - int64(r.IntN(400)) // late writes, ties
			if at <= 0 {
				at = 1
			}
			m := store.Mutation{Partition: part, Timestamp: at}
			x := r.IntN(1000)
			if nmut > 8 && x >= 985 {
				x = 0 // big batches: puts and point deletes, so partitions grow
			}
			switch {
			case x < 880:
				m.Op, m.Key, m.Value = store.OpPut, blocksKey(r, space), blocksValue(r, step)
			case x < 985:
				m.Op, m.Key = store.OpDelete, blocksKey(r, space)
			case x < 998:
				m.Op, m.Key = store.OpDeleteRange, blocksKey(r, space)
				if r.IntN(5) > 0 {
					end := blocksKey(r, space)
					if bytes.Compare(end, m.Key) <= 0 {
						m.Key, end = end, m.Key
					}
					if bytes.Equal(end, m.Key) {
						end = append(end, 0)
					}
					m.End = end
				}
				if r.IntN(4) == 0 {
					m.Timestamp = max(1, at-2000) // an old range delete: shadows little
				}
			default:
				m.Op = store.OpDeletePartition
				m.Timestamp = max(1, at-500-int64(r.IntN(1000)))
			}
			batch = append(batch, m)
		}
		if err := s.Apply(ctx, batch); err != nil {
			t.Fatal(err)
		}
		for _, m := range batch {
			md.apply(m)
		}
		for _, part := range parts {
			want := md.rows(part)
			got, err := s.Snapshot(ctx, part, math.MaxInt, store.ReadComplete)
			if err != nil {
				t.Fatal(err)
			}
			if d := blocksDiff(got, want); d != "" {
				t.Fatalf("step %d, partition %s, Snapshot: %s", step, part, d)
			}
			if p := s.parts[part]; p != nil {
				live := 0
				for _, row := range want {
					live += len(row.Value)
				}
				if p.size-p.garbage != live {
					t.Fatalf("step %d %s: chunks %d, garbage %d, live %d", step, part, p.size, p.garbage, live)
				}
				if p.rows.Len() != len(want) {
					t.Fatalf("step %d %s: Len %d, want %d", step, part, p.rows.Len(), len(want))
				}
				blocksCheckOrder(t, &p.rows, nil, nil)
			}
			for range 3 {
				from := blocksKey(r, space)
				stop := r.IntN(3 * s.PageSize * 4)
				var scanned []store.Row
				if err := s.Scan(ctx, part, from, store.ReadComplete, func(row store.Row) bool {
					scanned = append(scanned, row)
					return len(scanned) < stop
				}); err != nil {
					t.Fatal(err)
				}
				i := sort.Search(len(want), func(i int) bool { return bytes.Compare(want[i].Key, from) >= 0 })
				w := want[i:]
				w = w[:min(len(w), max(stop, 1))]
				if d := blocksDiff(scanned, w); d != "" {
					t.Fatalf("step %d, partition %s, Scan from %q stop %d: %s", step, part, from, stop, d)
				}
			}
		}
	}
	for _, part := range parts {
		t.Logf("partition %s: %d rows in %d blocks", part, s.parts[part].rows.Len(), len(s.parts[part].rows.blocks))
	}
}

// TestBlocksRangeAndPartitionDeletesOverManyBlocks writes thousands of rows,
// range-deletes slices of them that span many blocks (at block boundaries,
// from the empty key, open-ended), writes late under the tombstones, and
// drops the partition, checking the rows each time.
func TestBlocksRangeAndPartitionDeletesOverManyBlocks(t *testing.T) {
	testsize.SkipSequential(t)
	ctx := context.Background()
	s := &Partitions{PageSize: 3}
	var md blocksModel
	key := func(i int) []byte { return []byte(fmt.Sprintf("row%06d", i)) }
	apply := func(muts ...store.Mutation) {
		t.Helper()
		for len(muts) > 0 {
			n := min(len(muts), store.MaxBatch)
			if err := s.Apply(ctx, muts[:n]); err != nil {
				t.Fatal(err)
			}
			for _, m := range muts[:n] {
				md.apply(m)
			}
			muts = muts[n:]
		}
	}
	check := func(what string) {
		t.Helper()
		want := md.rows("p")
		got, err := s.Snapshot(ctx, "p", math.MaxInt, store.ReadComplete)
		if err != nil {
			t.Fatal(err)
		}
		if d := blocksDiff(got, want); d != "" {
			t.Fatalf("%s: Snapshot: %s", what, d)
		}
		var scanned []store.Row
		if err := s.Scan(ctx, "p", nil, store.ReadComplete, func(r store.Row) bool { scanned = append(scanned, r); return true }); err != nil {
			t.Fatal(err)
		}
		if d := blocksDiff(scanned, want); d != "" {
			t.Fatalf("%s: Scan: %s", what, d)
		}
		if p := s.parts["p"]; p != nil {
			blocksCheckOrder(t, &p.rows, nil, nil)
		}
	}
	const n = 20_000
	var puts []store.Mutation
	for i := range n {
		puts = append(puts, store.Mutation{Partition: "p", Op: store.OpPut, Key: key(i), Value: []byte(fmt.Sprint("v", i)), Timestamp: 10})
	}
	apply(puts...)
	check("filled")
	// boundaries of the current blocks
	p := s.parts["p"]
	var bounds [][]byte
	for bi := range p.rows.blocks {
		bounds = append(bounds, keyBytes(&p.rows, &p.rows.blocks[bi].rows[0]))
	}
	t.Logf("%d rows in %d blocks", p.rows.Len(), len(bounds))
	// a range from one block's first key to another's
	apply(store.Mutation{Partition: "p", Op: store.OpDeleteRange, Key: bounds[3], End: bounds[40], Timestamp: 20})
	check("range between block firsts")
	// a range ending just after a block's first key (its first key deleted only)
	apply(store.Mutation{Partition: "p", Op: store.OpDeleteRange, Key: bounds[50], End: append(slices.Clone(bounds[50]), 0), Timestamp: 20})
	check("range of one block-first key")
	// from the empty key
	apply(store.Mutation{Partition: "p", Op: store.OpDeleteRange, Key: []byte{}, End: key(777), Timestamp: 20})
	check("range from the empty key")
	// open-ended at the end
	apply(store.Mutation{Partition: "p", Op: store.OpDeleteRange, Key: key(n - 1500), Timestamp: 20})
	check("open range at the end")
	// an older range: shadows nothing written at 10? (it does: 15 ≥ 10)
	apply(store.Mutation{Partition: "p", Op: store.OpDeleteRange, Key: key(9000), End: key(9100), Timestamp: 5})
	check("older range")
	// late writes under the tombstones: at ≤ 20 invisible, > 20 visible
	var late []store.Mutation
	for i := 0; i < n; i += 7 {
		late = append(late, store.Mutation{Partition: "p", Op: store.OpPut, Key: key(i), Value: []byte("late"), Timestamp: 20})
		late = append(late, store.Mutation{Partition: "p", Op: store.OpPut, Key: key(i + 1), Value: []byte("later"), Timestamp: 21})
	}
	apply(late...)
	check("late writes")
	// point deletes of every block's first key, twice
	for range 2 {
		var dels []store.Mutation
		for bi := range p.rows.blocks {
			dels = append(dels, store.Mutation{Partition: "p", Op: store.OpDelete, Key: keyBytes(&p.rows, &p.rows.blocks[bi].rows[0]), Timestamp: 30})
		}
		apply(dels...)
		check("block firsts deleted")
	}
	// a range over everything but a few
	apply(store.Mutation{Partition: "p", Op: store.OpDeleteRange, Key: key(5), End: key(n - 5), Timestamp: 40})
	check("nearly everything")
	t.Logf("after the wide range: %d rows in %d blocks", p.rows.Len(), len(p.rows.blocks))
	// refill, then drop the partition, then write late and new
	puts = puts[:0]
	for i := range n {
		puts = append(puts, store.Mutation{Partition: "p", Op: store.OpPut, Key: key(i), Value: []byte(fmt.Sprint("w", i)), Timestamp: 50})
	}
	apply(puts...)
	check("refilled")
	apply(store.Mutation{Partition: "p", Op: store.OpDeletePartition, Timestamp: 50})
	check("dropped")
	if p.rows.Len() != 0 || len(p.rows.blocks) != 0 {
		t.Fatalf("dropped: %d rows in %d blocks", p.rows.Len(), len(p.rows.blocks))
	}
	apply(store.Mutation{Partition: "p", Op: store.OpPut, Key: key(1), Value: []byte("under"), Timestamp: 50},
		store.Mutation{Partition: "p", Op: store.OpPut, Key: key(2), Value: []byte("over"), Timestamp: 51})
	check("after drop")
}

// TestBlocksCompactionKeepsValues overwrites and deletes many rows many
// times, with values of every size class, so that compaction moves values
// into new chunks again and again; every value must read back.
func TestBlocksCompactionKeepsValues(t *testing.T) {
	testsize.SkipSequential(t)
	seed := blocksSeedFor(t)
	r := rand.New(rand.NewPCG(seed, 4))
	ctx := context.Background()
	s := NewPartitions()
	want := map[string][]byte{}
	ts := int64(0)
	compactions := 0
	lastChunks := 0
	for round := range 40 {
		var batch []store.Mutation
		for range 2000 {
			ts++
			k := []byte(fmt.Sprintf("%s%05d", []string{"", strings.Repeat("x", inlineKey)}[r.IntN(2)], r.IntN(3000)))
			if r.IntN(4) == 0 {
				batch = append(batch, store.Mutation{Partition: "c", Op: store.OpDelete, Key: k, Timestamp: ts})
				delete(want, string(k))
				continue
			}
			v := blocksValue(r, round)
			if r.IntN(300) == 0 {
				v = bytes.Repeat([]byte{byte(round)}, chunkSize+r.IntN(chunkSize))
			}
			binaryTag := fmt.Appendf(nil, "%d", ts)
			if len(v) > len(binaryTag) {
				copy(v[len(v)-len(binaryTag):], binaryTag)
			}
			batch = append(batch, store.Mutation{Partition: "c", Op: store.OpPut, Key: k, Value: v, Timestamp: ts})
			want[string(k)] = v
		}
		// keep batches under the byte limit
		for len(batch) > 0 {
			n, size := 0, 0
			for n < len(batch) && size+len(batch[n].Value) < store.MaxBatchBytes/2 {
				size += len(batch[n].Value)
				n++
			}
			if err := s.Apply(ctx, batch[:n]); err != nil {
				t.Fatal(err)
			}
			batch = batch[n:]
		}
		p := s.parts["c"]
		if len(p.chunks) < lastChunks {
			compactions++
		}
		lastChunks = len(p.chunks)
		rows, err := s.Snapshot(ctx, "c", math.MaxInt, store.ReadComplete)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(want) {
			t.Fatalf("round %d: %d rows, want %d", round, len(rows), len(want))
		}
		for _, row := range rows {
			if w, ok := want[string(row.Key)]; !ok || !bytes.Equal(w, row.Value) {
				t.Fatalf("round %d: %q = %d bytes, want %d (present %v)", round, row.Key, len(row.Value), len(w), ok)
			}
		}
		live := 0
		for _, v := range want {
			live += len(v)
		}
		if p.size-p.garbage != live || p.size > 2*live+compactMin+chunkSize*4 {
			t.Fatalf("round %d: chunks hold %d (garbage %d) for %d live", round, p.size, p.garbage, live)
		}
	}
	t.Logf("%d rows; chunk count fell %d times", len(want), compactions)
}

// TestBlocksScanAcrossBlocksWhileWriting pages through a partition of
// thousands of rows with tiny pages while another goroutine inserts and
// deletes rows between pages (fn waits for it), across splits and joins.
// Scan is not a snapshot; it must still return keys ≥ from in strictly
// ascending order, each row untouched during the scan with its value, and
// no key that was never live.
func TestBlocksScanAcrossBlocksWhileWriting(t *testing.T) {
	seed := blocksSeedFor(t)
	r := rand.New(rand.NewPCG(seed, 5))
	ctx := context.Background()
	for _, page := range []int{1, 2, 3, 7, 64, 129} {
		s := &Partitions{PageSize: page}
		key := func(i int) []byte { return []byte(fmt.Sprintf("s%06d", i)) }
		const space = 6000
		everLive := map[string]bool{}
		var puts []store.Mutation
		for i := 0; i < space; i += 2 {
			puts = append(puts, store.Mutation{Partition: "s", Op: store.OpPut, Key: key(i), Value: []byte(fmt.Sprint(i)), Timestamp: 1})
			everLive[string(key(i))] = true
		}
		if err := s.Apply(ctx, puts); err != nil {
			t.Fatal(err)
		}
		touched := map[string]bool{}
		work := make(chan int)
		done := make(chan struct{})
		go func() {
			ts := int64(2)
			for j := range work {
				var muts []store.Mutation
				for range 1 + j%40 {
					i := r.IntN(space)
					k := key(i)
					touched[string(k)] = true
					ts++
					if i%2 == 1 || r.IntN(3) == 0 {
						muts = append(muts, store.Mutation{Partition: "s", Op: store.OpPut, Key: k, Value: []byte(fmt.Sprint("n", i)), Timestamp: ts})
						everLive[string(k)] = true
					} else {
						muts = append(muts, store.Mutation{Partition: "s", Op: store.OpDelete, Key: k, Timestamp: ts})
					}
				}
				if j%50 == 0 { // a range delete over a few blocks
					lo := r.IntN(space - 300)
					for i := lo; i < lo+300; i++ {
						touched[string(key(i))] = true
					}
					ts++
					muts = append(muts, store.Mutation{Partition: "s", Op: store.OpDeleteRange, Key: key(lo), End: key(lo + 300), Timestamp: ts})
				}
				if err := s.Apply(ctx, muts); err != nil {
					panic(err)
				}
				done <- struct{}{}
			}
		}()
		from := key(17)
		var got []store.Row
		calls := 0
		err := s.Scan(ctx, "s", from, store.ReadComplete, func(row store.Row) bool {
			got = append(got, row)
			calls++
			if calls%page == 0 { // at page ends: write before the next page is read
				work <- calls
				<-done
			}
			return true
		})
		close(work)
		if err != nil {
			t.Fatal(err)
		}
		for i, row := range got {
			if bytes.Compare(row.Key, from) < 0 || (i > 0 && bytes.Compare(got[i-1].Key, row.Key) >= 0) {
				t.Fatalf("page %d: row %d %q out of order (prev %q)", page, i, row.Key, got[max(i-1, 0)].Key)
			}
			if !everLive[string(row.Key)] {
				t.Fatalf("page %d: %q was never written", page, row.Key)
			}
		}
		seen := map[string]string{}
		for _, row := range got {
			seen[string(row.Key)] = string(row.Value)
		}
		missed := 0
		for i := 0; i < space; i += 2 {
			k := key(i)
			if bytes.Compare(k, from) < 0 || touched[string(k)] {
				continue
			}
			v, ok := seen[string(k)]
			if !ok {
				missed++
				if missed < 5 {
					t.Errorf("page %d: untouched live row %q not scanned", page, k)
				}
			} else if v != fmt.Sprint(i) {
				t.Errorf("page %d: untouched row %q = %q", page, k, v)
			}
		}
		if missed > 0 {
			t.Fatalf("page %d: %d untouched rows missed (%d scanned)", page, missed, len(got))
		}
	}
}

// TestBlocksSnapshotLimits checks the limit edges on a partition of many
// blocks.
func TestBlocksSnapshotLimits(t *testing.T) {
	testsize.SkipSequential(t)
	ctx := context.Background()
	s := NewPartitions()
	const n = 1000
	var muts []store.Mutation
	for i := range n {
		muts = append(muts, store.Mutation{Partition: "l", Op: store.OpPut, Key: []byte(fmt.Sprintf("%04d", i)), Value: []byte("v"), Timestamp: 1})
	}
	if err := s.Apply(ctx, muts); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{n, n + 1, math.MaxInt, math.MaxInt - 1} {
		rows, err := s.Snapshot(ctx, "l", limit, store.ReadComplete)
		if err != nil || len(rows) != n {
			t.Fatalf("limit %d: %d rows, %v", limit, len(rows), err)
		}
	}
	for _, limit := range []int{0, 1, 127, 128, 129, n - 1} {
		if rows, err := s.Snapshot(ctx, "l", limit, store.ReadComplete); !errors.Is(err, crdt.ErrTooLarge) {
			t.Fatalf("limit %d: %d rows, %v", limit, len(rows), err)
		}
	}
	if _, err := s.Snapshot(ctx, "l", -1, store.ReadComplete); !errors.Is(err, crdt.ErrInvalidConfig) {
		t.Fatalf("limit -1: %v", err)
	}
	if rows, err := s.Snapshot(ctx, "none", 0, store.ReadComplete); err != nil || len(rows) != 0 {
		t.Fatalf("empty partition, limit 0: %d rows, %v", len(rows), err)
	}
	// emptied partition
	if err := s.Apply(ctx, []store.Mutation{{Partition: "l", Op: store.OpDeletePartition, Timestamp: 1}}); err != nil {
		t.Fatal(err)
	}
	if rows, err := s.Snapshot(ctx, "l", 0, store.ReadComplete); err != nil || len(rows) != 0 {
		t.Fatalf("dropped partition, limit 0: %d rows, %v", len(rows), err)
	}
}

// TestBlocksEdgeKeysThroughTheStore writes every edge key as a row and
// reads them back by Snapshot and by Scan from each key and its
// neighbours, with page size 1 and 2.
func TestBlocksEdgeKeysThroughTheStore(t *testing.T) {
	testsize.SkipSequential(t)
	ctx := context.Background()
	edge := blocksEdgeKeys()
	for _, page := range []int{1, 2, 100} {
		s := &Partitions{PageSize: page}
		var muts []store.Mutation
		for i, k := range edge {
			muts = append(muts, store.Mutation{Partition: "e", Op: store.OpPut, Key: k, Value: []byte{byte(i), 1}, Timestamp: 1})
			for j := range 60 { // fillers tying heads, to spread over blocks
				muts = append(muts, store.Mutation{Partition: "e", Op: store.OpPut, Key: append(slices.Clone(k), 0, byte(j), 0xee), Value: []byte{byte(i), byte(j), 2}, Timestamp: 1})
			}
		}
		if err := s.Apply(ctx, muts); err != nil {
			t.Fatal(err)
		}
		var md blocksModel
		for _, m := range muts {
			md.apply(m)
		}
		want := md.rows("e")
		got, err := s.Snapshot(ctx, "e", math.MaxInt, store.ReadComplete)
		if err != nil {
			t.Fatal(err)
		}
		if d := blocksDiff(got, want); d != "" {
			t.Fatalf("page %d Snapshot: %s", page, d)
		}
		for _, k := range edge {
			for _, from := range [][]byte{k, append(slices.Clone(k), 0), append(slices.Clone(k), 0, 0)} {
				var scanned []store.Row
				if err := s.Scan(ctx, "e", from, store.ReadComplete, func(r store.Row) bool {
					scanned = append(scanned, r)
					return len(scanned) < 70
				}); err != nil {
					t.Fatal(err)
				}
				i := sort.Search(len(want), func(i int) bool { return bytes.Compare(want[i].Key, from) >= 0 })
				w := want[i:min(len(want), i+70)]
				if d := blocksDiff(scanned, w); d != "" {
					t.Fatalf("page %d, Scan from %q: %s", page, from, d)
				}
			}
		}
		// Delete the edge keys one by one (point deletes), checking each time.
		for i, k := range edge {
			m := store.Mutation{Partition: "e", Op: store.OpDelete, Key: k, Timestamp: 2}
			if err := s.Apply(ctx, []store.Mutation{m}); err != nil {
				t.Fatal(err)
			}
			md.apply(m)
			if i%5 == 0 || i == len(edge)-1 {
				got, _ := s.Snapshot(ctx, "e", math.MaxInt, store.ReadComplete)
				if d := blocksDiff(got, md.rows("e")); d != "" {
					t.Fatalf("page %d, after deleting %q: %s", page, k, d)
				}
			}
		}
	}
}

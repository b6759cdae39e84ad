package tpncounter

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
)

// memShape is a tgcounter encoding built to make the decoder allocate as
// much as possible per input byte within the limits: up to actors entries
// of up to perActor transactions each (all in the history, amount 1), until
// the encoding reaches size bytes.
type memShape struct {
	name     string
	actors   int // at most Options.MaxActors of the decoding counter
	perActor int // at most MaxEntriesPerActor
	// idLen is the length of every transaction id; 0 gives the shortest
	// ids (95 of one byte, then two bytes, ...).
	idLen int
	// shared makes every actor hold the same ids (one multi record per id);
	// otherwise every id is held by one actor.
	shared bool
	// paired makes each two actors hold the same ids (one multi record per
	// two transactions); otherwise, unless shared, every id is held by one
	// actor.
	paired bool
}

// memShapes are the shapes measured (see TestDecodeMemory for the worst
// and their figures).
var memShapes = []memShape{
	{name: "distinct-tiny-ids", actors: DefaultMaxActors, perActor: MaxEntriesPerActor},
	{name: "shared-tiny-ids", actors: DefaultMaxActors, perActor: MaxEntriesPerActor, shared: true},
	{name: "paired-tiny-ids", actors: DefaultMaxActors, perActor: MaxEntriesPerActor, paired: true},
	{name: "small-entries", actors: MaxActorsLimit, perActor: 3},
	{name: "empty-entries", actors: MaxActorsLimit, perActor: 0},
	{name: "half-empty-rings", actors: DefaultMaxActors, perActor: MaxEntriesPerActor/2 + 1},
	{name: "many-half-empty", actors: MaxActorsLimit, perActor: 33},
	{name: "max-ids", actors: DefaultMaxActors, perActor: MaxEntriesPerActor, idLen: crdt.MaxIDLen},
	{name: "shared-max-ids", actors: DefaultMaxActors, perActor: MaxEntriesPerActor, idLen: crdt.MaxIDLen, shared: true},
}

// tinyID returns the i-th id in length-then-lexical order over the 95
// printable ASCII characters.
func tinyID(i int) string {
	n := 1
	for span := 95; i >= span; span *= 95 {
		i -= span
		n++
	}
	b := make([]byte, n)
	for k := n - 1; k >= 0; k-- {
		b[k] = byte(0x20 + i%95)
		i /= 95
	}
	return string(b)
}

// encoding returns the shape's tgcounter encoding of at most size bytes.
func (s memShape) encoding(size int) []byte {
	id := func(i int) string {
		if s.idLen == 0 {
			return tinyID(i)
		}
		return fmt.Sprintf("%0*d", s.idLen, i)
	}
	actors := make([]string, s.actors)
	for i := range actors {
		actors[i] = tinyID(i)
	}
	slices.Sort(actors)
	// Plan the entries first: the body's array header depends on their
	// number.
	budget := size - 32 // envelope and body header
	var lists [][]string
	next := 0
	for a := 0; a < s.actors && budget > 0; a++ {
		budget -= 1 + wire.StrSize(len(actors[a])) + 7 + 6 // shape, actor, seq/total/forgot, headers
		var list []string
		for j := 0; j < s.perActor; j++ {
			k := next + j
			if s.shared {
				k = j
			} else if s.paired && a%2 == 1 {
				k = next - len(lists[a-1]) + j
			}
			x := id(k)
			if need := 1 + wire.StrSize(len(x)) + 1; need <= budget {
				budget -= need
				list = append(list, x)
			} else {
				budget = 0
				break
			}
		}
		if !s.shared && !(s.paired && a%2 == 1) {
			next += len(list)
		}
		lists = append(lists, list)
	}
	e := wire.NewEncoder(crdt.TagTGCounter, 2) // the version of a state without UUID ids or retired entries
	e.ArrayLen(len(lists))
	for a, list := range lists {
		// As a writer leaves them: a history of at most
		// MaxHistoryLength + 1, the older transactions folded (and in
		// the total), a sequence number of one write per transaction.
		folded := list[:max(0, len(list)-(MaxHistoryLength+1))]
		e.ArrayLen(6)
		e.String(actors[a])
		e.Uint(uint64(max(1, len(list))))
		e.Int(int64(len(folded)))
		e.Int(0)
		for _, part := range [][]string{list[len(folded):], folded} {
			e.ArrayLen(len(part))
			for _, x := range part {
				e.ArrayLen(2)
				e.String(x)
				e.Int(1)
			}
		}
	}
	b, err := e.Bytes()
	if err != nil || len(b) > size {
		panic(fmt.Sprintf("shape %s: %d bytes, %v", s.name, len(b), err))
	}
	return b
}

// decodeMem decodes data into a GCounter with MaxActors actors and returns
// the bytes allocated meanwhile (TotalAlloc), the peak growth of the heap's
// objects during the decode (sampled) and the growth of the live heap with
// the result still reachable, and the actors and multi records decoded.
func decodeMem(t testing.TB, data []byte, maxActors int, decode func(*GCounter, []byte) error) (total, peak, live uint64, actors, records int) {
	g, err := NewGCounter(Options{MaxActors: maxActors})
	if err != nil {
		t.Fatal(err)
	}
	// The sampler allocates nothing once started: TotalAlloc counts the
	// whole process, and a sampler that allocated on each tick would add
	// its own bytes to the decode's, the more the slower the machine.
	heap := func(s []metrics.Sample) uint64 {
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	sample := func() []metrics.Sample { return []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}} }
	own, sampled := sample(), sample()
	tick := time.NewTicker(100 * time.Microsecond)
	defer tick.Stop()
	stop, done := make(chan struct{}), make(chan uint64)
	var before, after runtime.MemStats
	runtime.GC()
	base := heap(own)
	go func() {
		var max uint64
		for {
			if h := heap(sampled); h > max {
				max = h
			}
			select {
			case <-stop:
				done <- max
				return
			case <-tick.C:
			}
		}
	}()
	runtime.ReadMemStats(&before)
	err = decode(g, data)
	runtime.ReadMemStats(&after)
	close(stop)
	if max := <-done; max > base {
		peak = max - base
	}
	if err != nil {
		t.Fatal(err)
	}
	total = after.TotalAlloc - before.TotalAlloc
	runtime.GC()
	if h := heap(own); h > base {
		live = h - base
	}
	runtime.KeepAlive(g)
	runtime.KeepAlive(data)
	return total, peak, live, g.Len(), g.nmulti
}

// What decoding may allocate in total (linux/amd64): decodeMemPerByte
// bytes per input byte, plus decodeMemPerActor per actor and
// decodeMemPerRecord per multi record (a transaction two or more actors
// hold), each about 20% above what the worst shapes of memShapes take at 1
// MiB:
//
//   - per input byte, 5.6-5.9 (distinct-tiny-ids, many-half-empty less its
//     actors): a transaction of a 3-byte id takes 6 bytes of input and 33
//     of state: a 16-byte ring item, 4 bytes of idAt, its 3 id bytes in the
//     arena and 10 bytes of index table (1.25 entries of 8 bytes), plus the
//     reader's scratch for the largest entry (txnList, 24 bytes and the id
//     per transaction);
//   - per actor, 232 (empty-entries: 65,536 actors of about 10 bytes of
//     input each): the 160-byte entry, about 50 bytes of the actor map,
//     the actor id and its slot in ents;
//   - per multi record, 52 (paired-tiny-ids, less its transactions): the
//     48-byte record, its holders and 8 bytes of scratch.
//
// So no shape exceeds 6 bytes per input byte but for its actors and
// contested transactions, and those have caps (Options.MaxActors, at most
// MaxActorsLimit; a record per two transactions at most). Before
// (power-of-two rings of 32-byte slots, a 96-byte record per contested
// transaction grown by append): 14.0x for many-half-empty at 1 MiB, 13.2x
// at 16 MiB, 54.6x for paired-tiny-ids at 16 MiB.
const (
	decodeMemPerByte   = 7
	decodeMemPerActor  = 280
	decodeMemPerRecord = 64
)

// TestDecodeMemory decodes the worst shapes for allocation per input byte
// (tiny ids; many actors, each with one transaction more than a power of
// two; ids held by two actors each; tens of thousands of small or empty
// entries) and requires the decoder to allocate no more than the bound
// above. The inputs are 1 MiB, so that the test stays quick under the race
// detector: the ratios, not the size, are what is bounded, and they are
// the same or lower at 16 MiB (TestDecodeMemoryReport).
func TestDecodeMemory(t *testing.T) {
	const size = 1 << 20
	for _, name := range []string{"many-half-empty", "distinct-tiny-ids", "paired-tiny-ids", "small-entries", "empty-entries"} {
		i := slices.IndexFunc(memShapes, func(s memShape) bool { return s.name == name })
		s := memShapes[i]
		data := s.encoding(size)
		in := float64(len(data))
		func() {
			// A limit keeps the garbage collector close behind a decoder
			// that allocates too much, so that the test fails on the
			// assertion rather than by exhausting the machine.
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(64<<20 + 2*decodeMemPerByte*len(data) + 2*decodeMemPerActor*s.actors)))
			total, peak, live, actors, records := decodeMem(t, data, s.actors, (*GCounter).UnmarshalBinary)
			bound := decodeMemPerByte*len(data) + decodeMemPerActor*actors + decodeMemPerRecord*records
			t.Logf("%-18s %d bytes, %5d actors, %6d multi records: allocated %.2fx the input (bound %.2fx), peak heap %.2fx, live %.2fx",
				s.name, len(data), actors, records, float64(total)/in, float64(bound)/in, float64(peak)/in, float64(live)/in)
			if total > uint64(bound) {
				t.Errorf("%s: decoding %d bytes (%d actors, %d multi records) allocated %d bytes (%.2fx), more than %d",
					s.name, len(data), actors, records, total, float64(total)/in, bound)
			}
		}()
	}
}

// TestDecodeMemoryReport prints the allocation of every shape at 16 MiB,
// by the decoder and by the reference decoder.
func TestDecodeMemoryReport(t *testing.T) {
	if os.Getenv("COUNTERKIT_DECODE_MEMORY") == "" {
		t.Skip("set COUNTERKIT_DECODE_MEMORY=1 to print the figures (about a minute)")
	}
	for _, s := range memShapes {
		data := s.encoding(crdt.DefaultMaxEncodedSize)
		in := float64(len(data))
		for _, dec := range []struct {
			name string
			f    func(*GCounter, []byte) error
		}{{"decoder", (*GCounter).UnmarshalBinary}, {"reference", refUnmarshalGCounter}} {
			total, peak, live, actors, _ := decodeMem(t, data, s.actors, dec.f)
			t.Logf("%-18s %-9s input %8d B, %5d actors: allocated %10d B (%5.2fx), peak heap %10d B (%5.2fx), live %10d B (%5.2fx)",
				s.name, dec.name, len(data), actors, total, float64(total)/in, peak, float64(peak)/in, live, float64(live)/in)
		}
	}
}

// BenchmarkDecode decodes the worst shape at 16 MiB and the 100 actors × 10
// history state of BenchmarkEncodedSize, with the decoder and the reference
// decoder, reporting the allocation per input byte.
func BenchmarkDecode(b *testing.B) {
	normal, _ := New(Options{})
	for a := 0; a < 100; a++ {
		for h := 0; h < 10; h++ {
			normal.Apply(crdt.ActorID(fmt.Sprintf("actor-%04d", a)), crdt.TxnID(fmt.Sprintf("txn-%04d-%04d", a, h)), 1000)
		}
	}
	inputs := []struct {
		name      string
		data      []byte
		maxActors int
	}{
		{"100x10", must(normal.Positive().MarshalBinary()), 0},
		{"worst-16MiB", memShape{actors: MaxActorsLimit, perActor: 33}.encoding(crdt.DefaultMaxEncodedSize), MaxActorsLimit},
	}
	for _, in := range inputs {
		for _, dec := range []struct {
			name string
			f    func(*GCounter, []byte) error
		}{{"decoder", (*GCounter).UnmarshalBinary}, {"reference", refUnmarshalGCounter}} {
			b.Run(in.name+"/"+dec.name, func(b *testing.B) {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					g, _ := NewGCounter(Options{MaxActors: in.maxActors})
					if err := dec.f(g, in.data); err != nil {
						b.Fatal(err)
					}
				}
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(in.data)), "alloc/input-byte")
			})
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

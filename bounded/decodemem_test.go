package bounded

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/internal/wire"
)

// memEncoding returns an encoding of up to actors entries of perActor
// recent transactions each (credits of 1, MaxWindow at most), of at most
// size bytes. shared makes every entry hold the same ids; otherwise every
// id is held once.
func memEncoding(size, actors, perActor int, shared bool) []byte {
	id := func(k int) string { // 4 bytes, printable, distinct below 90^4
		return string([]byte{byte(33 + k/729000), byte(33 + k/8100%90), byte(33 + k/90%90), byte(33 + k%90)})
	}
	perEntry := 1 + 9 + 3*3 + 1 + 3 + perActor*7 // the largest an entry takes
	n := min(actors, (size-32)/perEntry)
	e := wire.NewEncoder(crdt.TagBounded, FormatVersion)
	e.ArrayLen(3)
	e.Int(0)
	e.String("")
	e.ArrayLen(n)
	k := 0
	for i := range n {
		e.ArrayLen(7)
		e.String(fmt.Sprintf("a%07d", i))
		e.Uint(uint64(max(1, perActor)))
		e.Int(int64(perActor))
		e.Int(0)
		e.Int(0)
		e.ArrayLen(0)
		e.ArrayLen(perActor)
		for j := range perActor {
			if shared {
				k = j
			}
			e.ArrayLen(2)
			e.String(id(k))
			k++
			e.Int(1)
		}
	}
	b, err := e.Bytes()
	if err != nil || len(b) > size {
		panic(fmt.Sprintf("%d bytes, %v", len(b), err))
	}
	return b
}

// What decoding may allocate: decodeMemPerByte bytes per input byte plus
// decodeMemPerActor per entry, about 20% above what the shapes below take
// at 1 MiB (6.2x for full windows of 4-byte ids: a 24-byte Txn per 7
// bytes of input, the entry's bytes and ids kept, the reader's scratch).
// Before the holders index was built on first use, decoding built it, a
// map entry and a list per transaction: 41.6x the input allocated and
// 18.1x live for distinct ids, about 676 MB for a 16 MiB state.
const (
	decodeMemPerByte  = 8
	decodeMemPerActor = 400
)

// TestDecodeMemory decodes full windows of tiny ids, distinct and shared,
// and many small entries, and requires Decode to allocate no more than
// the bound above (runtime.MemStats.TotalAlloc), then that the holders
// index still answers once built.
func TestDecodeMemory(t *testing.T) {
	testsize.SkipSequential(t)
	const size = 1 << 20
	for _, s := range []struct {
		name             string
		actors, perActor int
		shared           bool
	}{
		{"distinct-full-windows", MaxActors, MaxWindow, false},
		{"shared-full-windows", MaxActors, MaxWindow, true},
		{"small-entries", MaxMergedActors, 2, false},
	} {
		data := memEncoding(size, s.actors, s.perActor, s.shared)
		in := float64(len(data))
		func() {
			// A limit keeps the collector close behind a decoder that
			// allocates too much, so that the test fails on the
			// assertion rather than by exhausting the machine.
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(64<<20 + 4*decodeMemPerByte*len(data))))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			c, err := Decode(data, MaxWindow)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			total := after.TotalAlloc - before.TotalAlloc
			bound := decodeMemPerByte*len(data) + decodeMemPerActor*c.Len()
			t.Logf("%-22s %d bytes, %5d actors: allocated %.2fx the input (bound %.2fx)", s.name, len(data), c.Len(), float64(total)/in, float64(bound)/in)
			if total > uint64(bound) {
				t.Errorf("%s: decoding %d bytes (%d actors) allocated %d bytes (%.2fx), more than %d", s.name, len(data), c.Len(), total, float64(total)/in, bound)
			}
			// The index built on first use knows every transaction.
			first := c.Actors()[0]
			if hs := c.Holders(c.entries[first].recent[0].ID); len(hs) == 0 || hs[0].Actor != first {
				t.Errorf("%s: Holders of %q's first transaction = %v", s.name, first, hs)
			}
			if known, err := c.Known(c.entries[first].recent[0].ID, 1); !known || err != nil {
				t.Errorf("%s: Known = %v, %v", s.name, known, err)
			}
			if d := c.Doubled(); s.shared != (len(d) == s.perActor) || !s.shared && len(d) != 0 {
				t.Errorf("%s: %d doubled transactions", s.name, len(d))
			}
		}()
	}
}

package bounded

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
)

// What decoding and then building the holders index (the first Apply,
// Known, Holders, Doubled or Account settle after a decode) may allocate,
// per input byte and per entry: TestDecodeMemory's bound for the decode
// plus indexMemPerByte, about 20% above the worst shape below at 1 MiB
// (shared ids: 10.0x in all, the index 3.8x; distinct ids 7.9x, the
// index 1.7x). The index holds a table slot of 8 bytes per transaction,
// at most two thirds full, and a record per transaction two or more
// actors hold. A map from id to holder in its place (a map slot of two
// strings per transaction) took 20.1x the input for distinct ids, 26.4x
// with the decode, and 15.1x stayed live.
const indexMemPerByte = 4

// TestIndexMemory decodes the shapes of TestDecodeMemory and builds the
// holders index, and requires both together to allocate no more than
// the decode's bound plus indexMemPerByte per input byte
// (runtime.MemStats.TotalAlloc, no timing). COUNTERKIT_CASES set adds the
// 16 MiB state of full windows of distinct ids (about 2,333 actors).
func TestIndexMemory(t *testing.T) {
	testsize.SkipSequential(t)
	sizes := []int{1 << 20}
	if os.Getenv("COUNTERKIT_CASES") != "" && !testing.Short() {
		sizes = append(sizes, 16<<20)
	}
	for _, size := range sizes {
		for _, s := range []struct {
			name             string
			actors, perActor int
			shared           bool
		}{
			{"distinct-full-windows", MaxActors, MaxWindow, false},
			{"shared-full-windows", MaxActors, MaxWindow, true},
			{"small-entries", MaxMergedActors, 2, false},
		} {
			t.Run(fmt.Sprintf("%s/%dMiB", s.name, size>>20), func(t *testing.T) {
				data := memEncoding(size, s.actors, s.perActor, s.shared)
				in := float64(len(data))
				perByte := decodeMemPerByte + indexMemPerByte
				// A limit keeps the collector close behind (TestDecodeMemory).
				defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(64<<20 + 4*perByte*len(data))))
				var before, decoded, built, live runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				c, err := Decode(data, MaxWindow)
				runtime.ReadMemStats(&decoded)
				if err != nil {
					t.Fatal(err)
				}
				if known, err := c.Known("not-held", 1); known || err != nil {
					t.Fatalf("Known(not-held) = %v, %v", known, err)
				}
				runtime.ReadMemStats(&built)
				runtime.GC()
				runtime.ReadMemStats(&live)
				total := built.TotalAlloc - before.TotalAlloc
				index := built.TotalAlloc - decoded.TotalAlloc
				held := int64(live.HeapAlloc) - int64(before.HeapAlloc)
				bound := perByte*len(data) + decodeMemPerActor*c.Len()
				t.Logf("%d bytes, %d actors: decode %.2fx, index %.2fx, total %.2fx the input (bound %.2fx), %.2fx held",
					len(data), c.Len(), float64(decoded.TotalAlloc-before.TotalAlloc)/in, float64(index)/in,
					float64(total)/in, float64(bound)/in, float64(held)/in)
				if total > uint64(bound) {
					t.Errorf("decoding %d bytes (%d actors) and building the index allocated %d bytes (%.2fx), more than %d",
						len(data), c.Len(), total, float64(total)/in, bound)
				}
				// The index answers for every transaction.
				first := c.Actors()[0]
				tx := c.entries[first].recent[0]
				if hs := c.Holders(tx.ID); len(hs) == 0 || hs[0].Actor != first || hs[0].Amount != tx.Amount {
					t.Errorf("Holders(%q) = %v", tx.ID, hs)
				}
				runtime.KeepAlive(c)
			})
		}
	}
}

// BenchmarkBigState measures, on a decoded state of full windows of
// distinct ids (4 MiB; COUNTERKIT_CASES set: 16 MiB, about 2,333 actors
// of 1,024 transactions), the first write after the decode (which builds
// the holders index), then Known of a held and of an unknown id and an
// Apply that slides a window, with the index built.
func BenchmarkBigState(b *testing.B) {
	size := 4 << 20
	if os.Getenv("COUNTERKIT_CASES") != "" {
		size = 16 << 20
	}
	data := memEncoding(size, MaxActors, MaxWindow, false)
	b.Run("DecodeApply", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for i := range b.N {
			c, err := Decode(data, MaxWindow)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Apply("a0000000", crdt.TxnID(fmt.Sprintf("new-%d", i)), 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	c, err := Decode(data, MaxWindow)
	if err != nil {
		b.Fatal(err)
	}
	actors := c.Actors()
	var ids []crdt.TxnID
	for _, a := range actors {
		ids = append(ids, c.entries[a].recent[len(c.entries[a].recent)/2].ID)
	}
	c.Known("", 1) // builds the index
	b.Run("KnownHeld", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			if known, err := c.Known(ids[i%len(ids)], 1); !known || err != nil {
				b.Fatal(known, err)
			}
		}
	})
	b.Run("KnownUnknown", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			if known, _ := c.Known(crdt.TxnID(fmt.Sprintf("unknown-%d", i)), 1); known {
				b.Fatal("known")
			}
		}
	})
	applied := 0 // across the runs of b.N, so that every id is new
	b.Run("Apply", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			applied++
			if out, err := c.Apply(actors[applied%len(actors)], crdt.TxnID(fmt.Sprintf("apply-%d", applied)), 1); out != Applied || err != nil {
				b.Fatal(out, err)
			}
		}
	})
}

package counterkit_test

import (
	"bytes"
	"cmp"
	"fmt"
	"runtime"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/tpncounter"
)

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// envelope returns the envelope [tag, version, body] with body's start
// written by body and pad bytes of nil (0xc0) after it.
func envelope(tag string, version uint64, pad int, body func(e *msgpack.Encoder)) []byte {
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	_ = e.EncodeArrayLen(3)
	_ = e.EncodeString(tag)
	_ = e.EncodeUint(version)
	body(e)
	buf.Write(bytes.Repeat([]byte{0xc0}, pad))
	return buf.Bytes()
}

// TestDecodeAllocation: a length prefix sizes no allocation beyond what
// the input's remaining bytes can hold (crdt.DefaultMaxEncodedSize). Each
// "claimed" input is an array header claiming as many elements as bytes
// remain, then that many nils, so that the decode fails at the first
// element: it may allocate at most claimAllocPerByte per input byte plus
// claimAllocScratch. Valid states of tiny elements are held to their
// type's documented bound: 16 bytes per input byte for gcounter and
// pncounter; for tpncounter, TestDecodeMemory's, plus 256 KiB for one
// entry's lists. Broken variant, seen to fail: tpncounter sizing an
// entry's history by its header (166,080 bytes for 4,122 of input).
func TestDecodeAllocation(t *testing.T) {
	if testing.Short() {
		t.Skip("the bounds are of a build without the race detector, which CI runs in its -short pass; the first pass runs it")
	}
	const n = 1 << 16
	arr := func(ns ...int) func(e *msgpack.Encoder) {
		return func(e *msgpack.Encoder) {
			for _, k := range ns {
				_ = e.EncodeArrayLen(k)
			}
		}
	}
	history := func(k int) []byte {
		return envelope("tpncounter", 2, k, func(e *msgpack.Encoder) {
			arr(2, 1, 6)(e)
			_ = e.EncodeString("a")
			for _, v := range []int64{5000, 0, 0} {
				_ = e.EncodeInt(v)
			}
			_ = e.EncodeArrayLen(k)
		})
	}
	long := tpncounter.Options{HistoryLength: tpncounter.MaxHistoryLength, FoldedLength: tpncounter.MaxHistoryLength}
	newTPN := func() *tpncounter.Counter { c, _ := tpncounter.New(long); return c }
	g, p := gcounter.New(), pncounter.New()
	tiny := newTPN()
	for i := range 30_000 {
		a := crdt.ActorID(fmt.Sprint(i))
		if err := g.Increment(a, 1); err != nil {
			t.Fatal(err)
		}
		if err := p.Apply(a, -1); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 * tpncounter.MaxHistoryLength {
		if _, err := tiny.Apply("a", crdt.TxnID(fmt.Sprint(i)), 1); err != nil {
			t.Fatal(err)
		}
	}
	// A merge's state may hold MaxMergedActors actors, more than
	// Increment's MaxActors: gm and pm are built of merged parts, each
	// pncounter actor with both counts. Its decoder held to 28 bytes per
	// input byte (the rows are 6 bytes, each actor in two halves: 25)
	// merged each row past MaxActors: 57 (review of stop 101).
	gm, pm := gcounter.New(), pncounter.New()
	for lo := 0; lo < gcounter.MaxMergedActors; lo += gcounter.MaxActors {
		gp, pp := gcounter.New(), pncounter.New()
		for i := lo; i < min(lo+gcounter.MaxActors, gcounter.MaxMergedActors); i++ {
			a := crdt.ActorID(fmt.Sprint(i))
			if err := cmp.Or(gp.Increment(a, 1), pp.Apply(a, 2), pp.Apply(a, -1)); err != nil {
				t.Fatal(err)
			}
		}
		if err := cmp.Or(gm.Merge(gp), pm.Merge(pp)); err != nil {
			t.Fatal(err)
		}
	}
	valid := func(m interface{ MarshalBinary() ([]byte, error) }) []byte {
		b, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name   string
		in     []byte
		decode func([]byte) error
		ok     bool
		bound  func(in int) int // for a valid input
	}{
		{"gcounter rows claimed", envelope("gcounter", 2, n, arr(n)), func(b []byte) error { return gcounter.New().UnmarshalBinary(b) }, false, nil},
		{"gcounter pairs claimed", envelope("gcounter", 1, n, arr(n)), func(b []byte) error { return gcounter.New().UnmarshalBinary(b) }, false, nil},
		{"gcounter tiny rows", valid(g), func(b []byte) error { return gcounter.New().UnmarshalBinary(b) }, true, perByte(16)},
		{"pncounter rows claimed", envelope("pncounter", 2, n, arr(n)), func(b []byte) error { return pncounter.New().UnmarshalBinary(b) }, false, nil},
		{"pncounter halves claimed", envelope("pncounter", 1, n, arr(2, n)), func(b []byte) error { return pncounter.New().UnmarshalBinary(b) }, false, nil},
		{"pncounter tiny rows", valid(p), func(b []byte) error { return pncounter.New().UnmarshalBinary(b) }, true, perByte(16)},
		{"gcounter merged, most actors", valid(gm), func(b []byte) error { return gcounter.New().UnmarshalBinary(b) }, true, perByte(16)},
		{"pncounter merged, most actors", valid(pm), func(b []byte) error { return pncounter.New().UnmarshalBinary(b) }, true, perByte(28)},
		{"tpncounter entries claimed", envelope("tpncounter", 2, n, arr(2, n)), func(b []byte) error { return newTPN().UnmarshalBinary(b) }, false, nil},
		{"tpncounter entries claimed, merged", envelope("tpncounter", 2, n, arr(2, n)), func(b []byte) error { return newTPN().MergeBinary(b) }, false, nil},
		{"tpncounter history claimed", history(tpncounter.MaxEntriesPerActor), func(b []byte) error { return newTPN().UnmarshalBinary(b) }, false, nil},
		{"tpncounter history claimed, merged", history(tpncounter.MaxEntriesPerActor), func(b []byte) error { return newTPN().MergeBinary(b) }, false, nil},
		{"tpncounter tiny history", valid(tiny), func(b []byte) error { return newTPN().UnmarshalBinary(b) }, true,
			func(in int) int { return 7*in + 280 + 256<<10 }}, // one actor, nothing shared
	}
	for _, c := range cases {
		var err error
		got := allocated(func() { err = c.decode(c.in) })
		if (err == nil) != c.ok {
			t.Fatalf("%s: %v", c.name, err)
		}
		bound := claimAllocPerByte*len(c.in) + claimAllocScratch
		if c.ok {
			bound = c.bound(len(c.in))
		}
		t.Logf("%-36s %7d bytes: allocated %8d (%5.1fx), bound %8d", c.name, len(c.in), got, float64(got)/float64(len(c.in)), bound)
		if got > uint64(bound) {
			t.Errorf("%s: %d bytes allocated for %d of input, more than %d", c.name, got, len(c.in), bound)
		}
	}
}

const (
	claimAllocPerByte = 16
	claimAllocScratch = 64 << 10
)

func perByte(k int) func(int) int { return func(in int) int { return k * in } }

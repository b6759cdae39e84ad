package balance

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/internal/wire"
	"github.com/counterkit/counterkit/timeid"
)

// referenceEncoding is the row encoding as written with wire.Encoder (the
// codec appendEncoding replaced), kept to check that the two agree byte
// for byte.
func referenceEncoding(t testing.TB, r Row, version uint64) []byte {
	e := wire.NewEncoder(crdt.TagBalanceRow, version)
	e.ArrayLen(7)
	e.Bin(r.UpdateID[:])
	e.Uint(uint64(r.Kind))
	if r.Version.IsZero() {
		e.Nil()
	} else {
		e.Bin(r.Version[:])
	}
	e.Int(r.Amount)
	e.Int(r.Covers)
	e.Bool(r.Settled)
	e.Uint(uint64(r.Target))
	b, err := e.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// interestingInts are the boundaries of every msgpack integer form.
func interestingInts() []int64 {
	out := []int64{0, 1, -1, math.MaxInt64, math.MinInt64}
	for _, b := range []int64{-32, -33, 127, 128, math.MaxUint8, math.MinInt8, math.MaxUint16, math.MinInt16, math.MaxUint32, math.MinInt32, math.MaxInt8, math.MaxInt16, math.MaxInt32} {
		out = append(out, b-1, b, b+1)
	}
	return out
}

// TestAppendEncodingMatchesWireEncoder compares the row codec with the
// wire.Encoder encoding on every kind, both format versions, every integer
// boundary and random values: equal bytes, the length encodedLen predicts,
// at most maxRowLen bytes, and MarshalBinary's output decodes back.
func TestAppendEncodingMatchesWireEncoder(t *testing.T) {
	testsize.SkipSequential(t)
	rng := rand.New(rand.NewPCG(7, 11))
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	id := func() ID {
		return timeid.FromParts(at.Add(time.Duration(rng.Int64N(int64(time.Hour)))), uint16(rng.IntN(1<<14)), rng.Uint64()&(1<<48-1))
	}
	ints := interestingInts()
	amount := func() int64 {
		if rng.IntN(2) == 0 {
			return ints[rng.IntN(len(ints))]
		}
		return rng.Int64() >> rng.IntN(64)
	}
	check := func(r Row) {
		t.Helper()
		if r.Validate() != nil {
			return
		}
		for _, v := range []uint64{1, 2} {
			if v == 1 && r.Kind == KindNormal && !r.Version.IsZero() {
				continue // not representable in version 1
			}
			want := referenceEncoding(t, r, v)
			got := r.appendEncoding(nil, v)
			if !bytes.Equal(got, want) {
				t.Fatalf("%+v version %d:\n got %x\nwant %x", r, v, got, want)
			}
			if n := r.encodedLen(v); n != len(want) {
				t.Fatalf("%+v version %d: encodedLen %d, encoding %d bytes", r, v, n, len(want))
			}
			if len(want) > maxRowLen {
				t.Fatalf("%+v: %d bytes > maxRowLen %d", r, len(want), maxRowLen)
			}
			// Appending after other bytes leaves them alone.
			prefix := []byte("prefix")
			if got := r.appendEncoding(bytes.Clone(prefix), v); !bytes.Equal(got, append(prefix, want...)) {
				t.Fatalf("%+v: appending after a prefix gave %x", r, got)
			}
		}
		b, err := r.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, referenceEncoding(t, r, FormatVersion)) {
			t.Fatalf("%+v: MarshalBinary %x", r, b)
		}
		var back Row
		if err := back.UnmarshalBinary(b); err != nil || back != r {
			t.Fatalf("%+v: decoded %+v, %v", r, back, err)
		}
		if fast, ok := decodeCanonical(b); !ok || fast != r {
			t.Fatalf("%+v: the fast decoder gave %+v, %v", r, fast, ok)
		}
	}
	for _, a := range ints {
		u, v := id(), id()
		check(NormalRow(u, a))
		check(Row{UpdateID: u, Kind: KindNormal, Amount: a})
		for _, c := range ints {
			check(Row{UpdateID: v, Kind: KindSum, Version: v, Amount: a, Covers: c, Settled: c%2 == 0})
		}
		check(Row{UpdateID: u, Kind: KindTombstone, Version: v, Amount: a, Target: KindNormal})
		check(Row{UpdateID: u, Kind: KindTombstone, Version: v, Amount: a, Target: KindSum})
	}
	for range 20_000 {
		u, v := id(), id()
		switch rng.IntN(4) {
		case 0:
			check(NormalRow(u, amount()))
		case 1:
			check(Row{UpdateID: u, Kind: KindNormal, Amount: amount()})
		case 2:
			check(Row{UpdateID: v, Kind: KindSum, Version: v, Amount: amount(), Covers: amount(), Settled: rng.IntN(2) == 0})
		case 3:
			check(Row{UpdateID: u, Kind: KindTombstone, Version: v, Amount: amount(), Target: []Kind{KindNormal, KindSum}[rng.IntN(2)]})
		}
	}
}

// TestDecodeCanonicalAgrees: the fast decoder accepts only what the
// field-by-field decoder accepts, as the same row, on every byte of every
// row encoding at the integer boundaries changed to each value a msgpack
// form starts with and by one either way.
func TestDecodeCanonicalAgrees(t *testing.T) {
	testsize.SkipSequential(t)
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	u, v := timeid.FromParts(at, 1, 2), timeid.FromParts(at.Add(time.Second), 3, 4)
	var rows []Row
	for _, a := range interestingInts() {
		rows = append(rows, NormalRow(u, a), Row{UpdateID: u, Kind: KindNormal, Amount: a},
			Row{UpdateID: v, Kind: KindSum, Version: v, Amount: a, Covers: max(a, 1), Settled: a%2 == 0},
			Row{UpdateID: u, Kind: KindTombstone, Version: v, Amount: a, Target: KindNormal},
			Row{UpdateID: u, Kind: KindTombstone, Version: v, Amount: a, Target: KindSum})
	}
	starts := []byte{0x00, 0x7f, 0x80, 0x90, 0xa0, 0xc0, 0xc2, 0xc3, 0xc4, 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3, 0xe0, 0xff}
	checked, accepted := 0, 0
	for _, r := range rows {
		if r.Validate() != nil {
			continue
		}
		b, err := r.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		for i := range b {
			for _, c := range append([]byte{b[i] + 1, b[i] - 1}, starts...) {
				m := bytes.Clone(b)
				m[i] = c
				checked++
				fast, ok := decodeCanonical(m)
				if !ok {
					continue
				}
				accepted++
				var slow Row
				if err := slow.unmarshal(m); err != nil || slow != fast {
					t.Fatalf("%x: the fast decoder gave %+v, the other %+v, %v", m, fast, slow, err)
				}
			}
		}
		for n := range b { // every truncation
			if _, ok := decodeCanonical(b[:n]); ok {
				t.Fatalf("%x: a truncation of %d bytes decodes", b[:n], n)
			}
		}
	}
	t.Logf("%d changed encodings, %d of them decoded alike by both", checked, accepted)
}

// FuzzDecodeCanonical: what the fast decoder accepts, the field-by-field
// decoder accepts as the same row.
//
//	go test ./balance -run '^$' -fuzz FuzzDecodeCanonical -fuzztime 60s
func FuzzDecodeCanonical(f *testing.F) {
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, a := range interestingInts() {
		b, _ := NormalRow(timeid.New(at), a).MarshalBinary()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := decodeCanonical(data)
		if !ok {
			return
		}
		var slow Row
		if err := slow.unmarshal(data); err != nil || slow != fast {
			t.Fatalf("%x: the fast decoder gave %+v, the other %+v, %v", data, fast, slow, err)
		}
	})
}

// TestRowCodecAllocations: MarshalBinary allocates its result only, and
// appendEncoding nothing when its buffer has room; decoding a row written
// in the current format allocates nothing.
func TestRowCodecAllocations(t *testing.T) {
	r := NormalRow(timeid.New(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)), -12345)
	if n := testing.AllocsPerRun(100, func() { _, _ = r.MarshalBinary() }); n != 1 {
		t.Errorf("MarshalBinary: %v allocations, want 1 (its result)", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = r.appendEncoding(make([]byte, 0, maxRowLen), FormatVersion) }); n != 0 {
		t.Errorf("appendEncoding with room: %v allocations", n)
	}
	b, _ := r.MarshalBinary()
	var back Row
	if n := testing.AllocsPerRun(100, func() { _ = back.UnmarshalBinary(b) }); n != 0 || back != r {
		t.Errorf("UnmarshalBinary: %v allocations, %+v", n, back)
	}
}

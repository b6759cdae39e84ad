package exact_test

import (
	"cmp"
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/counterkit/counterkit/internal/exact"
	"github.com/counterkit/counterkit/proptest"
)

// TestAgainstBig compares random sums and squares with math/big, with terms
// biased towards the int64 extremes.
func TestAgainstBig(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d (replay: COUNTERKIT_SEED=%d go test ./internal/exact -run '^TestAgainstBig$')", seed, seed)
	rng := rand.New(rand.NewSource(seed))
	term := func() int64 {
		switch rng.Intn(4) {
		case 0:
			return math.MaxInt64 - rng.Int63n(3)
		case 1:
			return math.MinInt64 + rng.Int63n(3)
		default:
			return rng.Int63n(2001) - 1000
		}
	}
	minI, maxI := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	for i := 0; i < proptest.Scale(2000); i++ {
		var a exact.Int128
		want := new(big.Int)
		var b exact.Int128 // a second accumulator, added or subtracted whole
		wantB := new(big.Int)
		for j := rng.Intn(20); j > 0; j-- {
			v := term()
			switch rng.Intn(4) {
			case 0:
				a.Add(v)
				want.Add(want, big.NewInt(v))
			case 1:
				a.Sub(v)
				want.Sub(want, big.NewInt(v))
			case 2:
				b.Add(v)
				wantB.Add(wantB, big.NewInt(v))
				a.AddInt128(b)
				want.Add(want, wantB)
			default:
				b.Sub(v)
				wantB.Sub(wantB, big.NewInt(v))
				a.SubInt128(b)
				want.Sub(want, wantB)
			}
			got, ok := a.Int64()
			fits := want.Cmp(minI) >= 0 && want.Cmp(maxI) <= 0
			if ok != fits || (ok && got != want.Int64()) {
				t.Fatalf("seed %d: got (%d, %v), want %s", seed, got, ok, want)
			}
			clamped := want.Int64()
			if want.Cmp(maxI) > 0 {
				clamped = math.MaxInt64
			} else if want.Cmp(minI) < 0 {
				clamped = math.MinInt64
			}
			if a.Big().Cmp(want) != 0 || a.Clamp() != clamped {
				t.Fatalf("seed %d: Big %s, Clamp %d, want %s", seed, a.Big(), a.Clamp(), want)
			}
		}
		x := term()
		sq := new(big.Int).Mul(big.NewInt(x), big.NewInt(x))
		if got := exact.Square(x).Big(); got.Cmp(sq) != 0 {
			t.Fatalf("Square(%d) = %s, want %s", x, got, sq)
		}
	}
}

func TestUint128AddOverflow(t *testing.T) {
	max := exact.Uint128{Hi: math.MaxUint64, Lo: math.MaxUint64}
	if _, ok := max.Add(exact.Uint128{Lo: 1}); ok {
		t.Fatal("2^128 reported as fitting")
	}
	s, ok := exact.Uint128{Lo: math.MaxUint64}.Add(exact.Uint128{Lo: 1})
	if !ok || s != (exact.Uint128{Hi: 1}) {
		t.Fatalf("carry: got %+v, %v", s, ok)
	}
}

// TestInt128CmpAndBytes: Cmp orders as math/big does, and Bytes is the
// big-endian two's complement FromBytes reads back, around the int64
// limits and the top of the 128-bit range.
func TestInt128CmpAndBytes(t *testing.T) {
	of := func(terms ...int64) exact.Int128 {
		var a exact.Int128
		for _, v := range terms {
			a.Add(v)
		}
		return a
	}
	top := exact.FromBytes([16]byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	bottom := exact.FromBytes([16]byte{0x80})
	vals := []exact.Int128{bottom, of(math.MinInt64, math.MinInt64), of(math.MinInt64, -1), of(math.MinInt64), of(-1), of(), of(1),
		of(math.MaxInt64), of(math.MaxInt64, 1), of(math.MaxInt64, math.MaxInt64, 2), top}
	twoTo127 := new(big.Int).Lsh(big.NewInt(1), 127)
	for i, a := range vals {
		want := new(big.Int).SetBytes(func() []byte { b := a.Bytes(); return b[:] }())
		if a.Bytes()[0] >= 0x80 {
			want.Sub(want, new(big.Int).Lsh(twoTo127, 1))
		}
		if a.Big().Cmp(want) != 0 {
			t.Fatalf("Bytes of %s read back as %s", a.Big(), want)
		}
		if exact.FromBytes(a.Bytes()) != a {
			t.Fatalf("FromBytes(Bytes(%s)) differs", a.Big())
		}
		for j, b := range vals {
			if got, want := a.Cmp(b), a.Big().Cmp(b.Big()); got != want || got != cmp.Compare(i, j) {
				t.Fatalf("Cmp(%s, %s) = %d, want %d", a.Big(), b.Big(), got, want)
			}
		}
	}
	if top.Big().Cmp(new(big.Int).Sub(twoTo127, big.NewInt(1))) != 0 || bottom.Big().Cmp(new(big.Int).Neg(twoTo127)) != 0 {
		t.Fatalf("the ends read %s and %s", top.Big(), bottom.Big())
	}
}

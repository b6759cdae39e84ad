// Package exact holds the 128-bit integers counterkit sums with, so that a
// result never depends on the order its terms are added in: intermediate
// sums may leave the int64 range as long as the final one fits.
package exact

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
)

// Int128 is a signed 128-bit two's-complement accumulator. The zero value is
// 0. Adding int64 terms cannot overflow it for fewer than 2^64 terms.
type Int128 struct {
	hi int64
	lo uint64
}

// Add adds v.
func (a *Int128) Add(v int64) { a.AddInt128(Int128{hi: v >> 63, lo: uint64(v)}) }

// Sub subtracts v (math.MinInt64 included).
func (a *Int128) Sub(v int64) { a.SubInt128(Int128{hi: v >> 63, lo: uint64(v)}) }

// AddInt128 adds b (modulo 2^128).
func (a *Int128) AddInt128(b Int128) {
	var carry uint64
	a.lo, carry = bits.Add64(a.lo, b.lo, 0)
	a.hi += b.hi + int64(carry)
}

// SubInt128 subtracts b (modulo 2^128).
func (a *Int128) SubInt128(b Int128) {
	var borrow uint64
	a.lo, borrow = bits.Sub64(a.lo, b.lo, 0)
	a.hi -= b.hi + int64(borrow)
}

// Int64 returns the value and whether it fits in an int64.
func (a Int128) Int64() (int64, bool) {
	return int64(a.lo), a.hi == int64(a.lo)>>63
}

// Big returns the value as a big.Int.
func (a Int128) Big() *big.Int {
	b := new(big.Int).SetInt64(a.hi)
	b.Lsh(b, 64)
	return b.Add(b, new(big.Int).SetUint64(a.lo))
}

// Cmp returns -1, 0 or +1 as a is less than, equal to or greater than b.
func (a Int128) Cmp(b Int128) int {
	return cmp.Or(cmp.Compare(a.hi, b.hi), cmp.Compare(a.lo, b.lo))
}

// Bytes returns the value in 16 bytes, big-endian two's complement.
func (a Int128) Bytes() [16]byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(a.hi))
	binary.BigEndian.PutUint64(b[8:], a.lo)
	return b
}

// FromBytes returns the value of 16 bytes in big-endian two's complement
// (Bytes).
func FromBytes(b [16]byte) Int128 {
	return Int128{hi: int64(binary.BigEndian.Uint64(b[:8])), lo: binary.BigEndian.Uint64(b[8:])}
}

// Clamp returns the value as an int64: math.MaxInt64 or math.MinInt64
// when it does not fit.
func (a Int128) Clamp() int64 {
	if v, ok := a.Int64(); ok {
		return v
	}
	if a.hi < 0 {
		return math.MinInt64
	}
	return math.MaxInt64
}

// Uint128 is an unsigned 128-bit integer (a sum of squares).
type Uint128 struct{ Hi, Lo uint64 }

// Square returns x², exact for every int64 (math.MinInt64 included).
func Square(x int64) Uint128 {
	u := uint64(x)
	if x < 0 {
		u = -u // two's complement: |x| as uint64, exact even for 2^63
	}
	hi, lo := bits.Mul64(u, u)
	return Uint128{Hi: hi, Lo: lo}
}

// Add returns a+b and whether the sum fits in 128 bits.
func (a Uint128) Add(b Uint128) (Uint128, bool) {
	lo, c := bits.Add64(a.Lo, b.Lo, 0)
	hi, c := bits.Add64(a.Hi, b.Hi, c)
	return Uint128{Hi: hi, Lo: lo}, c == 0
}

// Big returns the value as a big.Int.
func (a Uint128) Big() *big.Int {
	b := new(big.Int).SetUint64(a.Hi)
	b.Lsh(b, 64)
	return b.Or(b, new(big.Int).SetUint64(a.Lo))
}

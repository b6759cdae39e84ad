package tally

import (
	"fmt"
	"math/big"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
	"github.com/counterkit/counterkit/internal/wire"
)

// Kind names an aggregate; the string values are the bytes on the wire.
type Kind string

// The aggregate kinds.
const (
	KindSum      Kind = "sum"      // Sum
	KindMin      Kind = "min"      // Min
	KindMax      Kind = "max"      // Max
	KindStats    Kind = "stats"    // Stats
	KindDistinct Kind = "distinct" // Distinct
)

// maxKindLen bounds the kind string a decoder accepts.
const maxKindLen = 32

// Aggregate is the contract shared by the values a tally counts: a
// commutative monoid whose identity is the zero value of the type A points
// to. Combine sets the receiver to receiver ⊕ other, never modifies other,
// and treats a nil other as the identity; it is exact and does not fail:
// a Sum or Stats combined past what its encoding holds (SPEC.md 7.1) is
// kept exactly, and encoding it is an error wrapping crdt.ErrOverflow.
// Combine need not be idempotent (a Sum combined with itself doubles): the
// folded-through rule of the package documentation never combines a shard
// twice. Equal means "encodes to the same bytes".
//
// Every kind is a pointer type whose zero value is empty and ready to use;
// the read-only methods answer for a nil pointer as for the empty value,
// the mutating ones (Add, Combine) panic on it. No kind is safe for
// concurrent use. The set of kinds is closed: each encoding is part of the
// wire format, so the interface has unexported methods.
type Aggregate[A any] interface {
	Combine(other A) error
	Clone() A
	Equal(other A) bool
	Kind() Kind

	// identity returns a fresh identity value. It is called on the nil A.
	identity() A
	// fits reports whether the encoding holds the value (SPEC.md 7.1).
	fits() bool
	encodeBody(e *wire.Encoder)
	// decodeBody decodes into a receiver that is a fresh identity.
	decodeBody(d *wire.Decoder) error
}

func identity[A Aggregate[A]]() A {
	var zero A
	return zero.identity()
}

// Sum is an exact sum of observations (an Aggregate). Add keeps it in
// int64; Combine, of shards each in int64, may pass it (SPEC.md 7.1).
type Sum struct {
	v exact.Int128
}

// Add adds n. When the sum would not fit in int64 it returns an error
// wrapping crdt.ErrOverflow and leaves s unchanged.
func (s *Sum) Add(n int64) error {
	sum := s.v
	sum.Add(n)
	if _, ok := sum.Int64(); !ok {
		return fmt.Errorf("%w: sum %d + %d does not fit int64", crdt.ErrOverflow, s.v.Big(), n)
	}
	s.v = sum
	return nil
}

// Value returns the sum, or math.MaxInt64 or math.MinInt64 when it does
// not fit (BigValue is exact); 0 for a nil *Sum.
func (s *Sum) Value() int64 { return s.val().Clamp() }

// BigValue returns the exact sum as a new big.Int.
func (s *Sum) BigValue() *big.Int { return s.val().Big() }

// Combine adds other's sum to s, exactly.
func (s *Sum) Combine(other *Sum) error {
	s.v.AddInt128(other.val())
	return nil
}

// Clone returns a copy of s.
func (s *Sum) Clone() *Sum { return &Sum{v: s.val()} }

// Equal reports whether s and other hold the same sum.
func (s *Sum) Equal(other *Sum) bool { return s.val() == other.val() }

func (s *Sum) val() exact.Int128 {
	if s == nil {
		return exact.Int128{}
	}
	return s.v
}

func (s *Sum) fits() bool { _, ok := s.val().Int64(); return ok }

// Kind returns KindSum.
func (*Sum) Kind() Kind { return KindSum }

// String returns the exact sum in decimal.
func (s *Sum) String() string { return s.BigValue().String() }

func (*Sum) identity() *Sum { return new(Sum) }

func (s *Sum) encodeBody(e *wire.Encoder) { e.Int(s.v.Clamp()) }

func (s *Sum) decodeBody(d *wire.Decoder) error {
	v, err := d.Int()
	s.v.Add(v)
	return err
}

// extreme is the shared state of Min and Max: an optional int64.
type extreme struct {
	v  int64
	ok bool
}

// keep observes n, keeping the smaller (min) or the larger.
func (x *extreme) keep(n int64, min bool) {
	if !x.ok || (min && n < x.v) || (!min && n > x.v) {
		*x = extreme{v: n, ok: true}
	}
}

func (x *extreme) combine(o extreme, min bool) error {
	if o.ok {
		x.keep(o.v, min)
	}
	return nil
}

func (x extreme) encode(e *wire.Encoder) {
	if !x.ok {
		e.Nil()
		return
	}
	e.Int(x.v)
}

func (x *extreme) decode(d *wire.Decoder) error {
	isNil, err := d.IsNil()
	if err != nil || isNil {
		return err
	}
	x.v, err = d.Int()
	x.ok = err == nil
	return err
}

func (x extreme) String() string {
	if !x.ok {
		return "none"
	}
	return fmt.Sprint(x.v)
}

// Min is the smallest observation (an Aggregate).
type Min struct{ x extreme }

// Add observes n.
func (m *Min) Add(n int64) { m.x.keep(n, true) }

// Value returns the smallest observation and true, or 0 and false.
func (m *Min) Value() (int64, bool) { x := m.ext(); return x.v, x.ok }

// Combine sets m to the smaller of m and other. It never fails.
func (m *Min) Combine(other *Min) error { return m.x.combine(other.ext(), true) }

// Clone returns a copy of m.
func (m *Min) Clone() *Min { return &Min{x: m.ext()} }

// Equal reports whether m and other hold the same minimum (or none).
func (m *Min) Equal(other *Min) bool { return m.ext() == other.ext() }

func (m *Min) ext() extreme {
	if m == nil {
		return extreme{}
	}
	return m.x
}

// Kind returns KindMin.
func (*Min) Kind() Kind { return KindMin }

// String returns the minimum in decimal, or "none".
func (m *Min) String() string { return m.ext().String() }

func (*Min) identity() *Min { return new(Min) }

func (*Min) fits() bool { return true }

func (m *Min) encodeBody(e *wire.Encoder) { m.x.encode(e) }

func (m *Min) decodeBody(d *wire.Decoder) error { return m.x.decode(d) }

// Max is the largest observation (an Aggregate).
type Max struct{ x extreme }

// Add observes n.
func (m *Max) Add(n int64) { m.x.keep(n, false) }

// Value returns the largest observation and true, or 0 and false.
func (m *Max) Value() (int64, bool) { x := m.ext(); return x.v, x.ok }

// Combine sets m to the larger of m and other. It never fails.
func (m *Max) Combine(other *Max) error { return m.x.combine(other.ext(), false) }

// Clone returns a copy of m.
func (m *Max) Clone() *Max { return &Max{x: m.ext()} }

// Equal reports whether m and other hold the same maximum (or none).
func (m *Max) Equal(other *Max) bool { return m.ext() == other.ext() }

func (m *Max) ext() extreme {
	if m == nil {
		return extreme{}
	}
	return m.x
}

// Kind returns KindMax.
func (*Max) Kind() Kind { return KindMax }

// String returns the maximum in decimal, or "none".
func (m *Max) String() string { return m.ext().String() }

func (*Max) identity() *Max { return new(Max) }

func (*Max) fits() bool { return true }

func (m *Max) encodeBody(e *wire.Encoder) { m.x.encode(e) }

func (m *Max) decodeBody(d *wire.Decoder) error { return m.x.decode(d) }

var (
	_ Aggregate[*Sum]      = (*Sum)(nil)
	_ Aggregate[*Min]      = (*Min)(nil)
	_ Aggregate[*Max]      = (*Max)(nil)
	_ Aggregate[*Stats]    = (*Stats)(nil)
	_ Aggregate[*Distinct] = (*Distinct)(nil)
)

package tally

import (
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
	"github.com/counterkit/counterkit/internal/wire"
)

// Kind names an aggregate in the wire format. The string values are the
// bytes on the wire and never change meaning.
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
// commutative monoid. Combine is commutative and associative, and the zero
// value of the type the pointer A points to is its identity, so
// a.Combine(b) ⊕ c = a ⊕ (b ⊕ c), a ⊕ b = b ⊕ a and a ⊕ zero = a.
//
// Combine is not required to be idempotent (a Sum combined with itself
// doubles): the tally never combines one shard twice, which is what the
// folded-through rule of the package documentation guarantees. Min, Max and
// Distinct happen to be idempotent as well.
//
// Combine sets the receiver to receiver ⊕ other and never modifies other.
// When the result cannot be represented exactly (an int64 overflow) it
// returns an error wrapping crdt.ErrOverflow and leaves the receiver
// unchanged. A nil other is the identity, so Combine(nil) is a no-op that
// returns nil. Combining a value with itself is receiver ⊕ receiver: a
// no-op for the idempotent kinds, a doubling for Sum and Stats. Clone
// returns a deep copy; Equal reports whether two values are observably the
// same, which for every kind here means they encode to the same bytes.
//
// Nil pointers: every read-only method (Value, Estimate, Count, Clone,
// Equal, String, ...) answers for a nil pointer as for the empty value;
// every mutating method (Add, Combine) panics on a nil receiver, like any
// nil-pointer use.
//
// The set of aggregates is closed (Sum, Min, Max, Stats, Distinct): each
// one's encoding is part of the wire format, so the interface has unexported
// methods.
type Aggregate[A any] interface {
	Combine(other A) error
	Clone() A
	Equal(other A) bool
	Kind() Kind

	// identity returns a fresh identity value. It is called on the nil A.
	identity() A
	encodeBody(e *wire.Encoder)
	// decodeBody decodes into a receiver that is a fresh identity.
	decodeBody(d *wire.Decoder) error
}

// identity returns a fresh identity value of A.
func identity[A Aggregate[A]]() A {
	var zero A
	return zero.identity()
}

// Sum is an exact int64 sum of observations. The zero value is the empty sum
// (0) and is ready to use; a nil *Sum reads as it, and Add and Combine panic
// on it. A Sum is not safe for concurrent use.
type Sum struct {
	v int64
}

// Add adds n. When the sum would overflow it returns an error wrapping
// crdt.ErrOverflow and leaves s unchanged.
func (s *Sum) Add(n int64) error {
	var sum exact.Int128
	sum.Add(s.v)
	sum.Add(n)
	r, ok := sum.Int64()
	if !ok {
		return fmt.Errorf("%w: sum %d + %d does not fit int64", crdt.ErrOverflow, s.v, n)
	}
	s.v = r
	return nil
}

// Value returns the sum; 0 for a nil *Sum.
func (s *Sum) Value() int64 { return s.val() }

// Combine adds other's sum to s. Overflow is an error wrapping
// crdt.ErrOverflow that leaves s unchanged. A nil other is the empty sum.
func (s *Sum) Combine(other *Sum) error { return s.Add(other.val()) }

// Clone returns a copy of s.
func (s *Sum) Clone() *Sum { return &Sum{v: s.val()} }

// Equal reports whether s and other hold the same sum. A nil *Sum equals the
// empty sum.
func (s *Sum) Equal(other *Sum) bool { return s.val() == other.val() }

func (s *Sum) val() int64 {
	if s == nil {
		return 0
	}
	return s.v
}

// Kind returns KindSum.
func (*Sum) Kind() Kind { return KindSum }

// String returns the sum in decimal.
func (s *Sum) String() string { return fmt.Sprint(s.val()) }

func (*Sum) identity() *Sum { return new(Sum) }

func (s *Sum) encodeBody(e *wire.Encoder) { e.Int(s.v) }

func (s *Sum) decodeBody(d *wire.Decoder) error {
	v, err := d.Int()
	if err != nil {
		return err
	}
	s.v = v
	return nil
}

// extreme is the shared state of Min and Max: an optional int64.
type extreme struct {
	v  int64
	ok bool
}

// keep observes n: it replaces x when x is empty or when n is smaller (min)
// or larger (!min) than x.
func (x *extreme) keep(n int64, min bool) {
	if !x.ok || (min && n < x.v) || (!min && n > x.v) {
		*x = extreme{v: n, ok: true}
	}
}

// combine keeps o's observation, if any. It never fails.
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
	v, err := d.Int()
	if err != nil {
		return err
	}
	*x = extreme{v: v, ok: true}
	return nil
}

func (x extreme) String() string {
	if !x.ok {
		return "none"
	}
	return fmt.Sprint(x.v)
}

// Min is the smallest observation. The zero value is empty (no observation)
// and is ready to use; a nil *Min reads as it, and Add and Combine panic on
// it. A Min is not safe for concurrent use.
type Min struct{ x extreme }

// Add observes n.
func (m *Min) Add(n int64) { m.x.keep(n, true) }

// Value returns the smallest observation and true, or 0 and false when
// nothing was observed (or m is nil).
func (m *Min) Value() (int64, bool) { x := m.ext(); return x.v, x.ok }

// Combine sets m to the smaller of m and other. It never fails. A nil other
// is empty.
func (m *Min) Combine(other *Min) error { return m.x.combine(other.ext(), true) }

// Clone returns a copy of m.
func (m *Min) Clone() *Min { return &Min{x: m.ext()} }

// Equal reports whether m and other hold the same minimum (or are both
// empty). A nil *Min is empty.
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

func (m *Min) encodeBody(e *wire.Encoder) { m.x.encode(e) }

func (m *Min) decodeBody(d *wire.Decoder) error { return m.x.decode(d) }

// Max is the largest observation. The zero value is empty (no observation)
// and is ready to use; a nil *Max reads as it, and Add and Combine panic on
// it. A Max is not safe for concurrent use.
type Max struct{ x extreme }

// Add observes n.
func (m *Max) Add(n int64) { m.x.keep(n, false) }

// Value returns the largest observation and true, or 0 and false when
// nothing was observed (or m is nil).
func (m *Max) Value() (int64, bool) { x := m.ext(); return x.v, x.ok }

// Combine sets m to the larger of m and other. It never fails. A nil other
// is empty.
func (m *Max) Combine(other *Max) error { return m.x.combine(other.ext(), false) }

// Clone returns a copy of m.
func (m *Max) Clone() *Max { return &Max{x: m.ext()} }

// Equal reports whether m and other hold the same maximum (or are both
// empty). A nil *Max is empty.
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

func (m *Max) encodeBody(e *wire.Encoder) { m.x.encode(e) }

func (m *Max) decodeBody(d *wire.Decoder) error { return m.x.decode(d) }

// Compile-time checks that every kind satisfies the contract.
var (
	_ Aggregate[*Sum]      = (*Sum)(nil)
	_ Aggregate[*Min]      = (*Min)(nil)
	_ Aggregate[*Max]      = (*Max)(nil)
	_ Aggregate[*Stats]    = (*Stats)(nil)
	_ Aggregate[*Distinct] = (*Distinct)(nil)
)

package pncounter

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
)

// Counter goes up and down: grow-only counters P of increments and N of
// decrements, with value P − N. The zero value is an empty counter. A
// Counter is not safe for concurrent use, and copying one aliases its
// storage; use Clone.
type Counter struct {
	p, n gcounter.Counter
}

// Compile-time check that *Counter satisfies the shared contracts.
var (
	_ crdt.State[*Counter] = (*Counter)(nil)
	_ crdt.Valuer          = (*Counter)(nil)
	_ crdt.Codec           = (*Counter)(nil)
)

// New returns an empty counter. It is equivalent to new(Counter).
func New() *Counter { return new(Counter) }

// orEmpty returns c, or an empty counter for a nil c.
func (c *Counter) orEmpty() *Counter {
	if c == nil {
		return &Counter{}
	}
	return c
}

// Increment adds n as actor; a negative n is Decrement(actor, -n), and
// math.MinInt64, which cannot be negated, is crdt.ErrInvalidAmount. Zero
// only validates actor. Errors wrap crdt.ErrInvalidActor, crdt.ErrOverflow
// (actor's count past math.MaxInt64, or the value, unless it was past it
// and moves back: SPEC.md 5.2) or crdt.ErrTooLarge (a new actor past
// gcounter.MaxActors), and leave c unchanged. A known actor does not allocate.
func (c *Counter) Increment(actor crdt.ActorID, n int64) error {
	if n < 0 {
		return c.Decrement(actor, -n) // -math.MinInt64 wraps to itself: refused
	}
	return c.add(&c.p, actor, n, 1)
}

// Decrement subtracts non-negative n as actor; errors as for Increment.
func (c *Counter) Decrement(actor crdt.ActorID, n int64) error {
	if n < 0 {
		return errNegative(n, actor)
	}
	return c.add(&c.n, actor, n, -1)
}

// add adds n >= 0 to actor's count in half g (sign 1: P, -1: N). A half's
// total may pass math.MaxInt64 while the value fits (SPEC.md 5.2), which
// g.Increment refuses: the count then goes in by a Merge.
func (c *Counter) add(g *gcounter.Counter, actor crdt.ActorID, n, sign int64) error {
	err := g.Increment(actor, n)
	if errors.Is(err, crdt.ErrOverflow) && n > 0 {
		err = c.addPast(g, actor, n, sign, err)
	} else if errors.Is(err, crdt.ErrOverflow) {
		err = nil // n == 0 only validates the actor
	}
	if err != nil {
		return wrapHalf("PN"[(1-sign)/2:(3-sign)/2], err)
	}
	return nil
}

// addPast is add once g's total would pass math.MaxInt64 (overflow is g's
// refusal): the count goes in by a Merge if it and the value allow.
func (c *Counter) addPast(g *gcounter.Counter, actor crdt.ActorID, n, sign int64, overflow error) error {
	v := c.BigValue()
	next := new(big.Int).Add(v, big.NewInt(sign*n))
	count := g.Get(actor)
	// Out of range, the value may only move back towards it, as it does
	// when the half's total fits (SPEC.md 5.2).
	if count > math.MaxInt64-n || !next.IsInt64() && (v.IsInt64() || next.CmpAbs(v) >= 0) {
		return overflow
	}
	return setCount(g, actor, count+n)
}

// setCount raises actor's count in g to count by a Merge, which, unlike
// Increment, may take g's total past math.MaxInt64 (SPEC.md 5.1).
func setCount(g *gcounter.Counter, actor crdt.ActorID, count int64) error {
	one := gcounter.New()
	if err := one.Increment(actor, count); err != nil {
		return err
	}
	return g.Merge(one)
}

func errNegative(n int64, actor crdt.ActorID) error {
	return fmt.Errorf("pncounter: decrement of %d by %q: %w (must be >= 0; math.MinInt64 cannot be negated)", n, actor, crdt.ErrInvalidAmount)
}

// Handle adds to one actor's contribution without a lookup (see
// Counter.Handle); its zero value is not usable.
type Handle struct {
	c    *Counter
	p, n gcounter.Handle
}

// Handle returns a Handle for actor, whose Add is Increment without the
// halves' index lookups (gcounter.Handle). c must not be nil.
func (c *Counter) Handle(actor crdt.ActorID) Handle {
	return Handle{c: c, p: c.p.Handle(actor), n: c.n.Handle(actor)}
}

// Add is Increment(actor, delta) for the handle's actor, with its errors.
func (h *Handle) Add(delta int64) error {
	if delta >= 0 {
		if err := h.p.Add(delta); errors.Is(err, crdt.ErrOverflow) {
			return h.c.Increment(h.p.Actor(), delta) // past int64 (see add)
		} else if err != nil {
			return wrapHalf("P", err)
		}
		return nil
	}
	return h.sub(delta)
}

// wrapHalf names the half an error came from.
func wrapHalf(half string, err error) error { return fmt.Errorf("pncounter: %s: %w", half, err) }

// sub is Add of a negative delta.
func (h *Handle) sub(delta int64) error {
	if delta == math.MinInt64 {
		return errNegative(delta, h.n.Actor())
	}
	if err := h.n.Add(-delta); errors.Is(err, crdt.ErrOverflow) {
		return h.c.Decrement(h.n.Actor(), -delta)
	} else if err != nil {
		return wrapHalf("N", err)
	}
	return nil
}

// Actor returns the handle's actor.
func (h *Handle) Actor() crdt.ActorID { return h.p.Actor() }

// Grow reserves room for p more actors in P and n more in N (a decoder, a
// bulk import); capacity only, never the state.
func (c *Counter) Grow(p, n int) {
	c.p.Grow(p)
	c.n.Grow(n)
}

// Apply is Increment, for callers that think of updates as signed deltas;
// every int64 but math.MinInt64 is accepted.
func (c *Counter) Apply(actor crdt.ActorID, delta int64) error { return c.Increment(actor, delta) }

// Merge sets c to the join of both counters, P and N merged separately:
// commutative, associative, idempotent; other is never modified, nil is empty.
// All or nothing: a half past gcounter.MaxMergedActors (crdt.ErrTooLarge) leaves
// c unchanged; halves past math.MaxInt64 are kept (see Value).
func (c *Counter) Merge(other *Counter) error {
	if other == nil || other == c {
		return nil
	}
	if err := c.p.CheckMerge(&other.p); err != nil {
		return wrapHalf("P", err)
	}
	if err := c.n.CheckMerge(&other.n); err != nil {
		return wrapHalf("N", err)
	}
	// Both checks passed, so neither merge can fail.
	_, _ = c.p.Merge(&other.p), c.n.Merge(&other.n)
	return nil
}

// Value returns P − N in O(1): exact when it fits, math.MaxInt64 or
// math.MinInt64 when a Merge of writers that could not see each other took
// it past int64 (SPEC.md 5.2). BigValue is always exact.
func (c *Counter) Value() int64 {
	c = c.orEmpty()
	if p, n := c.p.Value(), c.n.Value(); p < math.MaxInt64 && n < math.MaxInt64 {
		return p - n // both exact
	}
	switch v := c.BigValue(); {
	case v.IsInt64():
		return v.Int64()
	case v.Sign() < 0:
		return math.MinInt64
	}
	return math.MaxInt64
}

// BigValue returns P − N exactly (see Value).
func (c *Counter) BigValue() *big.Int {
	c = c.orEmpty()
	return new(big.Int).Sub(c.p.BigValue(), c.n.BigValue())
}

// Positive returns P, the sum of all increments (math.MaxInt64 past it).
func (c *Counter) Positive() int64 { return c.orEmpty().p.Value() }

// Negative returns N, the sum of all decrements (math.MaxInt64 past it).
func (c *Counter) Negative() int64 { return c.orEmpty().n.Value() }

// Get returns actor's increments minus decrements (no overflow, as Value).
func (c *Counter) Get(actor crdt.ActorID) int64 {
	c = c.orEmpty()
	return c.p.Get(actor) - c.n.Get(actor)
}

// P returns a copy of the increments half.
func (c *Counter) P() *gcounter.Counter { return c.orEmpty().p.Clone() }

// N returns a copy of the decrements half.
func (c *Counter) N() *gcounter.Counter { return c.orEmpty().n.Clone() }

// Actors returns every actor that has incremented or decremented, sorted by
// byte order without duplicates.
func (c *Counter) Actors() []crdt.ActorID {
	c = c.orEmpty()
	out := append(c.p.Actors(), c.n.Actors()...)
	slices.Sort(out)
	return slices.Compact(out)
}

// Clone returns a deep copy.
func (c *Counter) Clone() *Counter {
	c = c.orEmpty()
	return &Counter{p: *c.p.Clone(), n: *c.n.Clone()}
}

// Equal reports whether both halves hold the same count for every actor.
// Equal counters have the same value and the same encoding. A nil counter
// equals an empty one.
func (c *Counter) Equal(other *Counter) bool {
	if c == nil || other == nil {
		return c.empty() && other.empty()
	}
	return c.p.Equal(&other.p) && c.n.Equal(&other.n)
}

func (c *Counter) empty() bool { return c == nil || (c.p.Len() == 0 && c.n.Len() == 0) }

// String formats the counter for debugging.
func (c *Counter) String() string {
	c = c.orEmpty()
	return fmt.Sprintf("pncounter(%d){P:%v N:%v}", c.Value(), &c.p, &c.n)
}

// Stats describes a counter's size.
type Stats struct {
	// Actors is the number of distinct actors in P or N.
	Actors int
	// PActors and NActors count the actors in each half.
	PActors, NActors int
	// EncodedSize is len(MarshalBinary()) in bytes.
	EncodedSize int
}

// Stats returns the counter's size without encoding it. It is O(actors).
func (c *Counter) Stats() Stats {
	c = c.orEmpty()
	return Stats{
		Actors:      len(c.Actors()),
		PActors:     c.p.Len(),
		NActors:     c.n.Len(),
		EncodedSize: envelopeSize + c.bodySize(),
	}
}

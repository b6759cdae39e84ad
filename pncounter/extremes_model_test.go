package pncounter_test

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/pncounter"
)

// exactModel is a PN-Counter as two maps, its value exact (big.Int).
type exactModel struct{ p, n map[crdt.ActorID]int64 }

func (m exactModel) clone() exactModel {
	c := exactModel{map[crdt.ActorID]int64{}, map[crdt.ActorID]int64{}}
	for k, v := range m.p {
		c.p[k] = v
	}
	for k, v := range m.n {
		c.n[k] = v
	}
	return c
}
func (m exactModel) value() *big.Int {
	s := new(big.Int)
	for _, v := range m.p {
		s.Add(s, big.NewInt(v))
	}
	for _, v := range m.n {
		s.Sub(s, big.NewInt(v))
	}
	return s
}

var minInt64, maxInt64 = big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)

// clampInt64 is v, or the end of int64 it passed.
func clampInt64(v *big.Int) int64 {
	if v.Cmp(maxInt64) > 0 {
		return math.MaxInt64
	}
	if v.Cmp(minInt64) < 0 {
		return math.MinInt64
	}
	return v.Int64()
}

// outOfRange is how far v is outside int64 (0 inside).
func outOfRange(v *big.Int) *big.Int {
	if v.Cmp(maxInt64) > 0 {
		return new(big.Int).Sub(v, maxInt64)
	}
	if v.Cmp(minInt64) < 0 {
		return new(big.Int).Sub(minInt64, v)
	}
	return new(big.Int)
}

// apply is Apply as SPEC.md 5.2 states it: the error it returns, and the
// state after it.
func (m exactModel) apply(a crdt.ActorID, d int64) (exactModel, error) {
	if d == math.MinInt64 {
		return m, crdt.ErrInvalidAmount
	}
	if d == 0 {
		return m, nil
	}
	half, mag := m.p, d
	if d < 0 {
		half, mag = m.n, -d
	}
	if half[a] > math.MaxInt64-mag {
		return m, crdt.ErrOverflow
	}
	v := m.value()
	nv := new(big.Int).Add(v, big.NewInt(d))
	if !nv.IsInt64() {
		if v.IsInt64() || outOfRange(nv).Cmp(outOfRange(v)) >= 0 {
			return m, crdt.ErrOverflow
		}
	}
	c := m.clone()
	if d > 0 {
		c.p[a] += mag
	} else {
		c.n[a] += mag
	}
	return c, nil
}

// nearEndsDelta draws a delta, mostly near the ends of int64.
func nearEndsDelta(r *rand.Rand) int64 {
	switch r.IntN(5) {
	case 0:
		return math.MaxInt64 - r.Int64N(3)
	case 1:
		return -(math.MaxInt64 - r.Int64N(3))
	case 2:
		return r.Int64N(7) - 3
	case 3:
		return math.MinInt64
	default:
		return r.Int64() - r.Int64()/2
	}
}

// checkExact compares c with m: BigValue, Value (clamped), Get, and a round
// trip through its encoding that its own decoder accepts.
func checkExact(t *testing.T, c *pncounter.Counter, m exactModel, ctx string) {
	t.Helper()
	v := m.value()
	if c.BigValue().Cmp(v) != 0 {
		t.Fatalf("%s: BigValue %s want %s", ctx, c.BigValue(), v)
	}
	if c.Value() != clampInt64(v) {
		t.Fatalf("%s: Value %d want %d", ctx, c.Value(), clampInt64(v))
	}
	for _, half := range []map[crdt.ActorID]int64{m.p, m.n} {
		for a := range half {
			if g := c.Get(a); g != m.p[a]-m.n[a] {
				t.Fatalf("%s: Get(%q) = %d, want %d", ctx, a, g, m.p[a]-m.n[a])
			}
		}
	}
	b, err := c.MarshalBinary()
	if err != nil {
		t.Fatalf("%s: marshal %v", ctx, err)
	}
	d := pncounter.New()
	if err := d.UnmarshalBinary(b); err != nil {
		t.Fatalf("%s: own output refused: %v", ctx, err)
	}
	if !d.Equal(c) || d.BigValue().Cmp(v) != 0 {
		t.Fatalf("%s: roundtrip", ctx)
	}
}

// TestApplyAndMergeNearInt64AgainstExactModel: three replicas apply
// deltas near the ends of int64 (through Apply, Handle.Add, Increment and
// Decrement, sometimes as another replica's actor) and merge at random;
// every error, value and state matches SPEC.md 5.2's rules computed
// exactly, values past int64 included, Merge commutes, and every state
// round-trips through its encoding.
func TestApplyAndMergeNearInt64AgainstExactModel(t *testing.T) {
	testsize.SkipSequential(t)
	actors := []crdt.ActorID{"a", "b", "c"}
	for seed := range uint64(1000) {
		r := rand.New(rand.NewPCG(seed, 1))
		cs := make([]*pncounter.Counter, 3)
		ms := make([]exactModel, 3)
		for i := range cs {
			cs[i] = pncounter.New()
			ms[i] = exactModel{map[crdt.ActorID]int64{}, map[crdt.ActorID]int64{}}
		}
		for step := 0; step < 30; step++ {
			i := r.IntN(3)
			if r.IntN(3) == 0 {
				j := r.IntN(3)
				before := cs[i].Clone()
				if err := cs[i].Merge(cs[j]); err != nil {
					t.Fatal(err)
				}
				// the join: the larger count per actor and half
				nm := ms[i].clone()
				for a, v := range ms[j].p {
					nm.p[a] = max(nm.p[a], v)
				}
				for a, v := range ms[j].n {
					nm.n[a] = max(nm.n[a], v)
				}
				ms[i] = nm
				o := cs[j].Clone()
				if err := o.Merge(before); err != nil {
					t.Fatal(err)
				}
				if !o.Equal(cs[i]) || o.Value() != cs[i].Value() {
					t.Fatalf("not commutative")
				}
				checkExact(t, cs[i], ms[i], "merge")
				continue
			}
			a := actors[i]
			if r.IntN(4) == 0 {
				a = actors[r.IntN(3)] // another replica's actor, as concurrent writers
			}
			d := nearEndsDelta(r)
			nm, werr := ms[i].apply(a, d)
			var err error
			switch r.IntN(3) {
			case 0:
				err = cs[i].Apply(a, d)
			case 1:
				h := cs[i].Handle(a)
				err = h.Add(d)
			default:
				if d >= 0 {
					err = cs[i].Increment(a, d)
				} else if d != math.MinInt64 {
					err = cs[i].Decrement(a, -d)
				} else {
					err = cs[i].Apply(a, d)
				}
			}
			if !errors.Is(err, werr) || (werr == nil) != (err == nil) {
				t.Fatalf("seed %d: apply %s %d: got %v want %v (value %s)", seed, a, d, err, werr, ms[i].value())
			}
			ms[i] = nm
			checkExact(t, cs[i], ms[i], "apply")
		}
	}
}

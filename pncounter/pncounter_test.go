package pncounter_test

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/leanovate/gopter/gen"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/proptest"
)

func TestZeroValueIsEmpty(t *testing.T) {
	var c pncounter.Counter
	require.Zero(t, c.Value())
	require.Empty(t, c.Actors())
	require.True(t, c.Equal(pncounter.New()))
	require.NoError(t, c.Apply("a", -2))
	require.EqualValues(t, -2, c.Value())
}

func TestIncrementDecrementApply(t *testing.T) {
	c := pncounter.New()
	require.NoError(t, c.Increment("a", 10))
	require.NoError(t, c.Increment("a", -3)) // same as Decrement("a", 3)
	require.NoError(t, c.Decrement("b", 4))
	require.NoError(t, c.Apply("b", 1))
	require.EqualValues(t, 4, c.Value())
	require.EqualValues(t, 11, c.Positive())
	require.EqualValues(t, 7, c.Negative())
	require.EqualValues(t, 7, c.Get("a"))
	require.EqualValues(t, -3, c.Get("b"))
	require.Equal(t, []crdt.ActorID{"a", "b"}, c.Actors())

	d := pncounter.New()
	require.NoError(t, d.Decrement("a", 3))
	require.NoError(t, d.Increment("a", 10))
	require.NoError(t, d.Increment("b", 1))
	require.NoError(t, d.Apply("b", -4))
	require.True(t, c.Equal(d), "order of updates must not matter")
}

func TestRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		do   func(c *pncounter.Counter) error
		want error
	}{
		{"increment MinInt64", func(c *pncounter.Counter) error { return c.Increment("a", math.MinInt64) }, crdt.ErrInvalidAmount},
		{"apply MinInt64", func(c *pncounter.Counter) error { return c.Apply("a", math.MinInt64) }, crdt.ErrInvalidAmount},
		{"negative decrement", func(c *pncounter.Counter) error { return c.Decrement("a", -1) }, crdt.ErrInvalidAmount},
		{"bad actor", func(c *pncounter.Counter) error { return c.Increment("", 1) }, crdt.ErrInvalidActor},
		{"bad actor decrement", func(c *pncounter.Counter) error { return c.Apply("\x7f", -1) }, crdt.ErrInvalidActor},
		{"value overflow", func(c *pncounter.Counter) error { return c.Increment("z", math.MaxInt64-4) }, crdt.ErrOverflow},
		{"N overflow of b's count", func(c *pncounter.Counter) error { return c.Apply("b", -(math.MaxInt64 - 4)) }, crdt.ErrOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := pncounter.New()
			require.NoError(t, c.Increment("a", 10))
			require.NoError(t, c.Decrement("b", 5))
			before := c.Clone()
			require.ErrorIs(t, tt.do(c), tt.want)
			require.True(t, c.Equal(before), "state changed on error")
		})
	}
}

// TestExtremeValues shows the Value bound: P and N at their maxima give
// ±MaxInt64 exactly, and the most negative accepted delta is -MaxInt64.
func TestExtremeValues(t *testing.T) {
	c := pncounter.New()
	require.NoError(t, c.Apply("a", -math.MaxInt64))
	require.EqualValues(t, -math.MaxInt64, c.Value())
	require.NoError(t, c.Increment("b", math.MaxInt64))
	require.Zero(t, c.Value())
	d := pncounter.New()
	require.NoError(t, d.Increment("b", math.MaxInt64))
	require.EqualValues(t, int64(math.MaxInt64), d.Value())
	require.ErrorIs(t, d.Apply("b", 1), crdt.ErrOverflow)
	require.NoError(t, d.Apply("b", -1))
	require.EqualValues(t, int64(math.MaxInt64-1), d.Value())
}

// TestMergePastInt64: writers that could not see each other take a half
// past math.MaxInt64. Merge keeps it (SPEC.md 5.2): Value is exact while
// P − N fits, BigValue always; the half refuses more, the other half
// still takes updates, and the state round-trips.
func TestMergePastInt64(t *testing.T) {
	// N passes int64, the value (6 − 2^63) fits.
	a, b := pncounter.New(), pncounter.New()
	require.NoError(t, a.Increment("x", 1))
	require.NoError(t, a.Decrement("n1", math.MaxInt64/2+1))
	require.NoError(t, b.Increment("y", 5))
	require.NoError(t, b.Decrement("n2", math.MaxInt64/2+1))
	beforeB := b.Clone()
	require.NoError(t, a.Merge(b))
	require.True(t, b.Equal(beforeB), "argument changed")
	require.Equal(t, int64(math.MinInt64+6), a.Value())
	require.Equal(t, int64(math.MaxInt64), a.Negative())
	before := a.Clone()
	require.ErrorIs(t, a.Decrement("n1", 7), crdt.ErrOverflow, "the value would pass int64")
	require.True(t, a.Equal(before))
	require.NoError(t, a.Decrement("n1", 1), "N past int64, the value fits (SPEC.md 5.2)")
	h := a.Handle("n2")
	require.NoError(t, h.Add(-1), "through a Handle too")
	require.NoError(t, a.Increment("x", 4))
	require.Equal(t, int64(math.MinInt64+8), a.Value())
	enc, err := a.MarshalBinary()
	require.NoError(t, err)
	back := pncounter.New()
	require.NoError(t, back.UnmarshalBinary(enc))
	require.True(t, back.Equal(a))

	// P passes int64 and so does the value: Value clamps.
	c, d := pncounter.New(), pncounter.New()
	require.NoError(t, c.Increment("p1", math.MaxInt64/2+1))
	require.NoError(t, d.Increment("p2", math.MaxInt64/2+1))
	require.NoError(t, d.Increment("p3", 3))
	require.NoError(t, c.Merge(d))
	require.Equal(t, "9223372036854775811", c.BigValue().String())
	require.Equal(t, int64(math.MaxInt64), c.Value())
	require.NoError(t, c.Decrement("m", 5))
	require.Equal(t, int64(math.MaxInt64-1), c.Value(), "a decrement brings it back")

	// Two blind writers each add and take back 2^62 + 1: both halves pass
	// int64 with the value 0, and both signs still apply.
	g, k := pncounter.New(), pncounter.New()
	for _, x := range []*pncounter.Counter{g, k} {
		actor := map[*pncounter.Counter]crdt.ActorID{g: "g", k: "k"}[x]
		require.NoError(t, x.Increment(actor, 1<<62+1))
		require.NoError(t, x.Decrement(actor, 1<<62+1))
	}
	require.NoError(t, g.Merge(k))
	require.Zero(t, g.Value())
	require.NoError(t, g.Increment("z", 1))
	require.NoError(t, g.Decrement("z", 2))
	require.Equal(t, int64(-1), g.Value())

	// N passes int64 and so does the value below: Value clamps to MinInt64.
	e, f := pncounter.New(), pncounter.New()
	require.NoError(t, e.Decrement("n1", math.MaxInt64/2+1))
	require.NoError(t, f.Decrement("n2", math.MaxInt64/2+2))
	require.NoError(t, e.Merge(f))
	require.Equal(t, "-9223372036854775809", e.BigValue().String())
	require.Equal(t, int64(math.MinInt64), e.Value())
}

func TestCloneIsIndependent(t *testing.T) {
	a := pncounter.New()
	require.NoError(t, a.Apply("x", 5))
	require.NoError(t, a.Apply("x", -2))
	b := a.Clone()
	require.NoError(t, b.Apply("x", -1))
	require.NoError(t, b.Apply("y", 7))
	require.EqualValues(t, 3, a.Value())
	require.False(t, a.Equal(b))
	p := a.P()
	require.NoError(t, p.Increment("x", 100))
	require.EqualValues(t, 5, a.Positive(), "P() must return a copy")
}

func TestEqualDistinguishesHalves(t *testing.T) {
	a, b := pncounter.New(), pncounter.New()
	require.NoError(t, a.Apply("x", 2))
	require.NoError(t, a.Apply("x", -2))
	require.Zero(t, a.Value())
	require.False(t, a.Equal(b), "same value, different history")
	var nilC *pncounter.Counter
	require.True(t, nilC.Equal(b))
	require.False(t, nilC.Equal(a))
}

func TestStatsMatchesEncoding(t *testing.T) {
	c := pncounter.New()
	check := func() {
		t.Helper()
		data, err := c.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, len(data), c.Stats().EncodedSize)
	}
	check()
	deltas := []int64{1, -127, 128, -255, 65536, -(1 << 32), math.MaxInt64 / 4}
	for i, d := range deltas {
		require.NoError(t, c.Apply(crdt.ActorID(fmt.Sprintf("actor-%d-%s", i, strings.Repeat("é", i*5))), d))
		check()
	}
	for i := range 20 {
		require.NoError(t, c.Apply(crdt.ActorID(fmt.Sprint("n", i)), -1))
		check()
	}
	s := c.Stats()
	require.Equal(t, 4, s.PActors)
	require.Equal(t, 23, s.NActors)
	require.Equal(t, 27, s.Actors)
}

// TestWorstCaseFitsDecoder builds the largest state the type allows
// (MaxActors 255-byte actors in each half, 9-byte counts) and checks that
// it encodes under MaxEncodedSize and round-trips: no state Increment builds
// is rejected by a peer's decoder (a merge past MaxActors of long ids may
// not encode: MarshalBinary refuses it, SPEC.md 4.2).
func TestWorstCaseFitsDecoder(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two halves of MaxActors actors")
	}
	c := pncounter.New()
	for i := range gcounter.MaxActors {
		id := fmt.Sprintf("%06d", i)
		pa := crdt.ActorID(id + strings.Repeat("p", crdt.MaxIDLen-len(id)))
		na := crdt.ActorID(id + strings.Repeat("n", crdt.MaxIDLen-len(id)))
		require.NoError(t, c.Increment(pa, math.MaxInt64/gcounter.MaxActors))
		require.NoError(t, c.Decrement(na, math.MaxInt64/gcounter.MaxActors))
	}
	data, err := c.MarshalBinary()
	require.NoError(t, err)
	t.Logf("worst case: %d bytes, limit %d", len(data), pncounter.MaxEncodedSize)
	require.LessOrEqual(t, len(data), pncounter.MaxEncodedSize)
	var d pncounter.Counter
	require.NoError(t, d.UnmarshalBinary(data))
	require.True(t, d.Equal(c))
}

// TestAgainstModel applies random signed deltas (including MinInt64 and
// amounts that overflow a half) to a Counter and to a math/big model of P
// and N, comparing every observable after each step.
func TestAgainstModel(t *testing.T) {
	testsize.SkipSequential(t)
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	actors := []crdt.ActorID{"a", "b", "c", ""}
	maxInt := big.NewInt(math.MaxInt64)
	c := pncounter.New()
	p, n := new(big.Int), new(big.Int)
	perActor := map[crdt.ActorID]*big.Int{}
	counts := map[bool]map[crdt.ActorID]int64{true: {}, false: {}} // per half (true: P), per actor
	clamp := func(v *big.Int) int64 {
		switch {
		case v.IsInt64():
			return v.Int64()
		case v.Sign() < 0:
			return math.MinInt64
		}
		return math.MaxInt64
	}
	for step := range proptest.Scale(20000) {
		actor := actors[rng.IntN(len(actors))]
		var d int64
		switch rng.IntN(6) {
		case 0:
			d = rng.Int64N(2001) - 1000
		case 1:
			d = rng.Int64N(math.MaxInt64/3) + 1
		case 2:
			d = -rng.Int64N(math.MaxInt64/3) - 1
		case 3:
			d = math.MinInt64
		default:
			d = rng.Int64N(21) - 10
		}
		half := p
		if d < 0 {
			half = n
		}
		mag := new(big.Int).Abs(big.NewInt(d))
		value := new(big.Int).Sub(p, n)
		next := new(big.Int).Add(value, big.NewInt(d))
		var want error
		switch {
		case d == math.MinInt64:
			want = crdt.ErrInvalidAmount
		case actor == "":
			want = crdt.ErrInvalidActor
		case new(big.Int).Add(big.NewInt(counts[d >= 0][actor]), mag).Cmp(maxInt) > 0: // SPEC.md 5.2
			want = crdt.ErrOverflow
		case !next.IsInt64() && (value.IsInt64() || value.Sign() == next.Sign()):
			want = crdt.ErrOverflow
		}
		err := c.Apply(actor, d)
		if want != nil {
			require.ErrorIs(t, err, want, "step %d: Apply(%q, %d)", step, actor, d)
		} else {
			require.NoError(t, err, "step %d: Apply(%q, %d)", step, actor, d)
			half.Add(half, mag)
			counts[d >= 0][actor] += mag.Int64()
			if perActor[actor] == nil {
				perActor[actor] = new(big.Int)
			}
			perActor[actor].Add(perActor[actor], big.NewInt(d))
		}
		require.Equal(t, clamp(p), c.Positive(), "step %d", step)
		require.Equal(t, clamp(n), c.Negative(), "step %d", step)
		require.Equal(t, clamp(new(big.Int).Sub(p, n)), c.Value(), "step %d", step)
		require.Zero(t, new(big.Int).Sub(p, n).Cmp(c.BigValue()), "step %d", step)
		for a, v := range perActor {
			require.Equal(t, v.Int64(), c.Get(a), "step %d actor %q", step, a)
		}
		if rng.IntN(40) == 0 {
			c, p, n, perActor = pncounter.New(), new(big.Int), new(big.Int), map[crdt.ActorID]*big.Int{}
			counts = map[bool]map[crdt.ActorID]int64{true: {}, false: {}}
		}
	}
}

func model() proptest.Model[*pncounter.Counter, int64] {
	return proptest.Model[*pncounter.Counter, int64]{
		Name: "pncounter",
		New:  pncounter.New,
		// Signed deltas; zero is a no-op. Rejection paths are covered by
		// TestAgainstModel, which can afford overflowing amounts.
		GenOp: gen.Int64Range(-50, 50),
		Apply: func(c *pncounter.Counter, a crdt.ActorID, d int64) error { return c.Apply(a, d) },
		Merge: func(dst, src *pncounter.Counter) error { return dst.Merge(src) },
		Clone: (*pncounter.Counter).Clone,
		Equal: (*pncounter.Counter).Equal,
		Value: func(c *pncounter.Counter) any { return c.Value() },
		// The plain model: increments minus decrements.
		Expect: func(ops []int64) any {
			var sum int64
			for _, d := range ops {
				sum += d
			}
			return sum
		},
		Leq: func(a, b *pncounter.Counter) bool {
			pa, pb, na, nb := a.P(), b.P(), a.N(), b.N()
			for actor, v := range pa.All() {
				if v > pb.Get(actor) {
					return false
				}
			}
			for actor, v := range na.All() {
				if v > nb.Get(actor) {
					return false
				}
			}
			return true
		},
	}
}

func TestLaws(t *testing.T) {
	testsize.SkipSequential(t)
	proptest.CheckLaws(t, model(), proptest.DefaultOptions())
}

func TestConvergence(t *testing.T) {
	proptest.CheckConvergence(t, model(), proptest.DefaultOptions())
}

// TestEncodingRoundTripProperty checks decode(encode(c)) == c and stable
// bytes on random counters.
func TestEncodingRoundTripProperty(t *testing.T) {
	testsize.SkipSequential(t)
	format.RoundTrip(t, func(ids []string, deltas []int64) *pncounter.Counter {
		c := pncounter.New()
		for i, id := range ids {
			if i < len(deltas) {
				_ = c.Apply(crdt.ActorID(id), deltas[i]) // invalid input is rejected, fine
			}
		}
		return c
	}, gen.Int64Range(-math.MaxInt64/8, math.MaxInt64/8))
}

func TestApplyKnownActorDoesNotAllocate(t *testing.T) {
	c := pncounter.New()
	require.NoError(t, c.Apply("a", 1))
	require.NoError(t, c.Apply("a", -1))
	d := int64(1)
	allocs := testing.AllocsPerRun(1000, func() { _ = c.Apply("a", d); d = -d })
	require.Zero(t, allocs)
}

// Read-only methods on a nil counter answer as the empty counter does.
func TestNilCounterReads(t *testing.T) {
	var c *pncounter.Counter
	require.Zero(t, c.Value())
	require.Zero(t, c.Get("a"))
	require.Empty(t, c.Actors())
	require.Zero(t, c.Stats().Actors)
	require.Equal(t, (&pncounter.Counter{}).String(), c.String())
	var g *gcounter.Counter
	require.Zero(t, g.Value())
	require.Zero(t, g.Get("a"))
	require.Empty(t, g.Actors())
	require.Equal(t, (&gcounter.Counter{}).Stats(), g.Stats())
}

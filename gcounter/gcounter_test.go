package gcounter_test

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
	"github.com/counterkit/counterkit/internal/countertest"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
)

func TestZeroValueIsEmpty(t *testing.T) {
	var c gcounter.Counter
	require.Zero(t, c.Value())
	require.Zero(t, c.Get("a"))
	require.Empty(t, c.Actors())
	require.True(t, c.Equal(gcounter.New()))
	require.NoError(t, c.Increment("a", 2))
	require.EqualValues(t, 2, c.Value())
}

func TestIncrementRejectsBadInput(t *testing.T) {
	tests := []struct {
		name  string
		actor crdt.ActorID
		n     int64
		want  error
	}{
		{"negative", "a", -1, crdt.ErrInvalidAmount},
		{"min int64", "a", math.MinInt64, crdt.ErrInvalidAmount},
		{"empty actor", "", 1, crdt.ErrInvalidActor},
		{"control char", "a\x00b", 1, crdt.ErrInvalidActor},
		{"bad utf8", "\xff", 1, crdt.ErrInvalidActor},
		{"too long", crdt.ActorID(strings.Repeat("x", crdt.MaxIDLen+1)), 1, crdt.ErrInvalidActor},
		{"zero with bad actor", "", 0, crdt.ErrInvalidActor},
		{"overflow existing", "a", math.MaxInt64 - 9, crdt.ErrOverflow},
		{"overflow new", "new", math.MaxInt64 - 9, crdt.ErrOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := gcounter.New()
			require.NoError(t, c.Increment("a", 7))
			require.NoError(t, c.Increment("b", 3))
			before := c.Clone()
			err := c.Increment(tt.actor, tt.n)
			require.ErrorIs(t, err, tt.want)
			require.True(t, c.Equal(before), "state changed on error: %v", c)
			require.EqualValues(t, 10, c.Value())
		})
	}
}

func TestIncrementReachesMaxInt64Exactly(t *testing.T) {
	c := gcounter.New()
	require.NoError(t, c.Increment("a", math.MaxInt64-1))
	require.NoError(t, c.Increment("b", 1))
	require.EqualValues(t, int64(math.MaxInt64), c.Value())
	require.ErrorIs(t, c.Increment("b", 1), crdt.ErrOverflow)
	require.NoError(t, c.Increment("b", 0), "a zero increment never overflows")
	require.EqualValues(t, int64(math.MaxInt64), c.Value())
}

func TestZeroIncrementAddsNoActor(t *testing.T) {
	c := gcounter.New()
	require.NoError(t, c.Increment("a", 0))
	require.Zero(t, c.Len())
	require.True(t, c.Equal(gcounter.New()))
}

// TestMergePastInt64: writers that could not see each other pass
// math.MaxInt64 together. Merge keeps it in either order (SPEC.md 4.1):
// Value returns math.MaxInt64, BigValue the exact sum, the state round
// trips, and Increment refuses (ErrOverflow) unchanged.
func TestMergePastInt64(t *testing.T) {
	a, b := gcounter.New(), gcounter.New()
	require.NoError(t, a.Increment("x", math.MaxInt64/2+1))
	require.NoError(t, a.Increment("y", 5))
	require.NoError(t, b.Increment("z", math.MaxInt64/2+1))
	require.NoError(t, b.Increment("y", 9))
	beforeB := b.Clone()
	ab, ba := a.Clone(), b.Clone()
	require.NoError(t, ab.CheckMerge(b))
	require.NoError(t, ab.Merge(b))
	require.NoError(t, ba.Merge(a))
	require.True(t, ab.Equal(ba))
	require.True(t, b.Equal(beforeB), "Merge modified its argument")
	require.Equal(t, "9223372036854775817", ab.BigValue().String())
	require.Equal(t, int64(math.MaxInt64), ab.Value())
	enc, err := ab.MarshalBinary()
	require.NoError(t, err)
	back := gcounter.New()
	require.NoError(t, back.UnmarshalBinary(enc))
	require.True(t, back.Equal(ab))
	before := ab.Clone()
	require.ErrorIs(t, ab.Increment("y", 1), crdt.ErrOverflow)
	require.ErrorIs(t, ab.Increment("y", 0), crdt.ErrOverflow, "SPEC.md 4.2: step 3 before step 4")
	h := ab.Handle("y")
	require.ErrorIs(t, h.Add(1), crdt.ErrOverflow)
	require.True(t, ab.Equal(before))
}

func TestMaxActors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds counters with MaxActors actors")
	}
	full := gcounter.New()
	for i := range gcounter.MaxActors {
		require.NoError(t, full.Increment(actorN(i), 1))
	}
	require.ErrorIs(t, full.Increment("one-too-many", 1), crdt.ErrTooLarge)
	require.NoError(t, full.Increment(actorN(0), 1), "existing actors still count")

	// Merge is not capped by MaxActors (SPEC.md 4.2): two blind writers
	// each within it merge past it, and the union round-trips; a new actor
	// is still refused, existing ones count.
	other := gcounter.New()
	require.NoError(t, other.Increment("one-too-many", 1))
	merged := other.Clone()
	require.NoError(t, merged.Merge(full))
	require.NoError(t, full.Merge(other))
	require.True(t, full.Equal(merged))
	require.Equal(t, gcounter.MaxActors+1, full.Len())
	require.ErrorIs(t, full.Increment("another", 1), crdt.ErrTooLarge)
	require.NoError(t, full.Increment("one-too-many", 1))
	b, err := full.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, merged.UnmarshalBinary(b))
	require.True(t, merged.Equal(full))
	// MaxMergedActors bounds merges, for memory: one more is refused.
	rest, more := gcounter.New(), gcounter.New()
	for i := range gcounter.MaxMergedActors - gcounter.MaxActors {
		c := rest
		if i >= gcounter.MaxActors {
			c = more
		}
		require.NoError(t, c.Increment(crdt.ActorID(fmt.Sprintf("r%06d", i)), 1))
	}
	require.NoError(t, rest.Merge(more))
	before := full.Clone()
	require.ErrorIs(t, full.Merge(rest), crdt.ErrTooLarge)
	require.True(t, full.Equal(before))
	require.ErrorIs(t, rest.Merge(full), crdt.ErrTooLarge)

	// The documented guarantee: the largest possible state still encodes
	// within the decoder's bounds and round-trips. (PNCounter tests check
	// the two-half worst case.)
	worst := gcounter.New()
	for i := range gcounter.MaxActors {
		a := fmt.Sprintf("%06d%s", i, strings.Repeat("w", crdt.MaxIDLen-6))
		require.NoError(t, worst.Increment(crdt.ActorID(a), math.MaxInt64/gcounter.MaxActors))
	}
	b, err = worst.MarshalBinary()
	require.NoError(t, err)
	require.LessOrEqual(t, len(b), gcounter.MaxEncodedSize)
	require.Equal(t, len(b), worst.Stats().EncodedSize)
	got := gcounter.New()
	require.NoError(t, got.UnmarshalBinary(b))
	require.True(t, got.Equal(worst))
}

var actorN = countertest.ActorN

func TestCloneIsIndependent(t *testing.T) {
	a := gcounter.New()
	require.NoError(t, a.Increment("x", 1))
	b := a.Clone()
	require.NoError(t, b.Increment("x", 1))
	require.NoError(t, b.Increment("y", 1))
	require.EqualValues(t, 1, a.Value())
	require.EqualValues(t, 1, a.Get("x"))
	require.Zero(t, a.Get("y"))
	require.False(t, a.Equal(b))
	require.True(t, gcounter.New().Clone().Equal(gcounter.New()))
}

func TestEqual(t *testing.T) {
	a, b := gcounter.New(), gcounter.New()
	require.NoError(t, a.Increment("x", 2))
	require.NoError(t, a.Increment("y", 1))
	require.NoError(t, b.Increment("y", 1))
	require.NoError(t, b.Increment("x", 2))
	require.True(t, a.Equal(b), "insertion order must not matter")
	c := gcounter.New()
	require.NoError(t, c.Increment("x", 1))
	require.NoError(t, c.Increment("y", 2))
	require.Equal(t, a.Value(), c.Value())
	require.False(t, a.Equal(c), "same value, different actors")
	var nilC *gcounter.Counter
	require.True(t, nilC.Equal(gcounter.New()))
	require.False(t, nilC.Equal(a))
}

func TestActorsAndAllSorted(t *testing.T) {
	c := gcounter.New()
	for _, a := range []crdt.ActorID{"m", "b", "z", "a", "é", "B"} {
		require.NoError(t, c.Increment(a, 1))
	}
	require.Equal(t, []crdt.ActorID{"B", "a", "b", "m", "z", "é"}, c.Actors())
	var got []crdt.ActorID
	for a, n := range c.All() {
		require.EqualValues(t, 1, n)
		got = append(got, a)
		if len(got) == 3 {
			break
		}
	}
	require.Equal(t, []crdt.ActorID{"B", "a", "b"}, got)
}

func TestStatsMatchesEncoding(t *testing.T) {
	// Counts straddling every msgpack integer width, and actor ids
	// straddling every str header width.
	counts := []int64{1, 127, 128, 255, 256, 65535, 65536, 1<<32 - 1, 1 << 32}
	ids := []int{1, 31, 32, 255}
	c := gcounter.New()
	for i, n := range counts {
		a := crdt.ActorID(fmt.Sprintf("%03d", i) + strings.Repeat("a", ids[i%len(ids)]-1))
		if len(a) > crdt.MaxIDLen {
			a = a[:crdt.MaxIDLen]
		}
		require.NoError(t, c.Increment(a, n))
		b, err := c.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, gcounter.Stats{Actors: i + 1, EncodedSize: len(b)}, c.Stats())
	}
	// Array headers: 16 and more pairs.
	for i := range 20 {
		require.NoError(t, c.Increment(actorN(i), 1))
	}
	b, err := c.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, len(b), c.Stats().EncodedSize)
}

// TestAgainstModel applies random increments, including amounts that would
// overflow, to a Counter and to a math/big reference that knows nothing
// about the implementation, and compares every observable after each step.
func TestAgainstModel(t *testing.T) {
	testsize.SkipSequential(t)
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	actors := []crdt.ActorID{"a", "b", "c", "d", ""}
	steps := proptest.Scale(20000)
	c := gcounter.New()
	model := map[crdt.ActorID]*big.Int{}
	maxInt := big.NewInt(math.MaxInt64)
	for step := range steps {
		actor := actors[rng.IntN(len(actors))]
		var n int64
		switch rng.IntN(4) {
		case 0:
			n = rng.Int64N(1000)
		case 1:
			n = -rng.Int64N(1000) - 1
		case 2:
			n = rng.Int64N(math.MaxInt64/4) + 1
		default:
			n = 0
		}
		sum := new(big.Int)
		for _, v := range model {
			sum.Add(sum, v)
		}
		newSum := new(big.Int).Add(sum, big.NewInt(n))
		var want error
		switch {
		case n < 0:
			want = crdt.ErrInvalidAmount
		case actor == "":
			want = crdt.ErrInvalidActor
		case newSum.Cmp(maxInt) > 0:
			want = crdt.ErrOverflow
		}
		err := c.Increment(actor, n)
		if want != nil {
			require.ErrorIs(t, err, want, "step %d: Increment(%q, %d)", step, actor, n)
		} else {
			require.NoError(t, err, "step %d: Increment(%q, %d)", step, actor, n)
			if n > 0 {
				if model[actor] == nil {
					model[actor] = new(big.Int)
				}
				model[actor].Add(model[actor], big.NewInt(n))
				sum = newSum
			}
		}
		require.Equal(t, sum.Int64(), c.Value(), "step %d", step)
		require.Equal(t, len(model), c.Len(), "step %d", step)
		for a, v := range model {
			require.Equal(t, v.Int64(), c.Get(a), "step %d actor %q", step, a)
		}
		// Start over now and then so that big totals do not make every
		// later step an overflow.
		if rng.IntN(50) == 0 {
			c, model = gcounter.New(), map[crdt.ActorID]*big.Int{}
		}
	}
}

// model returns the proptest description of a Counter. Amounts in
// [-2, 50]: negative ones are rejected, zero is a no-op.
func model() proptest.Model[*gcounter.Counter, int64] {
	return proptest.Model[*gcounter.Counter, int64]{
		Name:  "gcounter",
		New:   gcounter.New,
		GenOp: gen.Int64Range(-2, 50),
		Apply: func(c *gcounter.Counter, a crdt.ActorID, n int64) error {
			return c.Increment(a, n)
		},
		Merge: func(dst, src *gcounter.Counter) error { return dst.Merge(src) },
		Clone: (*gcounter.Counter).Clone,
		Equal: (*gcounter.Counter).Equal,
		Value: func(c *gcounter.Counter) any { return c.Value() },
		// The plain model: the value is the sum of accepted increments.
		Expect: func(ops []int64) any {
			var sum int64
			for _, n := range ops {
				sum += n
			}
			return sum
		},
		Leq: func(a, b *gcounter.Counter) bool {
			for actor, n := range a.All() {
				if n > b.Get(actor) {
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
	testsize.SkipSequential(t)
	proptest.CheckConvergence(t, model(), proptest.DefaultOptions())
}

// TestEncodingRoundTripProperty checks decode(encode(c)) == c and stable
// bytes on random counters.
func TestEncodingRoundTripProperty(t *testing.T) {
	testsize.SkipSequential(t)
	format.RoundTrip(t, func(ids []string, counts []int64) *gcounter.Counter {
		c := gcounter.New()
		for i, id := range ids {
			if i < len(counts) {
				_ = c.Increment(crdt.ActorID(id), counts[i]) // invalid input is rejected, fine
			}
		}
		return c
	}, gen.Int64Range(-5, math.MaxInt64/8))
}

func TestGrowChangesNothingObservable(t *testing.T) {
	c := gcounter.New()
	c.Grow(10)
	require.True(t, c.Equal(gcounter.New()))
	require.NoError(t, c.Increment("a", 1))
	before := c.Clone()
	c.Grow(1000)
	c.Grow(-1)
	require.True(t, c.Equal(before))
	require.NoError(t, c.Increment("b", 2))
	require.NoError(t, c.Increment("a", 1))
	require.EqualValues(t, 2, c.Get("a"))
	require.EqualValues(t, 4, c.Value())
}

func TestIncrementKnownActorDoesNotAllocate(t *testing.T) {
	c := gcounter.New()
	require.NoError(t, c.Increment("a", 1))
	allocs := testing.AllocsPerRun(1000, func() { _ = c.Increment("a", 1) })
	require.Zero(t, allocs)
}

package tpncounter

import (
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/internal/wire"
	"github.com/counterkit/counterkit/proptest"
)

// foldSim runs replicas of one Counter written by short-lived actors
// (incarnations) that are retired with a time and folded, under the
// assumption of SPEC.md 6.10: a fold at cutoff c happens only once every
// state (replica or state in flight) holds every retirement before c, and
// an actor never writes after its first retirement. Time is in seconds.
type foldSim struct {
	rng    *rand.Rand
	o      Options
	now    int64
	grace  int64
	reps   []*Counter
	flight []*Counter // states sent and not yet delivered
	// seen lists the retirements (actor@time) each state has received:
	// the replicas' and, after them, the states in flight.
	seen, flightSeen []map[string]int64
	// incarnations: home replica, alive (not retired anywhere yet)
	home  map[crdt.ActorID]int
	alive map[crdt.ActorID]bool
	// events lists every retirement (actor@time) with its time.
	events map[string]int64
	next   int
	txn    int
	want   int64
	folds  int
	folded int
}

func newFoldSim(seed int64) *foldSim {
	s := &foldSim{rng: rand.New(rand.NewSource(seed)), o: Options{HistoryLength: 2}, grace: 20,
		home: map[crdt.ActorID]int{}, alive: map[crdt.ActorID]bool{}, events: map[string]int64{}}
	for range 3 {
		c, _ := New(s.o)
		s.reps = append(s.reps, c)
		s.seen = append(s.seen, map[string]int64{})
	}
	return s
}

func at(sec int64) time.Time { return time.Unix(sec, 0) }

// live returns the alive incarnations, sorted.
func (s *foldSim) live() []crdt.ActorID {
	var out []crdt.ActorID
	for a, ok := range s.alive {
		if ok {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}

// safeToFold reports whether every state (replica or in flight) has
// received every retirement before cut.
func (s *foldSim) safeToFold(cut int64) bool {
	for ev, t := range s.events {
		if t >= cut {
			continue
		}
		for _, seen := range append(slices.Clone(s.seen), s.flightSeen...) {
			if _, ok := seen[ev]; !ok {
				return false
			}
		}
	}
	return true
}

// received records that replica r merged a state that had seen from.
func (s *foldSim) received(r int, from map[string]int64) {
	for ev, t := range from {
		s.seen[r][ev] = t
	}
}

// step performs one random operation and checks what it can.
func (s *foldSim) step() error {
	s.now++
	r := s.rng.Intn(len(s.reps))
	c := s.reps[r]
	switch k := s.rng.Intn(100); {
	case k < 30: // a write by an incarnation on its home replica
		live := s.live()
		if len(live) == 0 || s.rng.Intn(4) == 0 {
			a := crdt.ActorID(fmt.Sprintf("i%03d", s.next))
			s.next++
			s.home[a], s.alive[a] = r, true
			live = []crdt.ActorID{a}
		}
		a := live[s.rng.Intn(len(live))]
		amt := int64(1 + s.rng.Intn(9))
		if s.rng.Intn(3) == 0 {
			amt = -amt
		}
		s.txn++
		if _, err := s.reps[s.home[a]].Apply(a, crdt.TxnID(fmt.Sprintf("t%d", s.txn)), amt); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		s.want += amt
	case k < 45: // retire an actor whose latest write this replica holds
		var cand []crdt.ActorID
		for a := range s.home {
			if !s.alive[a] && s.rng.Intn(2) == 0 {
				continue
			}
			cand = append(cand, a)
		}
		slices.Sort(cand)
		if len(cand) == 0 {
			return nil
		}
		a := cand[s.rng.Intn(len(cand))]
		if c.Version(a) != s.reps[s.home[a]].Version(a) && s.alive[a] {
			return nil // this replica has not seen its last write
		}
		v := c.Value()
		ok, err := c.RetireAllAt(at(s.now), a)
		if err != nil {
			return fmt.Errorf("retire: %w", err)
		}
		if c.Value() != v {
			return fmt.Errorf("retire changed the value %d -> %d", v, c.Value())
		}
		if ok {
			s.alive[a] = false
			ev := fmt.Sprintf("%s@%d", a, s.now)
			s.events[ev], s.seen[r][ev] = s.now, s.now
			if s.rng.Intn(4) != 0 {
				// Another replica that has not seen it retires the same
				// entry too, with a clock half a grace ahead.
				r2 := s.rng.Intn(len(s.reps))
				later := s.now + s.grace/2
				if ok, _ := s.reps[r2].RetireAllAt(at(later), a); ok {
					ev := fmt.Sprintf("%s@%d", a, later)
					s.events[ev], s.seen[r2][ev] = later, later
				}
			}
		}
	case k < 60: // send a state
		s.flight = append(s.flight, c.Clone())
		s.flightSeen = append(s.flightSeen, maps.Clone(s.seen[r]))
	case k < 80: // deliver a state, or merge another replica
		var o *Counter
		if len(s.flight) > 0 && s.rng.Intn(2) == 0 {
			i := s.rng.Intn(len(s.flight))
			o = s.flight[i]
			s.received(r, s.flightSeen[i])
			s.flight = slices.Delete(s.flight, i, i+1)
			s.flightSeen = slices.Delete(s.flightSeen, i, i+1)
		} else {
			j := s.rng.Intn(len(s.reps))
			o = s.reps[j]
			s.received(r, s.seen[j])
		}
		if s.rng.Intn(2) == 0 {
			b, err := o.MarshalBinary()
			if err != nil {
				return err
			}
			ref := c.Clone()
			if err := ref.Merge(o); err != nil {
				return err
			}
			if err := c.MergeBinary(b); err != nil {
				return fmt.Errorf("merge binary: %w", err)
			}
			if !c.Equal(ref) || c.Value() != ref.Value() {
				return fmt.Errorf("MergeBinary and Merge differ")
			}
		} else if err := c.Merge(o); err != nil {
			return fmt.Errorf("merge: %w", err)
		}
	case k < 90: // fold, where the assumption allows
		cut := s.now - s.grace
		if cut <= 0 || !s.safeToFold(cut) {
			return nil
		}
		v := c.Value()
		n := c.Fold(at(cut))
		if c.Value() != v {
			return fmt.Errorf("fold at %d changed the value %d -> %d", cut, v, c.Value())
		}
		s.folds++
		s.folded += n
	default: // everything delivered, every replica merged with every other
		s.sync()
	}
	return nil
}

func (s *foldSim) sync() {
	for i, o := range s.flight {
		_ = s.reps[0].Merge(o)
		s.received(0, s.flightSeen[i])
	}
	s.flight, s.flightSeen = nil, nil
	for i, c := range s.reps[1:] {
		_ = s.reps[0].Merge(c)
		s.received(0, s.seen[i+1])
	}
	for i, c := range s.reps[1:] {
		_ = c.Merge(s.reps[0])
		s.received(i+1, s.seen[0])
	}
}

// laws checks that Merge is commutative, associative and idempotent on
// the states of the run and that each encodes, decodes and re-encodes.
func (s *foldSim) laws() error {
	states := append(slices.Clone(s.reps), s.flight...)
	join := func(a, b *Counter) *Counter {
		c := a.Clone()
		if err := c.Merge(b); err != nil {
			panic(err)
		}
		return c
	}
	for i := 0; i < 6; i++ {
		a, b, c := states[s.rng.Intn(len(states))], states[s.rng.Intn(len(states))], states[s.rng.Intn(len(states))]
		if ab, ba := join(a, b), join(b, a); !ab.Equal(ba) || ab.Value() != ba.Value() {
			return fmt.Errorf("merge not commutative")
		}
		if l, r := join(join(a, b), c), join(a, join(b, c)); !l.Equal(r) || l.Value() != r.Value() {
			return fmt.Errorf("merge not associative")
		}
		if aa := join(a, a); !aa.Equal(a) || aa.Value() != a.Value() {
			return fmt.Errorf("merge not idempotent")
		}
		if !a.Leq(join(a, b)) {
			return fmt.Errorf("a state is not below its join")
		}
		enc, err := a.MarshalBinary()
		if err != nil {
			return err
		}
		d, _ := New(s.o)
		if err := d.UnmarshalBinary(enc); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		if re, _ := d.MarshalBinary(); !d.Equal(a) || d.Value() != a.Value() || string(re) != string(enc) {
			return fmt.Errorf("decoded state differs")
		}
	}
	return nil
}

// run plays steps operations, then delivers everything and checks that
// the replicas converge to every amount counted once.
func (s *foldSim) run(steps int) error {
	for i := 0; i < steps; i++ {
		if err := s.step(); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
		if i%50 == 49 {
			if err := s.laws(); err != nil {
				return fmt.Errorf("step %d: %w", i, err)
			}
		}
	}
	s.sync()
	for i, c := range s.reps {
		if c.Value() != s.want {
			return fmt.Errorf("replica %d holds %d, want %d (every amount once)", i, c.Value(), s.want)
		}
		if !c.Equal(s.reps[0]) {
			return fmt.Errorf("replica %d differs from replica 0 after every state was merged", i)
		}
	}
	return nil
}

const foldSimSteps = 400

// TestFoldSimulation: replicas that retire with a time and fold at
// different moments, merging states that race their folds, keep Merge a
// join (commutative, associative, idempotent), never change the value by
// folding, and converge to every amount counted once. 30 schedules by
// default, proptest.Scale(60) with COUNTERKIT_CASES above 1.
func TestFoldSimulation(t *testing.T) {
	testsize.SkipSequential(t)
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewSource(seed))
	folds, folded := 0, 0
	n := 30
	if proptest.Scale(1) > 1 { // COUNTERKIT_CASES above 1
		n = proptest.Scale(60)
	}
	for i := 0; i < n; i++ {
		s := newFoldSim(rng.Int63())
		require.NoError(t, s.run(foldSimSteps), "schedule %d", i)
		folds, folded = folds+s.folds, folded+s.folded
	}
	t.Logf("%d folds took out %d retired entries", folds, folded)
	require.Positive(t, folded, "the schedules fold retired entries")
}

// expectFoldCaught runs fold simulations until one fails.
func expectFoldCaught(t *testing.T, what string) {
	t.Helper()
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewSource(seed))
	n := proptest.Scale(600) // the later-retirement variant shows in about 1 schedule in 35
	for i := 0; i < n; i++ {
		if err := newFoldSim(rng.Int63()).run(foldSimSteps); err != nil {
			t.Logf("caught after %d schedules, as expected: %v", i+1, err)
			return
		}
	}
	t.Fatalf("%d schedules never caught %s", n, what)
}

// encodeV4 returns a tpncounter encoding (debit half empty) of the given
// version whose credit half is the fields of each element written as they
// are: a []any is an empty array, a []byte a raw msgpack value.
func encodeV4(t testing.TB, version uint64, elems ...[]any) []byte {
	t.Helper()
	e := wire.NewEncoder(crdt.TagTPNCounter, version)
	e.ArrayLen(2)
	e.ArrayLen(len(elems))
	for _, el := range elems {
		e.ArrayLen(len(el))
		for _, f := range el {
			switch v := f.(type) {
			case string:
				e.String(v)
			case int64:
				e.Int(v)
			case int:
				e.Int(int64(v))
			case []any:
				e.ArrayLen(0) // an empty list
			case []byte:
				e.Raw(v) // a value written by hand
			}
		}
	}
	e.ArrayLen(0)
	b, err := e.Bytes()
	require.NoError(t, err)
	return b
}

const sec = int64(time.Second)

// foldFixture: a, b, c each credited; a retired at 1 s, b at 3 s, c live.
func foldFixture(t *testing.T) *Counter {
	t.Helper()
	c := newT(t, Options{})
	for i, a := range []crdt.ActorID{"a", "b", "c"} {
		_, err := c.Apply(a, crdt.TxnID(fmt.Sprint("t", i)), int64(10*(i+1)))
		require.NoError(t, err)
	}
	for _, r := range []struct {
		a  crdt.ActorID
		at int64
	}{{"a", 1}, {"b", 3}} {
		ok, err := c.RetireAllAt(at(r.at), r.a)
		require.NoError(t, err)
		require.True(t, ok)
	}
	return c
}

func TestFold(t *testing.T) {
	t.Run("takes out what retired before the cutoff, keeps the value", func(t *testing.T) {
		c := foldFixture(t)
		require.Equal(t, 0, c.Fold(at(1)), "retired at the cutoff: not before it")
		require.Equal(t, 1, c.Fold(at(2)))
		require.Equal(t, int64(60), c.Value())
		p, n := c.Bases()
		require.Equal(t, Base{Cutoff: at(2).UTC(), Total: 10}, p)
		require.Equal(t, Base{}, n)
		require.Equal(t, Stats{Actors: 1, Retired: 1, Transactions: 1, History: 1}, c.Stats())
		require.Equal(t, 0, c.Fold(at(2)), "nothing more: unchanged")
		require.Equal(t, 1, c.Fold(at(9)))
		p, _ = c.Bases()
		require.Equal(t, Base{Cutoff: at(9).UTC(), Total: 30}, p)
		require.Equal(t, int64(60), c.Value())
	})
	t.Run("an entry retired without a time is never folded, and stays version 3", func(t *testing.T) {
		c := newT(t, Options{})
		_, err := c.Apply("a", "t", 5)
		require.NoError(t, err)
		_, err = c.Retire("a")
		require.NoError(t, err)
		b := must(c.MarshalBinary())
		require.Equal(t, byte(3), b[len("\x93\xaatpncounter")])
		require.Equal(t, 0, c.Fold(at(1<<40)))
		require.Equal(t, b, must(c.MarshalBinary()))
	})
	t.Run("a version 3 encoding decodes to the same value and folds nothing", func(t *testing.T) {
		v3 := encodeEntries(t, crdt.TagTPNCounter, tEntry{actor: "a", seq: 3, total: 7, retired: true}, tEntry{actor: "b", seq: 1, total: 0, history: []Txn{{"x", 5}}})
		c := newT(t, Options{})
		require.NoError(t, c.UnmarshalBinary(v3))
		require.Equal(t, int64(12), c.Value())
		require.Equal(t, 0, c.Fold(at(1<<40)))
		require.Equal(t, v3, must(c.MarshalBinary()))
	})
	t.Run("version 4 round trip, byte for byte", func(t *testing.T) {
		c := foldFixture(t)
		b := must(c.MarshalBinary())
		require.Equal(t, byte(4), b[len("\x93\xaatpncounter")], "a retirement time needs version 4")
		c.Fold(at(2))
		b = must(c.MarshalBinary())
		d := newT(t, Options{})
		require.NoError(t, d.UnmarshalBinary(b))
		require.True(t, d.Equal(c))
		require.Equal(t, c.Value(), d.Value())
		require.Equal(t, b, must(d.MarshalBinary()))
		e, _ := d.Positive().Entry("b")
		require.Equal(t, at(3).UTC(), e.RetiredAt)
	})
	t.Run("a retirement before the base's cutoff is written at the cutoff", func(t *testing.T) {
		c := foldFixture(t)
		c.Fold(at(9))
		_, err := c.Apply("d", "t9", 1)
		require.NoError(t, err)
		_, err = c.RetireAllAt(at(5), "d") // a clock behind the folding one
		require.NoError(t, err)
		e, _ := c.Positive().Entry("d")
		require.Equal(t, at(9).UTC(), e.RetiredAt)
		d := newT(t, Options{})
		require.NoError(t, d.UnmarshalBinary(must(c.MarshalBinary())))
	})
	t.Run("RetireAllAt refuses a time outside 1970..MaxForgot", func(t *testing.T) {
		c := foldFixture(t)
		for _, bad := range []time.Time{{}, time.Unix(0, 0), MaxForgot.Add(time.Nanosecond)} {
			_, err := c.RetireAllAt(bad, "c")
			require.ErrorIs(t, err, crdt.ErrInvalidConfig)
		}
		e, _ := c.Positive().Entry("c")
		require.False(t, e.Retired)
	})
}

func TestFoldMerge(t *testing.T) {
	t.Run("the later cutoff wins and drops what it holds, in either order", func(t *testing.T) {
		a := foldFixture(t)
		b := a.Clone()
		require.Equal(t, 2, b.Fold(at(4)))
		a.Fold(at(2)) // takes a only; b stays retired
		for _, pair := range [][2]*Counter{{a.Clone(), b}, {b.Clone(), a}} {
			require.NoError(t, pair[0].Merge(pair[1]))
			require.True(t, pair[0].Equal(b))
			require.Equal(t, int64(60), pair[0].Value())
			require.Equal(t, Stats{Actors: 1, Transactions: 1, History: 1}, pair[0].Stats())
		}
	})
	t.Run("a state that did not fold meets one that did", func(t *testing.T) {
		a := foldFixture(t)
		b := a.Clone()
		b.Fold(at(4))
		require.NoError(t, a.Merge(b))
		require.True(t, a.Equal(b))
		require.Equal(t, int64(60), a.Value())
		// And through the encoding.
		a = foldFixture(t)
		require.NoError(t, a.MergeBinary(must(b.MarshalBinary())))
		require.True(t, a.Equal(b))
		require.Equal(t, int64(60), a.Value())
	})
	t.Run("equal cutoffs: the larger total wins, then the later forgot", func(t *testing.T) {
		x := newT(t, Options{})
		require.NoError(t, x.UnmarshalBinary(encodeV4(t, 4, []any{2 * sec, 10, 0})))
		y := newT(t, Options{})
		require.NoError(t, y.UnmarshalBinary(encodeV4(t, 4, []any{2 * sec, 11, 0})))
		z := newT(t, Options{})
		require.NoError(t, z.UnmarshalBinary(encodeV4(t, 4, []any{2 * sec, 11, 5})))
		for _, pair := range [][2]*Counter{{x, y}, {y, x}} {
			m := pair[0].Clone()
			require.NoError(t, m.Merge(pair[1]))
			require.Equal(t, int64(11), m.Value())
		}
		for _, pair := range [][2]*Counter{{y, z}, {z, y}} {
			m := pair[0].Clone()
			require.NoError(t, m.Merge(pair[1]))
			p, _ := m.Bases()
			require.Equal(t, time.Unix(0, 5).UTC(), p.Forgot)
		}
	})
	t.Run("two retirements of one entry: the earlier wins, an unknown time loses", func(t *testing.T) {
		a := newT(t, Options{})
		_, err := a.Apply("x", "t", 1)
		require.NoError(t, err)
		b, c, d := a.Clone(), a.Clone(), a.Clone()
		_, err = a.RetireAllAt(at(5), "x")
		require.NoError(t, err)
		_, err = b.RetireAllAt(at(3), "x")
		require.NoError(t, err)
		_, err = c.Retire("x")
		require.NoError(t, err)
		for _, pair := range [][2]*Counter{{a, b}, {b, a}, {c, a}, {a, c}} {
			m := pair[0].Clone()
			require.NoError(t, m.Merge(pair[1]))
			e, _ := m.Positive().Entry("x")
			want := map[*Counter]time.Time{a: at(5).UTC(), b: at(3).UTC()}
			w := want[pair[0]]
			if o, ok := want[pair[1]]; ok && (w.IsZero() || o.Before(w)) {
				w = o
			}
			require.Equal(t, w, e.RetiredAt)
		}
		_ = d
	})
	t.Run("past int64, Fold folds and the base's total passes it too", func(t *testing.T) {
		b := newT(t, Options{})
		require.NoError(t, b.UnmarshalBinary(encodeV4(t, 4, []any{2 * sec, 10, 0}, []any{"y", 1, 1, 0, 3 * sec})))
		for _, zRetired := range []bool{false, true} {
			z := []any{"z", 1, math.MaxInt64 - 5, 0, []any{}, []any{}}
			if zRetired {
				z = []any{"z", 1, math.MaxInt64 - 5, 0, 3 * sec}
			}
			a := newT(t, Options{})
			v := uint64(2) // a live entry
			if zRetired {
				v = 4 // a retirement time
			}
			require.NoError(t, a.UnmarshalBinary(encodeV4(t, v, z)))
			require.NoError(t, a.Merge(b))
			require.Equal(t, "9223372036854775813", a.BigValue().String())
			require.Equal(t, int64(math.MaxInt64), a.Value())
			if zRetired {
				require.Equal(t, 2, a.Fold(time.Unix(0, 4*sec)), "y and z fold, the base past int64")
				pb, _ := a.Bases()
				require.Equal(t, int64(math.MaxInt64), pb.Total, "clamped")
				require.Equal(t, "9223372036854775813", pb.BigTotal().String())
			} else {
				require.Equal(t, 1, a.Fold(time.Unix(0, 4*sec)), "y folds")
				pb, _ := a.Bases()
				require.Equal(t, int64(11), pb.Total)
				require.Equal(t, "11", pb.BigTotal().String())
			}
			require.Equal(t, "9223372036854775813", a.BigValue().String())
			roundTripBytes(t, a)
		}
	})
}

// roundTripBytes checks that c decodes to an equal state with its value,
// bases and horizon, which encodes to the same bytes.
func roundTripBytes(t *testing.T, c *Counter) {
	t.Helper()
	b := must(c.MarshalBinary())
	d := newT(t, c.Options())
	require.NoError(t, d.UnmarshalBinary(b))
	require.True(t, d.Equal(c))
	require.Equal(t, c.BigValue(), d.BigValue())
	p, n := c.Bases()
	dp, dn := d.Bases()
	require.Equal(t, [2]Base{p, n}, [2]Base{dp, dn})
	require.Equal(t, c.Horizon(), d.Horizon())
	require.Equal(t, b, must(d.MarshalBinary()))
}

// TestFoldPastInt64: a base's total is the half's lifetime credits or
// debits, which may pass int64 while the value is 0. Here 12 processes
// each credit 2^61 and debit it back (value 0), one retired every three
// days; a fold 33 days after the last takes all of them, both bases
// holding 12 × 2^61 = 3 × 2^63 exactly, and the state round-trips byte
// for byte. Fold used to stop at the base that
// would pass int64, after 3, and keep the 9 others for ever.
func TestFoldPastInt64(t *testing.T) {
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const amount = int64(1) << 61
	c := newT(t, Options{})
	for i := range 12 {
		a := crdt.ActorID(fmt.Sprintf("process-%02d", i))
		_, err := c.Apply(a, crdt.TxnID(fmt.Sprintf("in-%d", i)), amount)
		require.NoError(t, err)
		_, err = c.Apply(a, crdt.TxnID(fmt.Sprintf("out-%d", i)), -amount)
		require.NoError(t, err)
		ok, err := c.RetireAllAt(day.Add(time.Duration(3*i)*24*time.Hour), a)
		require.NoError(t, err)
		require.True(t, ok)
	}
	before := c.Clone()
	require.Equal(t, 24, c.Fold(day.Add(66*24*time.Hour)), "every retired entry, in both halves")
	require.Equal(t, Stats{}, c.Stats())
	require.Equal(t, int64(0), c.Value())
	require.Equal(t, "0", c.BigValue().String())
	want := new(big.Int).Mul(big.NewInt(12), big.NewInt(amount))
	p, n := c.Bases()
	for _, b := range []Base{p, n} {
		require.Equal(t, want, b.BigTotal())
		require.Equal(t, int64(math.MaxInt64), b.Total)
		require.Equal(t, day.Add(66*24*time.Hour), b.Cutoff)
	}
	roundTripBytes(t, c)

	// A state that did not fold takes the bases, and the base totals add
	// past int64 fold after fold.
	require.NoError(t, before.MergeBinary(must(c.MarshalBinary())))
	require.True(t, before.Equal(c))
	_, err := c.Apply("process-12", "in-12", amount)
	require.NoError(t, err)
	_, err = c.RetireAllAt(day.Add(70*24*time.Hour), "process-12")
	require.NoError(t, err)
	require.Equal(t, 1, c.Fold(day.Add(80*24*time.Hour)))
	p, _ = c.Bases()
	require.Equal(t, want.Add(want, big.NewInt(amount)), p.BigTotal())
	require.Equal(t, fmt.Sprint(amount), c.BigValue().String())
	roundTripBytes(t, c)
	require.Equal(t, "7", Base{Total: 7}.BigTotal().String(), "a Base built by hand")
}

// TestFoldStopsBelow2To126: a fold that would take the base's total to
// 2^126 folds nothing (SPEC.md 6.10); one that stays below it folds.
func TestFoldStopsBelow2To126(t *testing.T) {
	top := below2To126()
	topBin := wideTotal(top)
	for _, tc := range []struct {
		total int64
		folds int
	}{{0, 1}, {1, 0}} {
		c := newT(t, Options{})
		require.NoError(t, c.UnmarshalBinary(encodeV4(t, 4, []any{sec, topBin, 0}, []any{"a", 1, tc.total, 0, 2 * sec})))
		before := must(c.MarshalBinary())
		require.Equal(t, tc.folds, c.Fold(at(3)), "retired total %d", tc.total)
		p, _ := c.Bases()
		require.Equal(t, top.Big(), p.BigTotal())
		if tc.folds == 0 {
			require.Equal(t, before, must(c.MarshalBinary()), "unchanged")
		}
		roundTripBytes(t, c)
	}
}

// int128 is the sum of terms.
func int128(terms ...int64) exact.Int128 {
	var a exact.Int128
	for _, v := range terms {
		a.Add(v)
	}
	return a
}

// below2To126 is the largest base total, 2^126 - 1.
func below2To126() exact.Int128 {
	v := maxBaseTotal
	v.Sub(1)
	return v
}

// wideTotal is the encoding of a base total past int64 (a raw encodeV4 field).
func wideTotal(v exact.Int128) []byte {
	b := v.Bytes()
	return append([]byte{0xc4, 16}, b[:]...)
}

// TestFoldMergePastInt64IsOrderFree: bases whose totals pass int64 and
// differ only beyond it are ordered by the exact total, so Merge picks
// the same one in either order, and MergeBinary with it.
func TestFoldMergePastInt64IsOrderFree(t *testing.T) {
	x, y := int128(math.MaxInt64, 2), int128(math.MaxInt64, 3) // 2^63 + 1, 2^63 + 2
	states := map[string][]byte{
		"2^63+1":         encodeV4(t, 4, []any{2 * sec, wideTotal(x), 0}),
		"2^63+2":         encodeV4(t, 4, []any{2 * sec, wideTotal(y), 0}),
		"2^63+1, forgot": encodeV4(t, 4, []any{2 * sec, wideTotal(x), 7}),
		"later cutoff":   encodeV4(t, 4, []any{3 * sec, 5, 0}),
	}
	names := slices.Sorted(maps.Keys(states))
	for _, i := range names {
		for _, j := range names {
			ab, ba := newT(t, Options{}), newT(t, Options{})
			require.NoError(t, ab.UnmarshalBinary(states[i]))
			require.NoError(t, ba.UnmarshalBinary(states[j]))
			viaBin := ab.Clone()
			require.NoError(t, ab.Merge(decoded(t, states[j])))
			require.NoError(t, ba.Merge(decoded(t, states[i])))
			require.NoError(t, viaBin.MergeBinary(states[j]))
			require.True(t, ab.Equal(ba), "%s with %s", i, j)
			require.True(t, ab.Equal(viaBin), "%s with %s, MergeBinary", i, j)
			require.Equal(t, must(ab.MarshalBinary()), must(ba.MarshalBinary()))
			require.Equal(t, ab.BigValue(), ba.BigValue())
		}
	}
	m := decoded(t, states["2^63+1"])
	require.NoError(t, m.Merge(decoded(t, states["2^63+2"])))
	require.Equal(t, y.Big(), m.BigValue(), "equal cutoffs: the larger total wins")
}

func decoded(t *testing.T, b []byte) *Counter {
	t.Helper()
	c := newT(t, Options{})
	require.NoError(t, c.UnmarshalBinary(b))
	return c
}

// TestFoldDecodeRefuses: every encoding no writer produces is refused with
// an error wrapping crdt.ErrCorruptEncoding, and the receiver is unchanged.
func TestFoldDecodeRefuses(t *testing.T) {
	live := []any{"z", 1, 1, 0, []any{}, []any{}}
	for _, tc := range []struct {
		name string
		b    []byte
		inv  string
	}{
		{"a base in version 3", encodeV4(t, 3, []any{2 * sec, 1, 0}), ""},
		{"a timed retired entry in version 3", encodeV4(t, 3, []any{"a", 1, 1, 0, sec}), ""},
		{"a base of cutoff 0", encodeV4(t, 4, []any{0, 1, 0}), InvBaseCutoff},
		{"a base cutoff after MaxForgot", encodeV4(t, 4, []any{maxForgotNanos + 1, 1, 0}), InvBaseCutoff},
		{"a base forgot after MaxForgot", encodeV4(t, 4, []any{sec, 1, maxForgotNanos + 1}), InvForgotWithinTxnTimes},
		{"a negative base total", encodeV4(t, 4, []any{sec, -1, 0}), ""},
		{"a base total that fits in int64 in 16 bytes", encodeV4(t, 4, []any{sec, wideTotal(int128(5)), 0}), ""},
		{"2^63-1 in 16 bytes", encodeV4(t, 4, []any{sec, wideTotal(int128(math.MaxInt64)), 0}), ""},
		{"a base total of 15 bytes", encodeV4(t, 4, []any{sec, append([]byte{0xc4, 15, 1}, make([]byte, 14)...), 0}), ""},
		{"a base total of 17 bytes", encodeV4(t, 4, []any{sec, append([]byte{0xc4, 17, 0, 1}, make([]byte, 15)...), 0}), ""},
		{"a base total of 16 bytes in a bin 16", encodeV4(t, 4, []any{sec, append([]byte{0xc5, 0, 16, 1}, make([]byte, 15)...), 0}), ""},
		{"a negative base total in 16 bytes", encodeV4(t, 4, []any{sec, wideTotal(int128(math.MinInt64, -1)), 0}), ""},
		{"a base total of 2^126", encodeV4(t, 4, []any{sec, wideTotal(maxBaseTotal), 0}), InvBaseTotal},
		{"a base total of 2^127-1", encodeV4(t, 4, []any{sec, wideTotal(exact.FromBytes([16]byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})), 0}), InvBaseTotal},
		{"a base after an entry", encodeV4(t, 4, live, []any{sec, 1, 0}), ""},
		{"two bases", encodeV4(t, 4, []any{sec, 1, 0}, []any{2 * sec, 1, 0}), ""},
		{"a retirement time of 0", encodeV4(t, 4, []any{"a", 1, 1, 0, 0}), InvRetiredAfterCutoff},
		{"a retirement time after MaxForgot", encodeV4(t, 4, []any{"a", 1, 1, 0, maxForgotNanos + 1}), InvRetiredAfterCutoff},
		{"a retirement before the base's cutoff", encodeV4(t, 4, []any{2 * sec, 1, 0}, []any{"a", 1, 1, 0, sec}), InvRetiredAfterCutoff},
		{"a version 5", encodeV4(t, 5, live), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := foldFixture(t)
			before := must(c.MarshalBinary())
			err := c.UnmarshalBinary(tc.b)
			require.Error(t, err)
			if tc.name == "a version 5" {
				require.ErrorIs(t, err, crdt.ErrUnsupportedVersion)
			} else {
				require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
			}
			if tc.inv != "" {
				var ie *InvariantError
				require.ErrorAs(t, err, &ie)
				require.Equal(t, tc.inv, ie.Invariant)
			}
			require.Error(t, c.MergeBinary(tc.b))
			require.Equal(t, before, must(c.MarshalBinary()), "unchanged")
			_, herr := EncodedHorizon(tc.b)
			_ = herr // reads the layout only; must not crash
		})
	}
	// The valid shapes next to them decode.
	for _, b := range [][]byte{
		encodeV4(t, 4, []any{sec, 1, 0}, live),
		encodeV4(t, 4, []any{sec, math.MaxInt64, 0}, live),
		encodeV4(t, 4, []any{sec, wideTotal(int128(math.MaxInt64, 1)), 0}, live),
		encodeV4(t, 4, []any{sec, wideTotal(below2To126()), 0}, live),
		encodeV4(t, 4, []any{sec, 1, 0}, []any{"a", 1, 1, 0, sec}),
		encodeV4(t, 4, []any{"a", 1, 1, 0, sec}, []any{"b", 1, 1, 0}),
	} {
		c := newT(t, Options{})
		require.NoError(t, c.UnmarshalBinary(b))
		require.Equal(t, b, must(c.MarshalBinary()))
	}
}

// TestEncodedHorizonSeesTheBase: the base's forgot is part of the horizon.
func TestEncodedHorizonSeesTheBase(t *testing.T) {
	b := encodeV4(t, 4, []any{2 * sec, 1, 7 * sec})
	h, err := EncodedHorizon(b)
	require.NoError(t, err)
	require.Equal(t, at(7).UTC(), h)
	c := newT(t, Options{})
	require.NoError(t, c.UnmarshalBinary(b))
	require.Equal(t, at(7).UTC(), c.Horizon())
}

// TestMergeOfAFoldPastAnUnseenRetirement: a state that folded past a
// retirement it had not received (against the grace-period assumption,
// SPEC.md 6.10) still holds the actor's live entry; the other state's
// retired entry of the same seq replaces it and the kept base drops it, so
// the merge counts it no more and is not above the first state, and
// merging that state again brings the entry back: Merge is a join only
// among states that keep the assumption.
func TestMergeOfAFoldPastAnUnseenRetirement(t *testing.T) {
	x, err := New(Options{})
	require.NoError(t, err)
	_, err = x.Apply("a", "t1", 5)
	require.NoError(t, err)
	y := x.Clone()
	ok, err := y.RetireAllAt(time.Unix(10, 0), "a")
	require.NoError(t, err)
	require.True(t, ok)
	_, err = x.Apply("z", "t2", 7)
	require.NoError(t, err)
	ok, err = x.RetireAllAt(time.Unix(20, 0), "z")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 1, x.Fold(time.Unix(30, 0)), "z folds; a's retirement at 10 s is not in x")
	require.Equal(t, int64(12), x.Value())

	xy := x.Clone()
	require.NoError(t, xy.Merge(y))
	require.Equal(t, int64(7), xy.Value(), "a's 5 is counted by neither the base nor an entry")
	require.False(t, x.Leq(xy))
	require.True(t, y.Leq(xy))
	again := xy.Clone()
	require.NoError(t, again.Merge(x))
	require.Equal(t, int64(12), again.Value())
	require.False(t, again.Equal(xy), "(x ⊔ x) ⊔ y differs from x ⊔ (x ⊔ y)")
}

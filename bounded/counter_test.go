package bounded

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/rand"
	"strings"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
)

func mustNew(t testing.TB, o Options) *Counter {
	t.Helper()
	c, err := New(o)
	require.NoError(t, err)
	return c
}

func encode(t testing.TB, c *Counter) []byte {
	t.Helper()
	b, err := c.MarshalBinary()
	require.NoError(t, err)
	return b
}

func TestRefusedDebitChangesNothing(t *testing.T) {
	c := mustNew(t, Options{})
	_, err := c.Apply("a", "c1", 10)
	require.NoError(t, err)
	before := encode(t, c)
	_, err = c.Apply("a", "d1", -11)
	var short *InsufficientRightsError
	require.ErrorIs(t, err, crdt.ErrInsufficientRights)
	require.ErrorAs(t, err, &short)
	require.Equal(t, int64(10), short.Available)
	require.Contains(t, err.Error(), `actor "a" may debit 10 now, not 11`)
	require.Equal(t, before, encode(t, c))
	_, err = c.Apply("b", "d2", -1) // b holds nothing
	require.ErrorIs(t, err, crdt.ErrInsufficientRights)
	require.ErrorIs(t, c.Transfer("b", "a", 1), crdt.ErrInsufficientRights)
	require.Equal(t, before, encode(t, c))

	out, err := c.Apply("a", "d1", -10)
	require.NoError(t, err)
	require.Equal(t, Applied, out)
	require.Equal(t, int64(0), c.Value())
	out, err = c.Apply("b", "d1", -10) // a retry on another actor
	require.NoError(t, err)
	require.Equal(t, Duplicate, out)
	_, err = c.Apply("b", "d1", -9)
	require.ErrorIs(t, err, crdt.ErrConflictingTransaction)
}

func TestTransferAndRequest(t *testing.T) {
	c := mustNew(t, Options{})
	_, err := c.Apply("a", "c1", 10)
	require.NoError(t, err)
	changed, err := c.Request("b", 4)
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, []Ask{{"b", 4}}, c.Requests())
	changed, err = c.Request("b", 3) // less than outstanding: nothing
	require.NoError(t, err)
	require.False(t, changed)
	require.NoError(t, c.Transfer("a", "b", 3))
	require.Equal(t, int64(1), c.Outstanding("b"))
	require.Equal(t, int64(7), c.Rights("a"))
	require.Equal(t, int64(3), c.Rights("b"))
	require.Equal(t, int64(3), c.Sent("a", "b"))
	require.Zero(t, c.Sent("z", "b"), "an actor with no entry sent nothing")
	require.Equal(t, int64(3), c.Received("b"))
	require.NoError(t, c.Transfer("a", "b", 1))
	require.Empty(t, c.Requests())
	_, _ = c.Request("b", 6)
	require.Equal(t, int64(6), c.Outstanding("b"))
	changed, err = c.Withdraw("b")
	require.NoError(t, err)
	require.True(t, changed)
	require.Zero(t, c.Outstanding("b"))
	changed, err = c.Withdraw("b")
	require.NoError(t, err)
	require.False(t, changed)
	require.ErrorIs(t, c.Transfer("a", "a", 1), crdt.ErrInvalidActor)
	require.ErrorIs(t, c.Transfer("a", "b", 0), crdt.ErrInvalidAmount)
	require.Equal(t, int64(10), c.Value(), "transfers move rights, not value")
}

func TestNegativeBound(t *testing.T) {
	_, err := New(Options{Bound: -5})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	_, err = New(Options{Bound: 5, Origin: "o"})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	_, err = New(Options{Origin: "o"})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	_, err = New(Options{Bound: math.MinInt64, Origin: "o"})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	c := mustNew(t, Options{Bound: -50, Origin: "bank"})
	require.Equal(t, int64(50), c.Rights("bank"))
	_, err = c.Apply("bank", "d", -50)
	require.NoError(t, err)
	require.Equal(t, int64(-50), c.Value())
	_, err = c.Apply("bank", "d2", -1)
	require.ErrorIs(t, err, crdt.ErrInsufficientRights)
	other := mustNew(t, Options{})
	require.ErrorIs(t, other.Merge(c), crdt.ErrInvalidConfig)
	d, err := Decode(encode(t, c), 0)
	require.NoError(t, err)
	require.True(t, d.Equal(c))
	_, err = Open(memory.NewSiblings(), "k", AccountOptions{Actor: "a", Counter: Options{Bound: -50, Origin: "bank"}})
	require.ErrorContains(t, err, "needs Bound 0")
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
}

func TestRetract(t *testing.T) {
	c := mustNew(t, Options{})
	_, _ = c.Apply("a", "c1", 10)
	_, _ = c.Apply("a", "d1", -8)
	_, err := c.Retract("a", "c1")
	require.ErrorIs(t, err, crdt.ErrInsufficientRights, "the credit's rights are spent")
	ok, err := c.Retract("a", "d1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(10), c.Value())
	ok, err = c.Retract("a", "c1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(0), c.Value())
	ok, err = c.Retract("a", "c1")
	require.NoError(t, err)
	require.False(t, ok)
}

// TestDoubled: a credit applied by two actors that did not see each other
// is listed until the larger holder takes its copy back; one whose rights
// the larger holder spent stays listed (counted twice).
func TestDoubled(t *testing.T) {
	var nilc *Counter
	require.Empty(t, nilc.Doubled())
	a, b := mustNew(t, Options{}), mustNew(t, Options{})
	_, err := a.Apply("a", "x", 5)
	require.NoError(t, err)
	_, err = b.Apply("b", "x", 5)
	require.NoError(t, err)
	_, err = b.Apply("b", "y", 3)
	require.NoError(t, err)
	require.Empty(t, a.Doubled())
	require.NoError(t, a.Merge(b))
	require.Equal(t, []crdt.TxnID{"x"}, a.Doubled())
	require.Equal(t, int64(13), a.Value(), "both copies count")
	ok, err := a.Retract("b", "x")
	require.NoError(t, err)
	require.True(t, ok)
	require.Empty(t, a.Doubled())
	require.Equal(t, int64(8), a.Value())

	c, d := mustNew(t, Options{}), mustNew(t, Options{})
	_, err = c.Apply("a", "x", 5)
	require.NoError(t, err)
	_, err = d.Apply("b", "x", 5)
	require.NoError(t, err)
	_, err = d.Apply("b", "spend", -5)
	require.NoError(t, err)
	require.NoError(t, c.Merge(d))
	_, err = c.Retract("b", "x")
	require.ErrorIs(t, err, crdt.ErrInsufficientRights)
	require.Equal(t, []crdt.TxnID{"x"}, c.Doubled(), "counted twice for good")
}

func TestWindow(t *testing.T) {
	c := mustNew(t, Options{Window: 2})
	_, _ = c.Apply("a", "x", 5)
	_, _ = c.Apply("a", "y", 1)
	out, _ := c.Apply("b", "x", 5)
	require.Equal(t, Duplicate, out, "inside the window")
	_, _ = c.Apply("a", "z", 1)
	out, _ = c.Apply("b", "x", 5)
	require.Equal(t, Applied, out, "outside the window a retry counts again")
	require.Equal(t, int64(12), c.Value())
}

func TestOverflow(t *testing.T) {
	c := mustNew(t, Options{})
	_, err := c.Apply("a", "c1", math.MaxInt64)
	require.NoError(t, err)
	before := encode(t, c)
	_, err = c.Apply("b", "c2", 1)
	require.ErrorIs(t, err, crdt.ErrOverflow, "the value would not fit")
	require.Equal(t, before, encode(t, c))
	_, err = c.Apply("a", "c3", 1)
	require.ErrorIs(t, err, crdt.ErrOverflow)
	_, err = c.Apply("a", "c4", math.MinInt64)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)

	// With a negative bound, rights can exceed the value: a transfer that
	// would take one actor's rights past int64 is refused.
	e := mustNew(t, Options{Bound: -10, Origin: "o"})
	_, err = e.Apply("a", "c1", math.MaxInt64)
	require.NoError(t, err)
	require.ErrorIs(t, e.Transfer("o", "a", 10), crdt.ErrOverflow)
	require.Equal(t, int64(10), e.Rights("o"), "unchanged")

	// A second transfer to a recipient the giver already gave to is
	// checked too: b has received 2^63−1 from a and o together, and one
	// more from o would take what b received past int64.
	g := mustNew(t, Options{Bound: -10, Origin: "o"})
	_, err = g.Apply("a", "c1", math.MaxInt64)
	require.NoError(t, err)
	require.NoError(t, g.Transfer("a", "b", math.MaxInt64-1))
	require.NoError(t, g.Transfer("o", "b", 1))
	before = encode(t, g)
	require.ErrorIs(t, g.Transfer("o", "b", 1), crdt.ErrOverflow)
	require.Equal(t, before, encode(t, g), "unchanged")
	require.Equal(t, int64(math.MaxInt64), g.Rights("b"))
}

func TestCodecRoundTrip(t *testing.T) {
	c := mustNew(t, Options{Bound: -3, Origin: "o"})
	_, _ = c.Apply("a", "c1", 10)
	_, _ = c.Apply("a", "d1", -4)
	_ = c.Transfer("a", "b", 2)
	_ = c.Transfer("o", "b", 1)
	_, _ = c.Request("b", 5)
	b := encode(t, c)
	require.Equal(t, b, encode(t, c.Clone()), "deterministic")
	d := &Counter{}
	require.NoError(t, d.UnmarshalBinary(b))
	require.True(t, d.Equal(c))
	require.Equal(t, b, encode(t, d))
	require.Equal(t, c.Value(), d.Value())
	for _, a := range []crdt.ActorID{"a", "b", "o"} {
		require.Equal(t, c.Rights(a), d.Rights(a))
	}
	// Truncations and single-byte changes never panic and never decode
	// to something that encodes differently.
	for i := range b {
		if err := d.UnmarshalBinary(b[:i]); err == nil {
			t.Fatalf("truncated to %d bytes decoded", i)
		} else {
			require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
		}
		for _, x := range []byte{0x00, 0x01, 0x7f, 0x90, 0xa0, 0xc0, 0xff} {
			m := bytes.Clone(b)
			m[i] = x
			if got, err := Decode(m, 0); err == nil {
				require.Equal(t, m, encode(t, got), "non-canonical bytes accepted")
			}
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		hex  string
		want error
	}{
		"not an envelope":     {"c0", crdt.ErrCorruptEncoding},
		"other tag":           {"93a970636f756e74657201c0", crdt.ErrTypeMismatch},
		"newer version":       {"93a7626f756e64656402c0", crdt.ErrUnsupportedVersion},
		"positive bound":      {"93a7626f756e6465640193" + "01" + "a0" + "90", crdt.ErrCorruptEncoding},
		"bound no origin":     {"93a7626f756e6465640193" + "ff" + "a0" + "90", crdt.ErrCorruptEncoding},
		"seq zero":            {"93a7626f756e6465640193" + "00a0" + "91" + "97a161" + "00" + "000000" + "9090", crdt.ErrCorruptEncoding},
		"gives itself":        {"93a7626f756e6465640193" + "00a0" + "91" + "97a161" + "01" + "050000" + "91" + "92a16101" + "90", crdt.ErrCorruptEncoding},
		"recent over total":   {"93a7626f756e6465640193" + "00a0" + "91" + "97a161" + "01" + "010000" + "90" + "91" + "92a17805", crdt.ErrCorruptEncoding},
		"trailing byte":       {"93a7626f756e6465640193" + "00a0" + "90" + "00", crdt.ErrCorruptEncoding},
		"actors out of order": {"93a7626f756e6465640193" + "00a0" + "92" + "97a162" + "01" + "010000" + "9090" + "97a161" + "01" + "010000" + "9090", crdt.ErrCorruptEncoding},
	} {
		t.Run(name, func(t *testing.T) {
			b := mustHex(t, tc.hex)
			_, err := Decode(b, 0)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	var b []byte
	_, err := fmt.Sscanf(s, "%x", &b)
	require.NoError(t, err)
	return b
}

// FuzzDecode: decoding never panics; what decodes re-encodes to the same
// bytes (the canonical form is unique) and merges with itself unchanged.
func FuzzDecode(f *testing.F) {
	c := mustNew(f, Options{Bound: -3, Origin: "o"})
	_, _ = c.Apply("a", "c1", 10)
	_, _ = c.Apply("a", "d1", -4)
	_ = c.Transfer("a", "b", 2)
	_, _ = c.Request("b", 5)
	f.Add(encode(f, c))
	f.Add(encode(f, mustNew(f, Options{})))
	f.Add([]byte{0x93, 0xa7, 'b', 'o', 'u', 'n', 'd', 'e', 'd', 0x01, 0x93, 0x00, 0xa0, 0x90})
	base := c
	f.Fuzz(func(t *testing.T, data []byte) {
		// Merging the bytes into a counter, skipping the entries equal to
		// its own, gives what decoding and Merge give.
		viaBytes, want := base.Clone(), base.Clone()
		berr := viaBytes.mergeEncoded(data, maps.Clone(viaBytes.entries), map[crdt.ActorID]bool{})
		d, err := Decode(data, 0)
		merr := err
		if err == nil {
			merr = want.Merge(d)
		}
		if (berr == nil) != (merr == nil) || (berr == nil && !viaBytes.Equal(want)) || (berr != nil && !viaBytes.Equal(base)) {
			t.Fatalf("mergeEncoded: %v; decode and Merge: %v", berr, merr)
		}
		if err != nil {
			if !errors.Is(err, crdt.ErrCorruptEncoding) && !errors.Is(err, crdt.ErrTooLarge) &&
				!errors.Is(err, crdt.ErrTypeMismatch) && !errors.Is(err, crdt.ErrUnsupportedVersion) {
				t.Fatalf("error wraps no decoder sentinel: %v", err)
			}
			return
		}
		b, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, data) {
			t.Fatalf("decoded %x re-encodes as %x", data, b)
		}
		e := d.Clone()
		if err := e.Merge(d); err != nil || !e.Equal(d) {
			t.Fatalf("self-merge: %v", err)
		}
	})
}

// lawOp is an operation of the proptest model. Credits and debits use a
// transaction id per actor (the op's id and the actor), so that every
// accepted op changes the value exactly once; retries across actors are
// tested by the simulations.
type lawOp struct {
	Kind   int // 0 credit, 1 debit, 2 transfer, 3 request, 4 withdraw
	Txn    int
	Amount int64
	To     int
}

var errDuplicate = errors.New("duplicate")

func lawModel(bound int64) proptest.Model[*Counter, lawOp] {
	opts := Options{Bound: bound}
	if bound < 0 {
		opts.Origin = "r0"
	}
	return proptest.Model[*Counter, lawOp]{
		Name: fmt.Sprintf("bounded/bound=%d", bound),
		New:  func() *Counter { c, _ := New(opts); return c },
		GenOp: gopter.CombineGens(gen.IntRange(0, 4), gen.IntRange(0, 30), gen.Int64Range(1, 20), gen.IntRange(0, 3)).
			Map(func(v []any) lawOp { return lawOp{v[0].(int), v[1].(int), v[2].(int64), v[3].(int)} }),
		Apply: func(c *Counter, a crdt.ActorID, o lawOp) error {
			txn := crdt.TxnID(fmt.Sprintf("%s/t%d", a, o.Txn))
			switch o.Kind {
			case 0, 1:
				amt := o.Amount
				if o.Kind == 1 {
					amt = -amt
				}
				out, err := c.Apply(a, txn, amt)
				if err == nil && out == Duplicate {
					return errDuplicate
				}
				return err
			case 2:
				return c.Transfer(a, proptest.Actor(o.To), o.Amount)
			case 3:
				changed, err := c.Request(a, o.Amount)
				if err == nil && !changed {
					return errDuplicate
				}
				return err
			default:
				changed, err := c.Withdraw(a)
				if err == nil && !changed {
					return errDuplicate
				}
				return err
			}
		},
		Merge: func(dst, src *Counter) error { return dst.Merge(src) },
		Clone: (*Counter).Clone,
		Equal: func(a, b *Counter) bool { return a.Equal(b) },
		Value: func(c *Counter) any { return c.BigValue().String() },
		Expect: func(ops []lawOp) any {
			v := new(big.Int)
			for _, o := range ops {
				switch o.Kind {
				case 0:
					v.Add(v, big.NewInt(o.Amount))
				case 1:
					v.Sub(v, big.NewInt(o.Amount))
				}
			}
			return v.String()
		},
		Leq: func(a, b *Counter) bool { return a.Leq(b) },
	}
}

func TestLaws(t *testing.T) {
	testsize.SkipSequential(t)
	for _, bound := range []int64{0, -25} {
		cfg := proptest.DefaultOptions()
		cfg.Cases = proptest.Scale(300)
		proptest.CheckLaws(t, lawModel(bound), cfg)
	}
}

func TestConvergence(t *testing.T) {
	testsize.SkipSequential(t)
	for _, bound := range []int64{0, -25} {
		cfg := proptest.DefaultOptions()
		cfg.Cases = proptest.Scale(300)
		cfg.Replicas = 4
		proptest.CheckConvergence(t, lawModel(bound), cfg)
	}
}

// TestTypeSimulation runs schedules of the pure type: replicas apply
// credits, debits (on every actor), transfers and requests, and merge
// snapshots of each other, new and old, in any order. After every step,
// every replica, every snapshot and the join of all of them has a value at
// or above the bound and every actor's rights at or above zero. 3,000
// schedules by default, proptest.Scale(8000) with COUNTERKIT_CASES above 1.
func TestTypeSimulation(t *testing.T) {
	testsize.SkipSequential(t)
	seed := proptest.Seed()
	n := 3000
	if proptest.Scale(1) > 1 { // COUNTERKIT_CASES above 1
		n = proptest.Scale(8000)
	}
	t.Logf("seed %d, %d schedules; replay: %s", seed, n, proptest.Replay(t, seed))
	if f := runTypeSims(seed, n, false); f != "" {
		t.Fatalf("%s\nreplay: %s", f, proptest.Replay(t, seed))
	}
}

// TestTypeSimulationCatchesOverdraft: one actor debiting beyond its rights
// is caught.
func TestTypeSimulationCatchesOverdraft(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	f := runTypeSims(seed, 2000, true)
	if !strings.Contains(f, "below") {
		t.Fatalf("overdraft not caught: %q", f)
	}
	t.Logf("caught: %s", strings.SplitN(f, "\n", 2)[0])
}

func runTypeSims(seed int64, n int, broken bool) string {
	rng := rand.New(rand.NewSource(seed))
	for s := range n {
		sseed := rng.Int63()
		if f := typeSim(sseed, broken); f != "" {
			return fmt.Sprintf("schedule %d (seed %d): %s", s, sseed, f)
		}
	}
	return ""
}

func typeSim(seed int64, broken bool) string {
	rng := rand.New(rand.NewSource(seed))
	bound := int64(0)
	opts := Options{Window: 8}
	if rng.Intn(2) == 0 {
		bound = -int64(rng.Intn(20))
		if bound < 0 {
			opts.Bound, opts.Origin = bound, "r0"
		}
	}
	nrep := 3 + rng.Intn(2)
	reps := make([]*Counter, nrep)
	for i := range reps {
		reps[i], _ = New(opts)
	}
	var sent []*Counter
	var log []string
	check := func(c *Counter, what string) string {
		if c.Value() < bound {
			return fmt.Sprintf("%s has value %d below the bound %d", what, c.Value(), bound)
		}
		for _, a := range c.Actors() {
			if r := c.Rights(a); r < 0 {
				return fmt.Sprintf("%s: %s's rights %d below zero", what, a, r)
			}
		}
		return ""
	}
	for step := range 24 {
		i := rng.Intn(nrep)
		a, c := proptest.Actor(i), reps[i]
		txn := crdt.TxnID(fmt.Sprintf("t%d", rng.Intn(30)))
		amt := int64(1 + rng.Intn(12))
		switch k := rng.Intn(10); {
		case k < 3:
			_, err := c.Apply(a, txn, amt)
			log = append(log, fmt.Sprintf("%s credit %s %d: %v", a, txn, amt, err))
		case k < 6:
			if broken && i == 1 && rng.Intn(3) == 0 {
				err := c.overdraw(a, txn, amt)
				log = append(log, fmt.Sprintf("%s overdraws %s %d: %v", a, txn, amt, err))
			} else {
				_, err := c.Apply(a, txn, -amt)
				log = append(log, fmt.Sprintf("%s debit %s %d: %v", a, txn, amt, err))
			}
		case k < 7:
			to := proptest.Actor(rng.Intn(nrep))
			err := c.Transfer(a, to, amt)
			log = append(log, fmt.Sprintf("%s gives %s %d: %v", a, to, amt, err))
		case k < 8:
			_, _ = c.Request(a, amt)
		case k < 9:
			sent = append(sent, c.Clone())
		default:
			if len(sent) > 0 {
				j := rng.Intn(len(sent))
				if err := c.Merge(sent[j]); err != nil {
					return fmt.Sprintf("merge: %v", err)
				}
				log = append(log, fmt.Sprintf("%s merges snapshot %d", a, j))
			}
		}
		if f := check(c, fmt.Sprintf("replica %d after step %d", i, step)); f != "" {
			return f + "\n" + strings.Join(log, "\n")
		}
	}
	all, _ := New(opts)
	for _, c := range append(reps, sent...) {
		if err := all.Merge(c); err != nil {
			return fmt.Sprintf("merge: %v", err)
		}
	}
	if f := check(all, "the join of every state"); f != "" {
		return f + "\n" + strings.Join(log, "\n")
	}
	return ""
}

// TestMergeEncoded: merging an encoding without decoding the entries equal
// to the receiver's gives what decoding and Merge give, on valid and
// damaged inputs, and cached entry encodings equal fresh ones.
func TestMergeEncoded(t *testing.T) {
	testsize.SkipSequential(t)
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewSource(seed))
	for range proptest.Scale(300) {
		a, b := mustNew(t, Options{}), mustNew(t, Options{})
		for k := range 12 {
			c := a
			if rng.Intn(2) == 0 {
				c = b
			}
			actor := proptest.Actor(rng.Intn(3))
			_, _ = c.Apply(actor, crdt.TxnID(fmt.Sprintf("t%d", rng.Intn(20))), int64(rng.Intn(21)-10))
			if k%4 == 0 {
				_ = b.Merge(a)
			}
		}
		data := encode(t, b)
		for _, e := range a.entries {
			require.Equal(t, encodeEntry(crdt.ActorID(e.enc[2:2+int(e.enc[1]&0x1f)]), e), e.enc)
		}
		inputs := [][]byte{data}
		for range 5 {
			m := bytes.Clone(data)
			m[rng.Intn(len(m))] = byte(rng.Intn(256))
			inputs = append(inputs, m)
		}
		for _, in := range inputs {
			want := a.Clone()
			d, derr := Decode(in, 0)
			if derr == nil {
				derr = want.Merge(d)
			}
			got := a.Clone()
			gerr := got.mergeEncoded(in, maps.Clone(got.entries), map[crdt.ActorID]bool{})
			require.Equal(t, derr == nil, gerr == nil, "decode+Merge: %v, mergeEncoded: %v", derr, gerr)
			if derr == nil {
				require.True(t, got.Equal(want))
				require.Equal(t, encode(t, want), encode(t, got))
			} else {
				require.True(t, got.Equal(a), "a failed merge changes nothing")
			}
		}
	}
}

// TestNilValues: read-only methods on a nil *Counter answer as the empty
// state does; Merge(nil) and a self-merge change nothing.
func TestNilValues(t *testing.T) {
	var n *Counter
	empty := mustNew(t, Options{})
	require.Equal(t, empty.Value(), n.Value())
	require.Zero(t, n.Len())
	require.Empty(t, n.Actors())
	require.Zero(t, n.Rights("a"))
	require.Zero(t, n.Received("a"))
	require.Zero(t, n.Sent("a", "b"))
	require.Zero(t, n.Outstanding("a"))
	require.Empty(t, n.Requests())
	require.Empty(t, n.Holders("x"))
	known, err := n.Known("x", 1)
	require.False(t, known)
	require.NoError(t, err)
	_, ok := n.Entry("a")
	require.False(t, ok)
	require.True(t, n.Equal(empty))
	require.True(t, empty.Equal(n))
	require.True(t, n.Leq(empty))
	b, err := n.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, encode(t, empty), b)

	c := mustNew(t, Options{})
	_, _ = c.Apply("a", "c1", 3)
	before := encode(t, c)
	require.NoError(t, c.Merge(nil))
	require.NoError(t, c.Merge(c))
	require.Equal(t, before, encode(t, c))
	require.Panics(t, func() { _, _ = n.Apply("a", "t", 1) })
}

// pastInt64 returns 2^63 + n.
func pastInt64(n int64) *big.Int {
	return new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 63), big.NewInt(n))
}

// TestMergePastInt64: writers that could not see each other credit a
// value past int64. Merge, in either order, and decoding keep it (SPEC.md
// 13.1); Value clamps and BigValue is exact. An operation that takes a
// total further out is refused and changes nothing; one that moves it
// back, or leaves it as it is, applies (13.2).
func TestMergePastInt64(t *testing.T) {
	blind := func(bound int64, origin crdt.ActorID, amounts ...int64) *Counter {
		out := mustNew(t, Options{Bound: bound, Origin: origin})
		for i, n := range amounts {
			r := mustNew(t, Options{Bound: bound, Origin: origin})
			a := crdt.ActorID(fmt.Sprint("a", i))
			_, err := r.Apply(a, crdt.TxnID(fmt.Sprint("c", i)), n)
			require.NoError(t, err)
			require.NoError(t, out.Merge(r))
			require.NoError(t, r.Merge(out), "either order")
			require.True(t, r.Equal(out))
		}
		return out
	}
	// The boundary: 2^63 - 1 fits, 2^63 does not.
	c := blind(0, "", math.MaxInt64-1, 1)
	require.Equal(t, int64(math.MaxInt64), c.Value())
	require.Equal(t, big.NewInt(math.MaxInt64), c.BigValue())
	c = blind(0, "", math.MaxInt64, 1)
	require.Equal(t, int64(math.MaxInt64), c.Value(), "clamped")
	require.Equal(t, pastInt64(0), c.BigValue())
	d, err := Decode(encode(t, c), 0)
	require.NoError(t, err, "a state past int64 decodes")
	require.True(t, d.Equal(c))
	require.Equal(t, pastInt64(0), d.BigValue())

	before := encode(t, c)
	for _, a := range []crdt.ActorID{"a0", "a1", "b"} {
		_, err = c.Apply(a, "more", 1)
		require.ErrorIs(t, err, crdt.ErrOverflow, "further out")
		require.Equal(t, before, encode(t, c), "nothing changed")
	}
	_, err = c.Apply("a1", "c1", 1)
	require.NoError(t, err, "a retry is a duplicate")
	_, err = c.Apply("a1", "d1", -1)
	require.NoError(t, err, "towards int64")
	require.Equal(t, big.NewInt(math.MaxInt64), c.BigValue())
	_, err = c.Apply("b", "c2", 1)
	require.ErrorIs(t, err, crdt.ErrOverflow, "2^63 again")
	_, err = c.Apply("a0", "d2", -1)
	require.NoError(t, err)
	_, err = c.Apply("b", "c2", 1)
	require.NoError(t, err, "back to 2^63 - 1")

	// Rights given blind: c receives 2^63 + 20 from a0 and a1.
	r := blind(0, "", 1<<62+10, 1<<62+10)
	var sides []*Counter
	for _, a := range []crdt.ActorID{"a0", "a1"} {
		s := r.Clone()
		require.NoError(t, s.Transfer(a, "c", 1<<62+10))
		sides = append(sides, s)
	}
	for _, s := range sides {
		require.NoError(t, r.Merge(s))
	}
	require.Equal(t, pastInt64(20), r.BigValue())
	require.Equal(t, int64(math.MaxInt64), r.Received("c"))
	require.Equal(t, int64(math.MaxInt64), r.Rights("c"))
	require.Zero(t, r.Outstanding("c"))
	d, err = Decode(encode(t, r), 0)
	require.NoError(t, err, "received and rights past int64 decode")
	require.True(t, d.Equal(r))
	before = encode(t, r)
	_, err = r.Request("c", 1)
	require.ErrorIs(t, err, crdt.ErrOverflow, "asked must fit")
	_, err = r.Apply("a0", "x", 1)
	require.ErrorIs(t, err, crdt.ErrOverflow)
	require.Equal(t, before, encode(t, r))
	require.NoError(t, r.Transfer("c", "d", 5), "the value stays where it was")
	require.Equal(t, int64(5), r.Rights("d"))
	_, err = r.Apply("c", "d1", -15)
	require.NoError(t, err, "value and c's rights move back")
	require.Equal(t, pastInt64(5), r.BigValue())
	require.Equal(t, int64(5), r.Received("d"))
}

// TestKnownRefusesBadInput: Known answers as Apply would, so an invalid
// transaction id or amount is refused with Apply's sentinel, not reported
// as a conflict with a holder's copy.
func TestKnownRefusesBadInput(t *testing.T) {
	c := mustNew(t, Options{})
	_, err := c.Apply("a", "x", 10)
	require.NoError(t, err)
	for _, tc := range []struct {
		txn    crdt.TxnID
		amount int64
		want   error
	}{
		{"x", 0, crdt.ErrInvalidAmount},
		{"x", math.MinInt64, crdt.ErrInvalidAmount},
		{"", 10, crdt.ErrInvalidTxnID},
		{"\xff", 10, crdt.ErrInvalidTxnID},
	} {
		known, err := c.Known(tc.txn, tc.amount)
		require.ErrorIs(t, err, tc.want, "Known(%q, %d)", tc.txn, tc.amount)
		require.False(t, known)
		_, aerr := c.Apply("a", tc.txn, tc.amount)
		require.ErrorIs(t, aerr, tc.want, "Apply(%q, %d) refuses it the same way", tc.txn, tc.amount)
	}
	known, err := c.Known("x", 10)
	require.NoError(t, err)
	require.True(t, known)
	known, err = c.Known("x", -10)
	require.ErrorIs(t, err, crdt.ErrConflictingTransaction)
	require.True(t, known)
}

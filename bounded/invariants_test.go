package bounded

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
)

// invEnv is the envelope of a bounded state with bound 0 and no origin.
const invEnv = "93a7626f756e646564019300a0"

func invEntry(actor, rest string) string {
	return "97" + hex.EncodeToString(append([]byte{0xa0 | byte(len(actor))}, actor...)) + rest
}

// TestDecodeRefusesInvariants: for each invariant, a state that breaks it
// is refused with an *InvariantError naming it (wrapping
// crdt.ErrCorruptEncoding), and the nearest state that keeps it decodes.
func TestDecodeRefusesInvariants(t *testing.T) {
	for _, tc := range []struct {
		invariant string
		bad, good string
	}{{
		// credits 1, debits 5: value −4 below bound 0.
		InvValueAtLeastBound,
		invEnv + "91" + invEntry("a", "01"+"010500"+"9090"),
		invEnv + "91" + invEntry("a", "02"+"050500"+"9090"),
	}, {
		// a credits 5 and gives b 6: a's rights −1, the value 5 ≥ 0.
		InvRightsNonNegative,
		invEnv + "91" + invEntry("a", "02"+"050000"+"91"+"92a16206"+"90"),
		invEnv + "91" + invEntry("a", "02"+"060000"+"91"+"92a16206"+"90"),
	}, {
		// With bound −3 (origin o), o holds 3: giving 4 leaves it at −1.
		InvRightsNonNegative,
		"93a7626f756e6465640193fda16f" + "91" + invEntry("o", "01"+"000000"+"91"+"92a16104"+"90"),
		"93a7626f756e6465640193fda16f" + "91" + invEntry("o", "01"+"000000"+"91"+"92a16103"+"90"),
	}, {
		// b gives a and c 2^63−1 each: a total beyond int64, though a's
		// and c's rights and the value fit.
		InvGivenFits,
		invEnv + "91" + invEntry("b", "03"+"cf7fffffffffffffff"+"0000"+"92"+"92a161cf7fffffffffffffff"+"92a163cf7fffffffffffffff"+"90"),
		invEnv + "91" + invEntry("b", "03"+"cf7fffffffffffffff"+"0000"+"92"+"92a161cf3fffffffffffffff"+"92a163cf4000000000000000"+"90"),
	}, {
		// Two recent transactions at sequence number 1.
		InvSeqCountsWrites,
		invEnv + "91" + invEntry("a", "01"+"030000"+"90"+"92"+"92a17801"+"92a17902"),
		invEnv + "91" + invEntry("a", "02"+"030000"+"90"+"92"+"92a17801"+"92a17902"),
	}, {
		// A credit total beyond the recent credits and an asked total
		// need a write each besides the recent transaction's.
		InvSeqCountsWrites,
		invEnv + "91" + invEntry("a", "02"+"030001"+"90"+"91"+"92a17801"),
		invEnv + "91" + invEntry("a", "03"+"030001"+"90"+"91"+"92a17801"),
	}, {
		InvRecentWithinTotal,
		invEnv + "91" + invEntry("a", "01"+"010000"+"90"+"91"+"92a17805"),
		invEnv + "91" + invEntry("a", "01"+"050000"+"90"+"91"+"92a17805"),
	}} {
		t.Run(tc.invariant, func(t *testing.T) {
			good, err := Decode(mustHex(t, tc.good), 0)
			require.NoError(t, err, "the state keeping %s", tc.invariant)
			again := encode(t, good)
			require.Equal(t, tc.good, hex.EncodeToString(again))

			c := mustNew(t, Options{})
			before := encode(t, c)
			err = c.UnmarshalBinary(mustHex(t, tc.bad))
			require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
			var ie *InvariantError
			require.True(t, errors.As(err, &ie), "%v", err)
			require.Equal(t, tc.invariant, ie.Invariant, "%v", err)
			require.Contains(t, err.Error(), tc.invariant)
			require.Equal(t, before, encode(t, c), "a refused decode changes nothing")

			// Merging the bytes into a counter refuses them too.
			err = c.mergeEncoded(mustHex(t, tc.bad), nil, map[crdt.ActorID]bool{})
			require.True(t, errors.As(err, &ie) && ie.Invariant == tc.invariant, "%v", err)
		})
	}
}

// TestDecodeRefusesValueBelowBound: the state with value −4 and bound 0 is
// refused, by Decode and by UnmarshalBinary.
func TestDecodeRefusesValueBelowBound(t *testing.T) {
	b := mustHex(t, "93a7626f756e646564019300a09197a161010105009090")
	_, err := Decode(b, 0)
	var ie *InvariantError
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, InvValueAtLeastBound, ie.Invariant)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
}

// TestHonestStatesDecode: every state that Apply, Transfer, Request,
// Withdraw, Retract and Merge build from empty states (each actor writing
// serially) decodes, to an equal state, whatever the schedule: the
// invariants refuse nothing an honest writer produces.
func TestHonestStatesDecode(t *testing.T) {
	testsize.SkipSequential(t)
	seed := proptest.Seed()
	n := proptest.Scale(1500)
	t.Logf("seed %d, %d schedules; replay: %s", seed, n, proptest.Replay(t, seed))
	rng := rand.New(rand.NewSource(seed))
	decoded, past := 0, 0
	for s := range n {
		sseed := rng.Int63()
		k, p, err := honestSchedule(sseed)
		if err != nil {
			t.Fatalf("schedule %d (seed %d): %v\nreplay: %s", s, sseed, err, proptest.Replay(t, seed))
		}
		decoded, past = decoded+k, past+p
	}
	t.Logf("%d states decoded, %d of them past int64", decoded, past)
	if n >= 100 {
		require.Positive(t, past, "blind credits of 2^62 and more pass int64 (SPEC.md 13.1)")
	}
}

func honestSchedule(seed int64) (decoded, past int, err error) {
	rng := rand.New(rand.NewSource(seed))
	opts := Options{Window: 1 + rng.Intn(4)}
	if rng.Intn(2) == 0 {
		opts.Bound, opts.Origin = -int64(1+rng.Intn(20)), "r0"
	}
	nrep := 2 + rng.Intn(3)
	reps := make([]*Counter, nrep)
	for i := range reps {
		reps[i], _ = New(opts)
	}
	var snaps []*Counter
	var log []string
	for step := range 30 {
		i := rng.Intn(nrep)
		a, c := proptest.Actor(i), reps[i]
		txn := crdt.TxnID(fmt.Sprintf("t%d", rng.Intn(12)))
		amt := int64(1 + rng.Intn(9))
		if rng.Intn(4) == 0 {
			amt += 1 << 62 // blind writers may pass int64 together
		}
		switch k := rng.Intn(12); {
		case k < 3:
			_, err := c.Apply(a, txn, amt)
			log = append(log, fmt.Sprintf("%s credit %s %d: %v", a, txn, amt, err))
		case k < 6:
			_, err := c.Apply(a, txn, -amt)
			log = append(log, fmt.Sprintf("%s debit %s %d: %v", a, txn, amt, err))
		case k < 7:
			to := proptest.Actor(rng.Intn(nrep + 1))
			err := c.Transfer(a, to, amt)
			log = append(log, fmt.Sprintf("%s gives %s %d: %v", a, to, amt, err))
		case k < 8:
			_, err := c.Request(a, amt)
			log = append(log, fmt.Sprintf("%s asks %d: %v", a, amt, err))
		case k < 9:
			_, err := c.Withdraw(a)
			log = append(log, fmt.Sprintf("%s withdraws: %v", a, err))
		case k < 10:
			_, err := c.Retract(a, txn)
			log = append(log, fmt.Sprintf("%s retracts %s: %v", a, txn, err))
		case k < 11:
			snaps = append(snaps, c.Clone())
		default:
			if len(snaps) > 0 {
				j := rng.Intn(len(snaps))
				if err := c.Merge(snaps[j]); err != nil {
					return decoded, past, fmt.Errorf("merge: %v", err)
				}
				log = append(log, fmt.Sprintf("%s merges snapshot %d", a, j))
			}
		}
		b, err := c.MarshalBinary()
		if err != nil {
			return decoded, past, err
		}
		d, err := Decode(b, opts.Window)
		if err != nil || !d.Equal(c) || d.BigValue().Cmp(c.BigValue()) != 0 {
			return decoded, past, fmt.Errorf("replica %d after step %d: decode: %v (equal %v)\n%s", i, step, err, err == nil && d.Equal(c), strings.Join(log, "\n"))
		}
		decoded++
		if !c.BigValue().IsInt64() {
			past++
		}
	}
	return decoded, past, nil
}

// FuzzDecodeVectors: seeded with every encoding of
// testdata/vectors/bounded.json (valid and refused). Decoding never panics;
// an error wraps a decoder sentinel; an accepted state re-encodes to the
// same bytes and keeps every invariant (value at least the bound, every
// actor's rights at least zero).
func FuzzDecodeVectors(f *testing.F) {
	for _, h := range vectorHexes(f, "../testdata/vectors/bounded.json") {
		b, err := hex.DecodeString(h)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Decode(data, 0)
		if err != nil {
			if !errors.Is(err, crdt.ErrCorruptEncoding) && !errors.Is(err, crdt.ErrTooLarge) &&
				!errors.Is(err, crdt.ErrTypeMismatch) && !errors.Is(err, crdt.ErrUnsupportedVersion) {
				t.Fatalf("error wraps no decoder sentinel: %v", err)
			}
			return
		}
		b, err := c.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, data) {
			t.Fatalf("decoded %x re-encodes as %x", data, b)
		}
		if c.BigValue().Cmp(big.NewInt(c.Bound())) < 0 {
			t.Fatalf("accepted value %s below bound %d", c.BigValue(), c.Bound())
		}
		for _, a := range c.Actors() {
			if c.Rights(a) < 0 {
				t.Fatalf("accepted rights %d of %q", c.Rights(a), a)
			}
		}
	})
}

// vectorHexes returns every string field named hex in a vector file.
func vectorHexes(t testing.TB, path string) []string {
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && strings.HasSuffix(k, "hex") {
					out = append(out, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	require.NotEmpty(t, out)
	return out
}

package vectors

// Vectors of pncounter.json: generation (generateFile) and checks (checkFile).
// See shared.go for what every file shares, and SPEC.md section 11.

import (
	"encoding/hex"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------------------
// pncounter.json

type pnState struct {
	P     []Pair `json:"p"`
	N     []Pair `json:"n"`
	Value Int    `json:"value"`
	Hex   string `json:"hex"`
}

type pnScenario struct {
	Name     string             `json:"name"`
	Note     string             `json:"note,omitempty"`
	Replicas []string           `json:"replicas"`
	Steps    []Step             `json:"steps"`
	Final    map[string]pnState `json:"final,omitempty"`
	// FinalDigest replaces Final in scenarios with generated steps.
	FinalDigest map[string]pnDigest `json:"final_digest,omitempty"`
}

// pnDigest is a big final state: the number of actors of each half, the
// value and the SHA-256 of the encoding.
type pnDigest struct {
	PActors   int    `json:"p_actors"`
	NActors   int    `json:"n_actors"`
	Value     Int    `json:"value"`
	HexSHA256 string `json:"hex_sha256"`
}

type pnFile struct {
	Comment   string       `json:"comment"`
	Scenarios []pnScenario `json:"scenarios"`
	Version1  []pnCompat   `json:"version1"`
	Malformed []Malformed  `json:"malformed"`
	// Generated are version 2 encodings too big to list, given as row
	// ranges; see pnGenerated.
	Generated []pnGenerated `json:"generated_decodes"`
}

// pnGenerated is a version 2 encoding built from row ranges: for each
// range, in order, one row per id with counts P and N (SPEC.md section 11,
// generated vectors; the ids ascend across the ranges). Decoding it gives
// Error, or, when Error is empty, a state of PActors and NActors actors
// whose encoding is the input itself (HexSHA256 is its digest).
type pnGenerated struct {
	Name      string       `json:"name"`
	Note      string       `json:"note,omitempty"`
	Rows      []pnRowRange `json:"rows"`
	Error     string       `json:"error,omitempty"`
	PActors   int          `json:"p_actors,omitempty"`
	NActors   int          `json:"n_actors,omitempty"`
	HexSHA256 string       `json:"hex_sha256"`
}

type pnRowRange struct {
	Range idRange `json:"range"`
	P     I64     `json:"p"`
	N     I64     `json:"n"`
}

// encode builds the input with the reference writer: the rows of every
// range, front-coded, after the version 2 envelope.
func (g pnGenerated) encode() []byte {
	var n int
	for _, r := range g.Rows {
		n += r.Range.Count
	}
	e := env("pncounter", 2).arr(n)
	prev := ""
	for _, r := range g.Rows {
		for _, a := range r.Range.ids() {
			k := refShared(prev, a)
			e = e.arr(4).uint(uint64(k)).str(a[k:]).int(int64(r.P)).int(int64(r.N))
			prev = a
		}
	}
	return e.b
}

// decodeGenerated decodes g's input and returns what it gave.
func (g pnGenerated) decode(t *checker) pnGenerated {
	in := g.encode()
	out := g
	out.HexSHA256 = sha256Hex(in)
	out.PActors, out.NActors = 0, 0
	err := decodeAs(t, "pncounter", in)
	if out.Error = kindOf(t, err); err == nil {
		c := pncounter.New()
		require.NoError(t, c.UnmarshalBinary(in))
		require.Equal(t, out.HexSHA256, sha256Hex(must(c.MarshalBinary())), "%s: re-encoding differs from the input", g.Name)
		out.PActors, out.NActors = c.P().Len(), c.N().Len()
	}
	return out
}

// pnCompat is a format version 1 encoding that decoders still read: Hex
// decodes to the state P, N, which encodes (in the current version) as
// Reencoded.
type pnCompat struct {
	Name      string `json:"name"`
	Hex       string `json:"hex"`
	P         []Pair `json:"p"`
	N         []Pair `json:"n"`
	Reencoded string `json:"reencoded"`
}

// refShared is SPEC.md 5.4's shared prefix, written independently of the
// package: the longest common byte prefix, shortened while the next byte of
// next is a UTF-8 continuation byte (10xxxxxx).
func refShared(prev, next string) int {
	k := 0
	for k < len(prev) && k < len(next) && prev[k] == next[k] {
		k++
	}
	for k > 0 && k < len(next) && next[k]&0xc0 == 0x80 {
		k--
	}
	return k
}

// refPNBody appends the version 2 body: one front-coded row per actor of P
// or N, in byte order.
func refPNBody(e refEnc, ps, ns []Pair) refEnc {
	counts := map[string][2]int64{}
	for _, p := range ps {
		c := counts[p.Actor]
		c[0] = int64(p.Count)
		counts[p.Actor] = c
	}
	for _, n := range ns {
		c := counts[n.Actor]
		c[1] = int64(n.Count)
		counts[n.Actor] = c
	}
	actors := make([]string, 0, len(counts))
	for a := range counts {
		actors = append(actors, a)
	}
	slices.Sort(actors)
	e = e.arr(len(actors))
	prev := ""
	for _, a := range actors {
		k := refShared(prev, a)
		e = e.arr(4).uint(uint64(k)).str(a[k:]).int(counts[a][0]).int(counts[a][1])
		prev = a
	}
	return e
}

func runPN(t *checker, sc *pnScenario, fill bool) map[string]*pncounter.Counter {
	rs := map[string]*pncounter.Counter{}
	for _, r := range sc.Replicas {
		rs[r] = pncounter.New()
	}
	replaySteps(t, sc.Name, sc.Steps, rs, fill, func(c *pncounter.Counter, x Step) error {
		if x.Op != "apply" {
			return errUnknownOp
		}
		return c.Apply(crdt.ActorID(idOf(t, x.Actor, x.ActorHex)), int64(*x.Amount))
	})
	return rs
}

func genPNCounter(t *checker) any {
	ap := func(r, a string, n int64) Step { return stepOp(r, "apply", a, n) }
	scs := []pnScenario{
		{Name: "empty", Replicas: []string{"r"}},
		{Name: "increments and decrements", Replicas: []string{"r"}, Steps: []Step{
			ap("r", "a", 5), ap("r", "b", -3), ap("r", "a", -2), ap("r", "c", 7), ap("r", "b", 0)}},
		{Name: "only decrements", Replicas: []string{"r"}, Steps: []Step{ap("r", "a", -1), ap("r", "b", -300)}},
		{Name: "extremes: an actor's count and the value", Replicas: []string{"r"},
			Note: "a's count reaches 2^63-1, one more is overflow; b takes the value to 0, and c's 1 applies although P's total passes int64 (SPEC.md 5.2: the actor's count and the value must fit, not the half's total); e takes the value to 2^63-1 and f's 1 more is overflow; -2^63 is invalid_amount",
			Steps: []Step{ap("r", "a", math.MaxInt64), ap("r", "a", 1), ap("r", "b", -math.MaxInt64), ap("r", "c", 1), ap("r", "c", -1),
				ap("r", "e", math.MaxInt64), ap("r", "f", 1), ap("r", "d", math.MinInt64)}},
		{Name: "rejected updates", Replicas: []string{"r"}, Steps: []Step{
			ap("r", "a", 4), ap("r", "", 1), ap("r", "", -1), ap("r", "x\ny", -1), ap("r", "a", math.MinInt64)}},
		{Name: "concurrent replicas converge", Replicas: []string{"r1", "r2"}, Steps: []Step{
			ap("r1", "a", 10), ap("r1", "a", -4), ap("r2", "b", -7), ap("r2", "a", 3), ap("r2", "b", 2),
			stepMerge("r1", "r2"), stepMerge("r2", "r1"), stepMerge("r1", "r2")}},
		{Name: "merge past int64 in one half", Replicas: []string{"r1", "r2"},
			Note: "merged, N is 2^63 and P 6: the value 6 - 2^63 fits; a decrement of 1 applies (5 - 2^63) although N's total is past int64, an increment of 1 too (6 - 2^63), and a decrement of 7 is overflow: the value would be -2^63 - 1 (SPEC.md 5.1, 5.2)",
			Steps: []Step{ap("r1", "a", -(math.MaxInt64 - 1)), ap("r1", "p", 1), ap("r2", "b", -2), ap("r2", "q", 5),
				stepMerge("r1", "r2"), ap("r1", "b", -1), ap("r1", "p", 1), ap("r1", "q", -7)}},
		// Front coding: node-1 → node-10 shares 6 bytes, node-10 → node-2
		// shares 5; "aāx" → "aąy" share the bytes 61 c4 but the prefix
		// stops at the character boundary after "a".
		{Name: "front-coded ids", Replicas: []string{"r"}, Steps: []Step{
			ap("r", "node-2", 3), ap("r", "node-10", -4), ap("r", "node-1", 1), ap("r", "node-1", -1),
			ap("r", "aāx", 200), ap("r", "aąy", -70000), ap("r", "node-10", 1)}},
	}
	apRange := func(r, prefix string, first, count int, n int64) Step {
		return Step{Replica: r, Op: "apply", ActorRange: &idRange{Prefix: prefix, First: first, Count: count, Width: 5}, Amount: ip(n)}
	}
	scs = append(scs,
		pnScenario{Name: "30000 actors in P", Replicas: []string{"r"},
			Note:  "a00001..a30000 each +1: a new actor's increment is too_large, its decrement is accepted (N has its own 30000), a present actor's increment is accepted",
			Steps: []Step{apRange("r", "a", 1, gMaxActors, 1), ap("r", "b", 1), ap("r", "b", -1), ap("r", "a00001", 1), ap("r", "c", 0)}},
		pnScenario{Name: "30000 actors in N", Replicas: []string{"r"},
			Note:  "a00001..a30000 each -1: a new actor's decrement is too_large, its increment is accepted",
			Steps: []Step{apRange("r", "a", 1, gMaxActors, -1), ap("r", "b", -1), ap("r", "b", 1), ap("r", "a00001", -1)}},
		pnScenario{Name: "merge beyond 30000 actors in one half", Replicas: []string{"p1", "p2", "n1", "n2", "n3"},
			Note: "P: a00001..a20000 ⊔ b00001..b10001 is 30001 actors, accepted (SPEC.md 5.2: MaxActors caps Apply only); a new actor's credit is then too_large, its debit and a present actor's credit apply. N likewise, with P's actor p; a counter with 30001 actors in P and 30000 in N is fine",
			Steps: []Step{
				apRange("p1", "a", 1, 20000, 1), apRange("p2", "b", 1, 10001, 1), stepMerge("p1", "p2"), ap("p1", "q", 1), ap("p1", "q", -1), ap("p1", "a00001", 1),
				apRange("n1", "a", 1, 20000, -1), apRange("n2", "b", 1, 10001, -1), ap("n2", "p", 5), stepMerge("n1", "n2"), ap("n1", "q", -1),
				apRange("n3", "c", 1, gMaxActors, -1), stepMerge("p1", "n3"), stepMerge("n2", "p2")}},
		pnScenario{Name: "merge beyond 65536 actors in one half", Replicas: []string{"n1", "n2", "n3"},
			Note: "N: a00001..a30000 ⊔ b00001..b30000 ⊔ c00001..c05537 would hold 65537 actors: too_large, n1 unchanged, P's new actor p not merged either (the bound on memory, all or nothing, SPEC.md 5.2)",
			Steps: []Step{
				apRange("n1", "a", 1, gMaxActors, -1), apRange("n2", "b", 1, gMaxActors, -1), apRange("n3", "c", 1, gMaxMerged-2*gMaxActors+1, -1), ap("n3", "p", 5),
				stepMerge("n1", "n2"), stepMerge("n1", "n3")}},
	)
	for i := range scs {
		rs := runPN(t, &scs[i], true)
		if generated(scs[i].Steps) {
			scs[i].FinalDigest = map[string]pnDigest{}
			for name, c := range rs {
				scs[i].FinalDigest[name] = pnDigest{PActors: c.P().Len(), NActors: c.N().Len(), Value: bigInt(c.BigValue()), HexSHA256: sha256Hex(must(c.MarshalBinary()))}
			}
			continue
		}
		scs[i].Final = map[string]pnState{}
		for name, c := range rs {
			scs[i].Final[name] = pnState{P: gPairs(c.P()), N: gPairs(c.N()), Value: bigInt(c.BigValue()), Hex: hex.EncodeToString(must(c.MarshalBinary()))}
		}
	}
	p := "pncounter"
	row := func(e refEnc, shared int, suffix string, pc, nc int64) refEnc {
		return e.arr(4).uint(uint64(shared)).str(suffix).int(pc).int(nc)
	}
	v2 := func(rows int) refEnc { return env(p, 2).arr(rows) }
	var compat []pnCompat
	for _, c := range []struct {
		name string
		p, n []Pair
	}{
		{"empty", []Pair{}, []Pair{}},
		{"both halves", []Pair{{"a", 5}, {"c", 7}}, []Pair{{"a", 2}, {"b", 3}}},
		{"shared prefixes", []Pair{{"node-1", 1}, {"node-2", 3}}, []Pair{{"node-1", 1}, {"node-10", 4}}},
	} {
		v1 := refGBody(refGBody(env(p, 1).arr(2), c.p), c.n).b
		dec := pncounter.New()
		require.NoError(t, dec.UnmarshalBinary(v1), c.name)
		compat = append(compat, pnCompat{Name: c.name, Hex: hex.EncodeToString(v1), P: c.p, N: c.n,
			Reencoded: hex.EncodeToString(must(dec.MarshalBinary()))})
	}
	rr := func(prefix string, count int, p, n int64) pnRowRange {
		return pnRowRange{Range: idRange{Prefix: prefix, First: 1, Count: count, Width: 5}, P: I64(p), N: I64(n)}
	}
	var gens []pnGenerated
	for _, g := range []pnGenerated{
		{Name: "30001 actors in P", Rows: []pnRowRange{rr("a", gMaxActors+1, 1, 0)},
			Note: "past MaxActors: a merge may hold it, and the decoder accepts it (SPEC.md 5.4)"},
		{Name: "65537 actors in P", Rows: []pnRowRange{rr("a", gMaxMerged+1, 1, 0)},
			Note: "65537 rows, each with a P count only: too_large, although the body may hold 131072 rows"},
		{Name: "65537 actors in N", Rows: []pnRowRange{rr("a", gMaxMerged+1, 0, 1)}},
		{Name: "65537 actors in P, their N counts spread", Rows: []pnRowRange{rr("a", 32768, 1, 0), rr("b", 32769, 1, 1)},
			Note: "a row with both counts adds an actor to each half: P has 65537, N 32769"},
		{Name: "65536 actors in each half", Rows: []pnRowRange{rr("a", gMaxMerged, 1, 1)}},
		{Name: "65536 actors in P and 65536 others in N", Rows: []pnRowRange{rr("a", gMaxMerged, 1, 0), rr("b", gMaxMerged, 0, 1)},
			Note: "131072 rows: the cap is per half, not per row"},
	} {
		gens = append(gens, g.decode(t))
	}
	return pnFile{
		Generated: gens,
		Comment:   "PN-Counter (SPEC.md section 5). Version 2 body: one front-coded row [shared, suffix, p, n] per actor. version1 lists version 1 encodings ([P, N], each a G-Counter body) that decoders still read. generated_decodes are version 2 encodings built from row ranges (one front-coded row per id of each range, with that range's counts) and what decoding them gives.",
		Scenarios: scs,
		Version1:  compat,
		Malformed: []Malformed{
			mal("version 1 body under version 2", p, env(p, 2).arr(2).arr(0).arr(0).b, t),
			mal("row of three", p, v2(1).arr(3).uint(0).str("a").int(1).b, t),
			mal("first row shares a prefix", p, row(v2(1), 1, "a", 1, 0).b, t),
			mal("shares more than the previous id", p, row(row(v2(2), 0, "ab", 1, 0), 3, "c", 1, 0).b, t),
			mal("shares less than the common prefix", p, row(row(v2(2), 0, "ab", 1, 0), 0, "ac", 1, 0).b, t,
				"ab → ac must be written with shared 1, suffix c"),
			mal("shared prefix ends inside a character", p, row(row(v2(2), 0, "ā", 1, 0), 1, "\x85", 1, 0).b, t,
				"ā is c4 81 and ą is c4 85: the canonical row is [0, ą]"),
			mal("rows unsorted", p, row(row(v2(2), 0, "b", 1, 0), 0, "a", 1, 0).b, t),
			mal("duplicate actor (empty suffix)", p, row(row(v2(2), 0, "a", 1, 0), 1, "", 0, 1).b, t),
			mal("row with no count", p, row(v2(1), 0, "a", 0, 0).b, t),
			mal("negative N", p, row(v2(1), 0, "a", 0, -3).b, t),
			mal("invalid actor", p, row(v2(1), 0, "", 1, 0).b, t),
			mal("actor longer than 255 bytes", p, row(row(v2(2), 0, strings.Repeat("x", 255), 1, 0), 255, "y", 1, 0).b, t),
			mal("more than 131072 rows", p, append(env(p, 2).b, 0xdd, 0, 2, 0, 1), t),
			mal("gcounter envelope", p, env("gcounter", 1).arr(0).b, t),
			mal("version 3", p, env(p, 3).arr(0).b, t),
			mal("trailing bytes", p, append(v2(0).b, 0x90), t),
			mal("v1: body of one half", p, env(p, 1).arr(1).arr(0).b, t),
			mal("v1: body of three halves", p, env(p, 1).arr(3).arr(0).arr(0).arr(0).b, t),
			mal("v1: N unsorted", p, env(p, 1).arr(2).arr(0).arr(2).arr(2).str("b").int(1).arr(2).str("a").int(1).b, t),
			mal("v1: P zero count", p, env(p, 1).arr(2).arr(1).arr(2).str("a").int(0).arr(0).b, t),
			mal("v1: N negative count", p, env(p, 1).arr(2).arr(0).arr(1).arr(2).str("a").int(-3).b, t),
			mal("v1: invalid actor in P", p, env(p, 1).arr(2).arr(1).arr(2).str("").int(1).arr(0).b, t),
			mal("v1: P of 65537 pairs", p, append(env(p, 1).arr(2).b, 0xdd, 0, 1, 0, 1), t,
				"65537 with nothing after it: the cap is checked before the remaining-bytes check"),
			mal("v1: N of 65537 pairs", p, append(env(p, 1).arr(2).arr(0).b, 0xdd, 0, 1, 0, 1), t),
			mal("v1: P of 30001 pairs, bytes missing", p, append(env(p, 1).arr(2).b, 0xdc, 0x75, 0x31), t,
				"past MaxActors the header passes: the missing pairs are corrupt"),
			mal("v1: rows under version 1", p, row(env(p, 1).arr(1), 0, "a", 1, 0).b, t),
		},
	}
}

func checkPNCounter(t *checker, raw []byte) {
	var f pnFile
	readJSON(t, raw, &f)
	require.NotEmpty(t, f.Scenarios)
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		t.Run(sc.Name, func(t *checker) {
			rs := runPN(t, sc, false)
			// Model: two maps per replica.
			P, N := map[string]*gModel{}, map[string]*gModel{}
			for _, r := range sc.Replicas {
				P[r], N[r] = newGModel(), newGModel()
			}
			for j, st := range expandSteps(sc.Steps) {
				var want string
				switch st.Op {
				case "apply":
					n := int64(*st.Amount)
					a := idOf(t, st.Actor, st.ActorHex)
					switch {
					case n == math.MinInt64:
						want = "invalid_amount"
					case !validID(a):
						want = "invalid_actor"
					default:
						want = pnModelApply(P[st.Replica], N[st.Replica], a, n)
					}
				case "merge":
					p2, n2 := clone(P), clone(N)
					if want = gModelStep(p2, st, t); want == "" {
						want = gModelStep(n2, st, t)
					}
					if want == "" {
						P, N = p2, n2
					}
				}
				require.Equal(t, st.Error, want, "model disagrees with vector at step %d", j)
			}
			if generated(sc.Steps) {
				require.Empty(t, sc.Final)
				require.Len(t, sc.FinalDigest, len(rs))
				for name, want := range sc.FinalDigest {
					c := rs[name]
					require.Equal(t, want.HexSHA256, sha256Hex(must(c.MarshalBinary())), "%s encoding", name)
					require.Equal(t, want.HexSHA256, sha256Hex(refPNBody(env("pncounter", 2), P[name].pairs(), N[name].pairs()).b), "%s: reference encoding of the model", name)
					require.Equal(t, want.PActors, len(P[name].pairs()), "%s P actors vs model", name)
					require.Equal(t, want.NActors, len(N[name].pairs()), "%s N actors vs model", name)
					require.Equal(t, want.PActors, c.P().Len())
					require.Equal(t, want.NActors, c.N().Len())
					require.Equal(t, bigInt(new(big.Int).Sub(P[name].sum(), N[name].sum())), want.Value, "%s value vs model", name)
					require.Equal(t, want.Value, bigInt(c.BigValue()))
				}
				return
			}
			require.Len(t, sc.Final, len(rs))
			for name, want := range sc.Final {
				c := rs[name]
				require.Equal(t, want.Hex, hex.EncodeToString(must(c.MarshalBinary())), "%s encoding", name)
				require.Equal(t, want.Hex, refPNBody(env("pncounter", 2), want.P, want.N).hex(), "%s reference encoding", name)
				require.Equal(t, P[name].pairs(), want.P)
				require.Equal(t, N[name].pairs(), want.N)
				require.Equal(t, bigInt(new(big.Int).Sub(P[name].sum(), N[name].sum())), want.Value, "%s value vs model", name)
				require.Equal(t, want.Value, bigInt(c.BigValue()))
				dec := pncounter.New()
				require.NoError(t, dec.UnmarshalBinary(unhex(t, want.Hex)))
				require.True(t, dec.Equal(c))
			}
		})
	}
	require.NotEmpty(t, f.Version1)
	for _, c := range f.Version1 {
		t.Run("version 1/"+c.Name, func(t *checker) {
			require.Equal(t, c.Hex, refGBody(refGBody(env("pncounter", 1).arr(2), c.P), c.N).hex(), "reference version 1 encoding")
			dec := pncounter.New()
			require.NoError(t, dec.UnmarshalBinary(unhex(t, c.Hex)))
			require.Equal(t, c.P, gPairs(dec.P()))
			require.Equal(t, c.N, gPairs(dec.N()))
			require.Equal(t, c.Reencoded, hex.EncodeToString(must(dec.MarshalBinary())))
			require.Equal(t, c.Reencoded, refPNBody(env("pncounter", 2), c.P, c.N).hex(), "reference version 2 encoding")
		})
	}
	checkMalformed(t, f.Malformed)
	require.NotEmpty(t, f.Generated)
	for _, g := range f.Generated {
		t.Run("generated decode/"+g.Name, func(t *checker) {
			// The model: the cap is 65536 actors with a count in each half.
			var p, n int
			for _, r := range g.Rows {
				if r.P > 0 {
					p += r.Range.Count
				}
				if r.N > 0 {
					n += r.Range.Count
				}
			}
			want := ""
			if p > gMaxMerged || n > gMaxMerged {
				want = "too_large"
			}
			require.Equal(t, want, g.Error, "model disagrees with the vector")
			got := g.decode(t)
			require.Equal(t, g.HexSHA256, got.HexSHA256, "input digest")
			requireKind(t, g.Error, errorOf(got.Error))
			if g.Error == "" {
				require.Equal(t, [2]int{p, n}, [2]int{g.PActors, g.NActors}, "actors vs model")
				require.Equal(t, [2]int{g.PActors, g.NActors}, [2]int{got.PActors, got.NActors}, "actors decoded")
			}
		})
	}
}

func clone(m map[string]*gModel) map[string]*gModel {
	out := map[string]*gModel{}
	for r, g := range m {
		out[r] = g.clone()
	}
	return out
}

// pnModelApply is SPEC.md 5.2's Apply(a, n) on the halves p and m of a
// valid actor (n != math.MinInt64): the actor's count in its half must fit,
// and the value must, unless it did not and moves back.
func pnModelApply(p, m *gModel, a string, n int64) string {
	half, mag := p, n
	if n < 0 {
		half, mag = m, -n
	}
	value := new(big.Int).Sub(p.total, m.total)
	next := new(big.Int).Add(value, big.NewInt(n))
	switch {
	case mag == 0:
		return ""
	case !new(big.Int).Add(big.NewInt(half.counts[a]), big.NewInt(mag)).IsInt64(),
		!next.IsInt64() && (value.IsInt64() || value.Sign() == next.Sign()):
		return "overflow"
	case half.counts[a] == 0 && len(half.counts) >= gMaxActors:
		return "too_large"
	}
	half.counts[a] += mag
	half.total.Add(half.total, big.NewInt(mag))
	return ""
}

package vectors

// Vectors of gcounter.json: generation (generateFile) and checks (checkFile).
// See shared.go for what every file shares, and SPEC.md section 11.

import (
	"bytes"
	"encoding/hex"
	"math"
	"math/big"
	"strings"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------------------
// gcounter.json

type gState struct {
	Entries []Pair `json:"entries"`
	Value   Int    `json:"value"`
	Hex     string `json:"hex"`
}

type gScenario struct {
	Name     string            `json:"name"`
	Note     string            `json:"note,omitempty"`
	Replicas []string          `json:"replicas"`
	Steps    []Step            `json:"steps"`
	Final    map[string]gState `json:"final,omitempty"`
	// FinalDigest replaces Final in scenarios with generated steps.
	FinalDigest map[string]gDigest `json:"final_digest,omitempty"`
}

// gDigest is a big final state: its number of actors, value and the
// SHA-256 of its encoding.
type gDigest struct {
	Actors    int    `json:"actors"`
	Value     Int    `json:"value"`
	HexSHA256 string `json:"hex_sha256"`
}

// gMaxActors is SPEC.md 4.1's bound, written here independently.
const gMaxActors = 30000

// gMaxMerged is SPEC.md 4.2's bound on what Merge and the decoder accept.
const gMaxMerged = 65536

type gFile struct {
	Comment   string      `json:"comment"`
	Scenarios []gScenario `json:"scenarios"`
	Version1  []gCompat   `json:"version1"`
	Malformed []Malformed `json:"malformed"`
}

// gCompat is a format version 1 encoding that decoders still read: Hex
// decodes to Entries, which encode (in the current version) as Reencoded.
type gCompat struct {
	Name      string `json:"name"`
	Hex       string `json:"hex"`
	Entries   []Pair `json:"entries"`
	Reencoded string `json:"reencoded"`
}

func gPairs(c *gcounter.Counter) []Pair {
	out := []Pair{}
	for a, n := range c.All() {
		out = append(out, Pair{string(a), I64(n)})
	}
	return out
}

// runG replays steps on real gcounters, filling outputs when fill is set
// and checking them otherwise.
func runG(t *checker, sc *gScenario, fill bool) map[string]*gcounter.Counter {
	rs := map[string]*gcounter.Counter{}
	for _, r := range sc.Replicas {
		rs[r] = gcounter.New()
	}
	replaySteps(t, sc.Name, sc.Steps, rs, fill, func(c *gcounter.Counter, x Step) error {
		if x.Op != "increment" {
			return errUnknownOp
		}
		return c.Increment(crdt.ActorID(idOf(t, x.Actor, x.ActorHex)), int64(*x.Amount))
	})
	return rs
}

func genGCounter(t *checker) any {
	long := strings.Repeat("x", 255)
	inc := func(r, a string, n int64) Step { return stepOp(r, "increment", a, n) }
	incRange := func(r, prefix string, first, count int, n int64) Step {
		return Step{Replica: r, Op: "increment", ActorRange: &idRange{Prefix: prefix, First: first, Count: count, Width: 5}, Amount: ip(n)}
	}
	scs := []gScenario{
		{Name: "empty", Replicas: []string{"r"}},
		{Name: "single", Replicas: []string{"r"}, Steps: []Step{inc("r", "a", 1)}},
		{Name: "several actors, sorted by byte order", Replicas: []string{"r"}, Steps: []Step{
			inc("r", "carol", 1), inc("r", "alice", 3), inc("r", "bob", 7), inc("r", "alice", 2), inc("r", "Bob", 4)}},
		{Name: "integer widths", Replicas: []string{"r"}, Steps: []Step{
			inc("r", "fix", 127), inc("r", "u8", 128), inc("r", "u8max", 255), inc("r", "u16", 256), inc("r", "u16max", 65535),
			inc("r", "u32", 65536), inc("r", "u32max", math.MaxUint32), inc("r", "u64", math.MaxUint32+1)}},
		{Name: "unicode and long actors", Replicas: []string{"r"}, Steps: []Step{
			inc("r", "日本", 2), inc("r", "Zoë", 5), inc("r", "🦀", 9), inc("r", "zoe", 1), inc("r", long, 42)}},
		{Name: "zero increment stores nothing", Replicas: []string{"r"}, Steps: []Step{inc("r", "a", 0), inc("r", "b", 3), inc("r", "b", 0)}},
		{Name: "rejected increments leave the state unchanged", Replicas: []string{"r"}, Steps: []Step{
			inc("r", "a", 5),
			inc("r", "a", -1),
			inc("r", "", 1),
			inc("r", "", 0),
			inc("r", "a\x00", 1),
			inc("r", "nel\u0085", 1),
			inc("r", strings.Repeat("y", 256), 1),
			inc("r", "\xff", 1),
			inc("r", "b", math.MinInt64),
		}},
		{Name: "maximum total and overflow", Replicas: []string{"r"}, Steps: []Step{
			inc("r", "a", math.MaxInt64-1), inc("r", "b", 1), inc("r", "b", 1), inc("r", "c", 1)}},
		{Name: "merge takes the per-actor maximum", Replicas: []string{"r1", "r2", "r3"}, Steps: []Step{
			inc("r1", "a", 5), inc("r1", "b", 1), inc("r2", "a", 3), inc("r2", "c", 4),
			stepMerge("r3", "r2"), stepMerge("r3", "r1"),
			stepMerge("r1", "r2"), stepMerge("r2", "r1"), stepMerge("r1", "r1"), stepMerge("r1", "r2")}},
		{Name: "merge of an empty counter changes nothing", Replicas: []string{"r1", "r2"}, Steps: []Step{
			inc("r1", "a", 5), stepMerge("r1", "r2"), stepMerge("r2", "r1")}},
		{Name: "merge past int64", Replicas: []string{"r1", "r2"},
			Note:  "the merged total is 2^63: Merge keeps it in either order, the value is listed exactly, and any further increment is overflow (SPEC.md 4.1, 4.2)",
			Steps: []Step{inc("r1", "a", math.MaxInt64-1), inc("r2", "b", 2), inc("r2", "a", 1), stepMerge("r1", "r2"), stepMerge("r2", "r1"), inc("r1", "c", 1)}},
		// Generated: 30000 actors (SPEC.md 4.2 step 5 and Merge).
		{Name: "30000 actors: a new actor is refused", Replicas: []string{"r"},
			Note: "a00001..a30000 each count 1; then a new actor is too_large, while a zero increment, an increment of a present actor, an invalid actor and an overflow are judged first (SPEC.md 4.2 order)",
			Steps: []Step{
				incRange("r", "a", 1, gMaxActors, 1),
				inc("r", "b", 1), inc("r", "b", 0), inc("r", "a00001", 5), inc("r", "", 1), inc("r", "b", math.MaxInt64), inc("r", "zzz", 2)}},
		{Name: "merge beyond 30000 actors is accepted", Replicas: []string{"r1", "r2", "r3"},
			Note: "r1 holds a00001..a20000, r2 b00001..b10001, r3 a10001..a30000: r1⊔r2 holds 30001 actors, accepted (SPEC.md 4.2: MaxActors caps Increment only); then a new actor c is too_large and a present one counts; r1⊔r3 adds a20001..a30000 (40001 actors)",
			Steps: []Step{
				incRange("r1", "a", 1, 20000, 1), incRange("r2", "b", 1, 10001, 1), incRange("r3", "a", 10001, 20000, 2),
				stepMerge("r1", "r2"), inc("r1", "c", 1), inc("r1", "a00001", 1), stepMerge("r2", "r1"), stepMerge("r1", "r3"), stepMerge("r3", "r1")}},
		{Name: "merge beyond 65536 actors is refused", Replicas: []string{"r1", "r2", "r3", "r4"},
			Note: "r1 a00001..a30000 ⊔ r2 b00001..b30000 holds 60000 actors; with r3's c00001..c05537 it would hold 65537: too_large, r1 unchanged (the bound on memory, SPEC.md 4.2); with r4's c00001..c05536 exactly 65536",
			Steps: []Step{
				incRange("r1", "a", 1, gMaxActors, 1), incRange("r2", "b", 1, gMaxActors, 1), incRange("r3", "c", 1, gMaxMerged-2*gMaxActors+1, 1),
				incRange("r4", "c", 1, gMaxMerged-2*gMaxActors, 1), stepMerge("r1", "r2"), stepMerge("r1", "r3"), stepMerge("r1", "r4")}},
		{Name: "merge past int64 beyond 30000 actors", Replicas: []string{"r1", "r2"},
			Note: "the union holds 30001 actors and passes int64: accepted (SPEC.md 4.2: Merge checks neither MaxActors nor overflow); a present actor's increment is then overflow",
			Steps: []Step{
				incRange("r1", "a", 1, gMaxActors, 1), inc("r2", "b", math.MaxInt64-1), stepMerge("r1", "r2"), inc("r1", "b", 1)}},
		// Front coding (SPEC.md 4.4): node-1 → node-10 shares 6 bytes,
		// node-10 → node-2 shares 5; "aāx" → "aąy" share the bytes 61 c4
		// but the prefix stops at the character boundary after "a"; the
		// 255-byte id is followed by one sharing 254 bytes (shared as
		// uint8 cc fe).
		{Name: "front-coded ids", Replicas: []string{"r"}, Steps: []Step{
			inc("r", "node-2", 3), inc("r", "node-10", 4), inc("r", "node-1", 1),
			inc("r", "aāx", 200), inc("r", "aąy", 70000),
			inc("r", strings.Repeat("w", 254)+"a", 1), inc("r", strings.Repeat("w", 254)+"b", 2), inc("r", "wx", 5)}},
	}
	for i := range scs {
		rs := runG(t, &scs[i], true)
		if generated(scs[i].Steps) {
			scs[i].FinalDigest = map[string]gDigest{}
			for name, c := range rs {
				scs[i].FinalDigest[name] = gDigest{Actors: c.Len(), Value: bigInt(c.BigValue()), HexSHA256: sha256Hex(must(c.MarshalBinary()))}
			}
			continue
		}
		scs[i].Final = map[string]gState{}
		for name, c := range rs {
			scs[i].Final[name] = gState{Entries: gPairs(c), Value: bigInt(c.BigValue()), Hex: hex.EncodeToString(must(c.MarshalBinary()))}
		}
	}
	g := "gcounter"
	pairs := func(ps ...any) []byte {
		e := env(g, 1).arr(len(ps) / 2)
		for i := 0; i < len(ps); i += 2 {
			e = e.arr(2).str(ps[i].(string)).int(int64(ps[i+1].(int)))
		}
		return e.b
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	// Every final state listed in a scenario, in its version 1 encoding
	// (the one this file gave as hex before version 2): decoders keep
	// reading it, and it re-encodes as version 2.
	var compat []gCompat
	seen := map[string]bool{}
	for _, sc := range scs {
		for _, name := range sortedKeys(sc.Final) {
			st := sc.Final[name]
			v1 := refGBody(env(g, 1), st.Entries).b
			if seen[string(v1)] {
				continue
			}
			seen[string(v1)] = true
			dec := gcounter.New()
			require.NoError(t, dec.UnmarshalBinary(v1), "%s %s", sc.Name, name)
			compat = append(compat, gCompat{Name: sc.Name + ": " + name, Hex: hex.EncodeToString(v1), Entries: st.Entries,
				Reencoded: hex.EncodeToString(must(dec.MarshalBinary()))})
		}
	}
	// Version 2 rows.
	row := func(e refEnc, shared int, suffix string, n int64) refEnc {
		return e.arr(3).uint(uint64(shared)).str(suffix).int(n)
	}
	v2 := func(rows int) refEnc { return env(g, 2).arr(rows) }
	return gFile{
		Comment: "G-Counter (SPEC.md section 4). Version 2 body: one front-coded row [shared uint, suffix str, count int > 0] per actor, strictly increasing by actor bytes. " +
			"version1 lists version 1 encodings (body: array of [actor str, count int > 0]) that decoders still read; malformed inputs without a v2: prefix are version 1.",
		Scenarios: scs,
		Version1:  compat,
		Malformed: []Malformed{
			mal("actors out of order", g, pairs("b", 1, "a", 1), t),
			mal("duplicate actor", g, pairs("a", 1, "a", 2), t),
			mal("zero count", g, pairs("a", 0), t),
			mal("negative count", g, pairs("a", -1), t),
			mal("pair of three elements", g, cat(env(g, 1).arr(1).arr(3).str("a").int(1).int(1).b), t),
			mal("pair of one element", g, cat(env(g, 1).arr(1).arr(1).str("a").b), t),
			mal("body is nil", g, cat(env(g, 1).nil().b), t),
			mal("body is a map", g, cat(env(g, 1).raw(0x81).str("a").int(1).b), t),
			mal("more than 65536 actors", g, cat(env(g, 1).arr(65537).b), t, "the cap is checked before the remaining-bytes check"),
			mal("invalid actor", g, pairs("a\x7f", 1), t),
			mal("trailing bytes", g, cat(pairs("a", 1), []byte{0}), t),
			mal("v1: rows under version 1", g, row(env(g, 1).arr(1), 0, "a", 1).b, t),
			mal("v2: version 1 pairs under version 2", g, v2(1).arr(2).str("a").int(1).b, t),
			mal("v2: body is nil", g, env(g, 2).nil().b, t),
			mal("v2: row of two", g, v2(1).arr(2).uint(0).str("a").b, t),
			mal("v2: row of four", g, v2(1).arr(4).uint(0).str("a").int(1).int(1).b, t),
			mal("v2: first row shares a prefix", g, row(v2(1), 1, "a", 1).b, t),
			mal("v2: shares more than the previous id", g, row(row(v2(2), 0, "ab", 1), 3, "c", 1).b, t),
			mal("v2: shares less than the common prefix", g, row(row(v2(2), 0, "ab", 1), 0, "ac", 1).b, t,
				"ab → ac must be written with shared 1, suffix c"),
			mal("v2: shares nothing of a common prefix", g, row(row(v2(2), 0, "node-1", 1), 0, "node-2", 1).b, t,
				"node-1 → node-2 must be written with shared 5, suffix 2"),
			mal("v2: shared prefix ends inside a character", g, row(row(v2(2), 0, "ā", 1), 1, "\x85", 1).b, t,
				"ā is c4 81 and ą is c4 85: the canonical row is [0, ą]"),
			mal("v2: shared not in its smallest form", g, v2(1).arr(3).raw(0xcc, 0).str("a").int(1).b, t),
			mal("v2: negative shared", g, v2(1).arr(3).int(-1).str("a").int(1).b, t),
			mal("v2: rows unsorted", g, row(row(v2(2), 0, "b", 1), 0, "a", 1).b, t),
			mal("v2: rows unsorted after a shared prefix", g, row(row(v2(2), 0, "ab", 1), 1, "a", 1).b, t,
				"the second id is a, which sorts before ab"),
			mal("v2: duplicate actor (empty suffix)", g, row(row(v2(2), 0, "a", 1), 1, "", 2).b, t),
			mal("v2: duplicate actor written in full", g, row(row(v2(2), 0, "a", 1), 0, "a", 2).b, t),
			mal("v2: suffix is a bin", g, v2(1).arr(3).uint(0).bin([]byte("a")).int(1).b, t),
			mal("v2: suffix longer than 255 bytes", g, row(v2(1), 0, long+"x", 1).b, t),
			mal("v2: actor longer than 255 bytes", g, row(row(v2(2), 0, long, 1), 255, "y", 1).b, t,
				"each str is within 255 bytes, the rebuilt id is 256"),
			mal("v2: invalid actor", g, row(v2(1), 0, "", 1).b, t),
			mal("v2: invalid actor built from a valid prefix", g, row(row(v2(2), 0, "a", 1), 1, "\x7f", 1).b, t),
			mal("v2: zero count", g, row(v2(1), 0, "a", 0).b, t),
			mal("v2: negative count", g, row(v2(1), 0, "a", -1).b, t),
			mal("v2: more than 65536 rows", g, append(env(g, 2).b, 0xdd, 0, 1, 0, 1), t,
				"65537 with nothing after it: the cap is checked before the remaining-bytes check"),
			mal("v2: 30001 rows, bytes missing", g, append(env(g, 2).b, 0xdc, 0x75, 0x31), t,
				"past MaxActors, the header passes (a merge may hold up to 65536 actors, SPEC.md 4.4): the missing rows are corrupt"),
			mal("v2: more than 65536 rows as array32 of 2^32-1", g, append(env(g, 2).b, 0xdd, 0xff, 0xff, 0xff, 0xff), t,
				"the cap is checked first (SPEC.md 3.2)"),
			mal("v2: trailing bytes", g, append(row(v2(1), 0, "a", 1).b, 0), t),
			mal("version 3", g, env(g, 3).arr(0).b, t),
		},
	}
}

// gModel is the specification's G-Counter: a map from actor to count, and
// their total (kept so that big vectors stay linear).
type gModel struct {
	counts map[string]int64
	total  *big.Int // exact: a merge may pass int64 (SPEC.md 4.1)
}

func newGModel() *gModel { return &gModel{counts: map[string]int64{}, total: new(big.Int)} }

func (m *gModel) clone() *gModel {
	c := &gModel{counts: make(map[string]int64, len(m.counts)), total: new(big.Int).Set(m.total)}
	for a, n := range m.counts {
		c.counts[a] = n
	}
	return c
}

func gModelStep(m map[string]*gModel, st Step, t *checker) string {
	cur := m[st.Replica]
	switch st.Op {
	case "increment":
		a, n := idOf(t, st.Actor, st.ActorHex), int64(*st.Amount)
		switch {
		case n < 0:
			return "invalid_amount"
		case !validID(a):
			return "invalid_actor"
		}
		if !new(big.Int).Add(cur.total, big.NewInt(n)).IsInt64() {
			return "overflow"
		}
		if n > 0 && cur.counts[a] == 0 && len(cur.counts) >= gMaxActors {
			return "too_large"
		}
		if n > 0 {
			cur.counts[a] += n
			cur.total.Add(cur.total, big.NewInt(n))
		}
	case "merge":
		// No overflow check: the merged total may pass int64.
		out := cur.clone()
		for a, n := range m[st.From].counts {
			out.counts[a] = max(out.counts[a], n)
		}
		if len(out.counts) > gMaxMerged {
			return "too_large"
		}
		out.total.SetInt64(0)
		for _, n := range out.counts {
			out.total.Add(out.total, big.NewInt(n))
		}
		m[st.Replica] = out
	}
	return ""
}

func (m *gModel) pairs() []Pair {
	out := []Pair{}
	for _, a := range sortedKeys(m.counts) {
		if m.counts[a] > 0 {
			out = append(out, Pair{a, I64(m.counts[a])})
		}
	}
	return out
}

func (m *gModel) sum() *big.Int { return m.total }

// refGBody appends a version 1 gcounter body (also a pncounter version 1
// half): [actor, count] pairs, in the order given.
func refGBody(e refEnc, ps []Pair) refEnc {
	e = e.arr(len(ps))
	for _, p := range ps {
		e = e.arr(2).str(p.Actor).int(int64(p.Count))
	}
	return e
}

// refGRows appends a version 2 gcounter body: one front-coded row
// [shared, suffix, count] per pair, in the order given (sorted by actor).
func refGRows(e refEnc, ps []Pair) refEnc {
	e = e.arr(len(ps))
	prev := ""
	for _, p := range ps {
		k := refShared(prev, p.Actor)
		e = e.arr(3).uint(uint64(k)).str(p.Actor[k:]).int(int64(p.Count))
		prev = p.Actor
	}
	return e
}

func checkGCounter(t *checker, raw []byte) {
	var f gFile
	readJSON(t, raw, &f)
	require.NotEmpty(t, f.Scenarios)
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		t.Run(sc.Name, func(t *checker) {
			rs := runG(t, sc, false)
			model := map[string]*gModel{}
			for _, r := range sc.Replicas {
				model[r] = newGModel()
			}
			for j, st := range expandSteps(sc.Steps) {
				require.Equal(t, st.Error, gModelStep(model, st, t), "model disagrees with vector at step %d", j)
			}
			if generated(sc.Steps) {
				require.Empty(t, sc.Final)
				require.Len(t, sc.FinalDigest, len(rs))
				for name, want := range sc.FinalDigest {
					c := rs[name]
					require.Equal(t, want.HexSHA256, sha256Hex(must(c.MarshalBinary())), "%s encoding", name)
					require.Equal(t, want.HexSHA256, sha256Hex(refGRows(env("gcounter", 2), model[name].pairs()).b), "%s: reference encoding of the model", name)
					require.Equal(t, want.Actors, len(model[name].pairs()), "%s actors vs model", name)
					require.Equal(t, want.Actors, c.Len(), "%s actors", name)
					require.Equal(t, bigInt(model[name].sum()), want.Value, "%s value vs model", name)
					require.Equal(t, want.Value, bigInt(c.BigValue()))
				}
				return
			}
			require.Len(t, sc.Final, len(rs))
			for name, want := range sc.Final {
				c := rs[name]
				require.Equal(t, want.Hex, hex.EncodeToString(must(c.MarshalBinary())), "%s encoding", name)
				require.Equal(t, want.Hex, refGRows(env("gcounter", 2), want.Entries).hex(), "%s: reference encoding of the listed entries", name)
				require.Equal(t, model[name].pairs(), want.Entries, "%s entries vs model", name)
				require.Equal(t, bigInt(model[name].sum()), want.Value, "%s value vs model", name)
				require.Equal(t, want.Value, bigInt(c.BigValue()))
				dec := gcounter.New()
				require.NoError(t, dec.UnmarshalBinary(unhex(t, want.Hex)))
				require.True(t, dec.Equal(c), "%s: decode(hex) != state", name)
			}
			// Every merge in the scenario is commutative and idempotent
			// on the final states.
			for a, ca := range rs {
				for b, cb := range rs {
					ab, ba := ca.Clone(), cb.Clone()
					ea, eb := ab.Merge(cb), ba.Merge(ca)
					require.Equal(t, kindOf(t, ea), kindOf(t, eb), "%s⊔%s", a, b)
					if ea == nil {
						require.True(t, ab.Equal(ba), "%s⊔%s not commutative", a, b)
						again := ab.Clone()
						require.NoError(t, again.Merge(cb))
						require.True(t, again.Equal(ab), "not idempotent")
					}
				}
			}
		})
	}
	require.NotEmpty(t, f.Version1)
	for _, c := range f.Version1 {
		t.Run("version 1/"+c.Name, func(t *checker) {
			require.Equal(t, c.Hex, refGBody(env("gcounter", 1), c.Entries).hex(), "reference version 1 encoding")
			dec := gcounter.New()
			require.NoError(t, dec.UnmarshalBinary(unhex(t, c.Hex)))
			require.Equal(t, c.Entries, gPairs(dec))
			require.Equal(t, c.Reencoded, hex.EncodeToString(must(dec.MarshalBinary())))
			require.Equal(t, c.Reencoded, refGRows(env("gcounter", 2), c.Entries).hex(), "reference version 2 encoding")
		})
	}
	checkMalformed(t, f.Malformed)
}

package vectors

// Vectors of tally.json: generation (generateFile) and checks (checkFile).
// See shared.go for what every file shares, and SPEC.md section 11.

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metro "github.com/dgryski/go-metro"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------------------
// tally.json

// AggJSON is an aggregate state. Sum: sum. Min/Max: min or max, or empty.
// Stats: count, sum, min, max and sumsq (decimal), or empty. A combination
// of shards may pass what a state encodes (SPEC.md 7.1): then sum and count
// are clamped to int64, exact_sum and exact_count give them exactly, and
// sumsq may pass 2^128.
// Distinct: the non-zero registers as [index, value] pairs, or empty;
// estimate is informative (it depends on the estimator, not the format).
type AggJSON struct {
	Kind       string  `json:"kind"`
	Empty      bool    `json:"empty,omitempty"`
	Count      *I64    `json:"count,omitempty"`
	Sum        *I64    `json:"sum,omitempty"`
	Min        *I64    `json:"min,omitempty"`
	Max        *I64    `json:"max,omitempty"`
	SumSq      string  `json:"sumsq,omitempty"`
	ExactSum   string  `json:"exact_sum,omitempty"`
	ExactCount string  `json:"exact_count,omitempty"`
	Registers  regList `json:"registers,omitempty"`
	Estimate   *U64    `json:"estimate,omitempty"`
}

// regList is the non-zero registers of a Distinct, carried in JSON as one
// string of space-separated "index:value" pairs in increasing index order.
type regList [][2]int

// MarshalJSON writes the string form.
func (r regList) MarshalJSON() ([]byte, error) {
	parts := make([]string, len(r))
	for i, p := range r {
		parts[i] = fmt.Sprintf("%d:%d", p[0], p[1])
	}
	return json.Marshal(strings.Join(parts, " "))
}

// UnmarshalJSON reads the string form.
func (r *regList) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*r = nil
	for _, f := range strings.Fields(s) {
		var p [2]int
		if _, err := fmt.Sscanf(f, "%d:%d", &p[0], &p[1]); err != nil {
			return err
		}
		*r = append(*r, p)
	}
	return nil
}

// Obs are the observations of one aggregate: integers, or items for
// Distinct (hashed as their UTF-8 bytes).
type Obs struct {
	Values []I64    `json:"values,omitempty"`
	Items  []string `json:"items,omitempty"`
	// ItemRange adds Count more items, Prefix followed by 0..Count-1 in
	// decimal ("u0", "u1", ...), after Items.
	ItemRange *itemRange `json:"item_range,omitempty"`
}

type itemRange struct {
	Prefix string `json:"prefix"`
	Count  int    `json:"count"`
}

// allItems expands Items and ItemRange.
func (o Obs) allItems() []string {
	out := slices.Clone(o.Items)
	if o.ItemRange != nil {
		for i := range o.ItemRange.Count {
			out = append(out, fmt.Sprintf("%s%d", o.ItemRange.Prefix, i))
		}
	}
	return out
}

type shardVec struct {
	Name      string  `json:"name"`
	Kind      string  `json:"kind"`
	Mutator   string  `json:"mutator"`
	ExpiresAt I64     `json:"expires_at"`
	Obs       Obs     `json:"observations"`
	State     AggJSON `json:"state"`
	Hex       string  `json:"hex"`
}

type tallyVec struct {
	Name          string  `json:"name"`
	Kind          string  `json:"kind"`
	FoldedThrough I64     `json:"folded_through"`
	Obs           Obs     `json:"observations"`
	State         AggJSON `json:"state"`
	Hex           string  `json:"hex"`
}

type readShard struct {
	Mutator   string `json:"mutator"`
	ExpiresAt I64    `json:"expires_at"`
	WriteTS   I64    `json:"write_ts"`
	Obs       Obs    `json:"observations"`
}

type gcJSON struct {
	Empty   bool     `json:"empty"`
	WriteTS I64      `json:"write_ts"`
	Delete  []string `json:"delete"`
	Folded  int      `json:"folded"`
	Live    int      `json:"live"`
	Tally   string   `json:"tally_hex,omitempty"`
}

type readVec struct {
	Name    string      `json:"name"`
	Kind    string      `json:"kind"`
	NowUS   I64         `json:"now"`
	GraceUS I64         `json:"grace"`
	Tally   *tallyInput `json:"tally"`
	Shards  []readShard `json:"shards"`
	// Outputs.
	Read      *AggJSON `json:"read,omitempty"`
	ReadError string   `json:"read_error,omitempty"`
	GC        *gcJSON  `json:"gc,omitempty"`
	GCError   string   `json:"gc_error,omitempty"`
	AfterGC   *AggJSON `json:"read_after_gc,omitempty"`
	AfterErr  string   `json:"read_after_gc_error,omitempty"`
}

type tallyInput struct {
	FoldedThrough I64 `json:"folded_through"`
	Obs           Obs `json:"observations"`
}

type tallyFile struct {
	Comment   string      `json:"comment"`
	Shards    []shardVec  `json:"shards"`
	Tallies   []tallyVec  `json:"tallies"`
	Reads     []readVec   `json:"reads"`
	Hashes    []hashVec   `json:"hashes"`
	Refusals  []refusal   `json:"encoder_refusals"`
	Moments   []momentVec `json:"moments"`
	Malformed []Malformed `json:"malformed"`
}

// hashVec is one item's MetroHash64 (seed 1337, SPEC.md 7.2.1) as 16 hex
// digits, and the register index and value the item sets in a Distinct.
type hashVec struct {
	Item     *string `json:"item,omitempty"`
	ItemHex  string  `json:"item_hex,omitempty"`
	Length   int     `json:"length"`
	Hash     string  `json:"hash"`
	Register int     `json:"register"`
	Value    int     `json:"value"`
}

// refusal is a value an encoder refuses (SPEC.md 2.3), with the kind.
type refusal struct {
	Name          string `json:"name"`
	Encoder       string `json:"encoder"` // "tally.shard" or "tally.tally"
	Mutator       string `json:"mutator,omitempty"`
	ExpiresAt     *I64   `json:"expires_at,omitempty"`
	FoldedThrough *I64   `json:"folded_through,omitempty"`
	Error         string `json:"error"`
}

// momentVec is the derived mean and variance of a stats aggregate (SPEC.md
// 7.1 for tally, 8.3 for deltalog): doubles as the shortest decimal that
// reads back as the same double; absent when the stats are empty.
type momentVec struct {
	Name     string `json:"name"`
	Values   []I64  `json:"values"`
	Mean     string `json:"mean,omitempty"`
	Variance string `json:"variance,omitempty"`
	Note     string `json:"note,omitempty"`
}

func fmtDouble(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// refMetro64 is SPEC.md 7.2.1's MetroHash64, written from the
// specification's pseudo-code (it shares no code with go-metro).
func refMetro64(p []byte, seed uint64) uint64 {
	const k0, k1, k2, k3 = 0xD6D018F5, 0xA2AA033B, 0x62992FC1, 0x30BC5B29
	rotr := func(v uint64, n int) uint64 { return v>>n | v<<(64-n) }
	le := func(b []byte, n int) uint64 {
		var v uint64
		for i := n - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		return v
	}
	h := (seed + k2) * k0
	if len(p) >= 32 {
		v0, v1, v2, v3 := h, h, h, h
		for len(p) >= 32 {
			v0 = rotr(v0+le(p, 8)*k0, 29) + v2
			v1 = rotr(v1+le(p[8:], 8)*k1, 29) + v3
			v2 = rotr(v2+le(p[16:], 8)*k2, 29) + v0
			v3 = rotr(v3+le(p[24:], 8)*k3, 29) + v1
			p = p[32:]
		}
		v2 ^= rotr((v0+v3)*k0+v1, 37) * k1
		v3 ^= rotr((v1+v2)*k1+v0, 37) * k0
		v0 ^= rotr((v0+v2)*k0+v3, 37) * k1
		v1 ^= rotr((v1+v3)*k1+v2, 37) * k0
		h += v0 ^ v1
	}
	if len(p) >= 16 {
		v0 := rotr(h+le(p, 8)*k2, 29) * k3
		v1 := rotr(h+le(p[8:], 8)*k2, 29) * k3
		v0 ^= rotr(v0*k0, 21) + v1
		v1 ^= rotr(v1*k3, 21) + v0
		h += v1
		p = p[16:]
	}
	for _, c := range []struct{ n, r int }{{8, 55}, {4, 26}, {2, 48}, {1, 37}} {
		if len(p) >= c.n {
			h += le(p, c.n) * k3
			p = p[c.n:]
			h ^= rotr(h, c.r) * k1
		}
	}
	h ^= rotr(h, 28)
	h *= k0
	h ^= rotr(h, 29)
	return h
}

// hashItems are items of every length class of MetroHash64's branches.
func hashItems() []string {
	items := []string{"", "a", "ab", "abc", "abcd", "alice", "日本", "🦀", "\xff\x00\x80"}
	for _, n := range []int{7, 8, 9, 12, 15, 16, 17, 23, 24, 31, 32, 33, 47, 48, 63, 64, 65, 95, 96, 100} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*37 + n)
		}
		items = append(items, string(b))
	}
	return items
}

// exactMoments is SPEC.md 7.1's mean and variance: the exact quotients
// rounded once to the nearest double (big.Rat rounds to nearest even).
func exactMoments(vs []int64) (mean, variance string) {
	if len(vs) == 0 {
		return "", ""
	}
	n, sum, sq := big.NewInt(int64(len(vs))), new(big.Int), new(big.Int)
	for _, v := range vs {
		x := big.NewInt(v)
		sum.Add(sum, x)
		sq.Add(sq, new(big.Int).Mul(x, x))
	}
	m, _ := new(big.Rat).SetFrac(sum, n).Float64()
	num := new(big.Int).Sub(new(big.Int).Mul(n, sq), new(big.Int).Mul(sum, sum))
	v, _ := new(big.Rat).SetFrac(num, new(big.Int).Mul(n, n)).Float64()
	return fmtDouble(m), fmtDouble(v)
}

// momentCases are the observation lists of the moments vectors, shared by
// tally.json and deltalog.json: both follow one rule (SPEC.md 7.1, 8.3).
// The notes that mention deltalog's earlier mean describe the rule it had
// before (SPEC.md section 12, item 8).
var momentCases = []struct {
	name string
	vs   []int64
	note string
}{
	{"empty", nil, "no mean and no variance (SPEC.md 8.3; earlier deltalog builds read 0 and 0)"},
	{"one value", []int64{7}, ""},
	{"halves", []int64{1, 2, 3, 4}, ""},
	{"thirds", []int64{1, 1, 2}, "mean 4/3 and variance 2/9 are rounded to the nearest double"},
	{"negative", []int64{-5, -6}, ""},
	{"extremes", []int64{math.MinInt64, math.MaxInt64}, "sum -1, mean -0.5; the variance (2^64-1)^2/4 is exact before rounding"},
	{"sum past 2^53", []int64{1 << 53, 1, 1}, "(2^53+2)/3 rounded once; 2^53+2 is a double, so dividing as doubles gives the same double here"},
	{"large sum", []int64{1<<62 + 1, 1<<61 + 3, 7}, "|sum| above 2^53: the exact quotient rounded once (SPEC.md 7.1)"},
	{"mean rounded once", []int64{3518327057984836985, 1, 1}, "sum/3 rounded once is 1.1727756859949455e+18; double(sum)/3 (earlier builds' deltalog mean, SPEC.md section 12, item 8) is 1.1727756859949458e+18"},
	{"variance rounded once", []int64{600599465, 996309882, 35375697}, "the exact (3·Σx² − (Σx)²)/9 rounded once is 1.5549546110400512e+17; Σx²/3 − mean² in doubles gives 1.554954611040052e+17, and two roundings (numerator and 9 as doubles, then divided), a two-pass or Welford's update in doubles give 1.554954611040051e+17"},
	{"large sum, 7 values", []int64{1<<60 + 1, 1<<60 + 3, 1<<59 + 5, 1, 1, 1, 1}, "|sum| above 2^53 and a divisor that is not a power of two"},
	// The all-double formula (double(n)·double(Σx²) − double(Σx)²) /
	// double(n)² gives every variance above; these two tell it apart
	// (momentDoubleFormula checks the value each note names).
	{"variance rounded once: the double formula differs", []int64{199691440, 79099007, 15929639}, "the exact (3·Σx² − (Σx)²)/9 rounded once is 5.811255939682502e+15; the all-double formula (double(n)·double(Σx²) − double(Σx)²) / double(n)² gives 5.811255939682501e+15"},
	{"variance rounded once: the double formula cancels", []int64{1 << 60, 1<<60 + 1, 1<<60 + 2}, "(Σx)² needs 124 bits: as doubles n·Σx² and (Σx)² are the same double, so the all-double formula (double(n)·double(Σx²) − double(Σx)²) / double(n)² gives 0; the exact 2/3 rounded once is 0.6666666666666666"},
}

// momentDoubleFormula is the variance as (double(n)·double(Σx²) −
// double(Σx)²) / double(n)², each of n, Σx and Σx² (exact) rounded to
// the nearest double first: the formula SPEC.md 7.1 rules out.
func momentDoubleFormula(vs []int64) float64 {
	sum, sq := new(big.Int), new(big.Int)
	for _, v := range vs {
		x := big.NewInt(v)
		sum.Add(sum, x)
		sq.Add(sq, new(big.Int).Mul(x, x))
	}
	n := float64(len(vs))
	s, _ := new(big.Float).SetInt(sum).Float64()
	q, _ := new(big.Float).SetInt(sq).Float64()
	return (n*q - s*s) / (n * n)
}

// aggKind is one aggregate type, erased so that vectors can name it.
type aggKind struct {
	build       func(o Obs) (any, error)
	shard       func(mutator string, exp int64, st any) ([]byte, error)
	tally       func(ft int64, st any) ([]byte, error)
	decodeShard func([]byte) (string, int64, any, error)
	decodeTally func([]byte) (int64, any, error)
	json        func(st any) AggJSON
	readGC      func(db store.Partitions, now time.Time, grace time.Duration) (any, error, tally.GCPlan, error, any, error)
}

func mkAgg[A tally.Aggregate[A]](newA func() A, add func(A, int64) error, addItem func(A, string), toJSON func(A) AggJSON) aggKind {
	return aggKind{
		build: func(o Obs) (any, error) {
			a := newA()
			for _, v := range o.Values {
				if err := add(a, int64(v)); err != nil {
					return nil, err
				}
			}
			for _, it := range o.allItems() {
				addItem(a, it)
			}
			return a, nil
		},
		shard: func(m string, exp int64, st any) ([]byte, error) {
			return tally.Shard[A]{Mutator: crdt.ActorID(m), ExpiresAt: exp, State: st.(A)}.MarshalBinary()
		},
		tally: func(ft int64, st any) ([]byte, error) {
			return tally.Tally[A]{FoldedThrough: ft, State: st.(A)}.MarshalBinary()
		},
		decodeShard: func(b []byte) (string, int64, any, error) {
			s, err := tally.DecodeShard[A](b)
			return string(s.Mutator), s.ExpiresAt, s.State, err
		},
		decodeTally: func(b []byte) (int64, any, error) {
			s, err := tally.DecodeTally[A](b)
			return s.FoldedThrough, s.State, err
		},
		json: func(st any) AggJSON { return toJSON(st.(A)) },
		readGC: func(db store.Partitions, now time.Time, grace time.Duration) (any, error, tally.GCPlan, error, any, error) {
			c := must(tally.New[A](db, "k", tally.Options{Clock: func() time.Time { return now }, Grace: grace, MaxSkew: grace / 3}))
			ctx := context.Background()
			v, rerr := c.ReadComplete(ctx)
			plan, gerr := c.GC(ctx)
			after, aerr := c.ReadComplete(ctx)
			return v, rerr, plan, gerr, after, aerr
		},
	}
}

var aggKinds = map[string]aggKind{
	"sum": mkAgg(func() *tally.Sum { return new(tally.Sum) }, (*tally.Sum).Add, nil,
		func(s *tally.Sum) AggJSON {
			return AggJSON{Kind: "sum", Sum: ip(s.Value()), ExactSum: past(s.BigValue())}
		}),
	"min": mkAgg(func() *tally.Min { return new(tally.Min) }, func(m *tally.Min, v int64) error { m.Add(v); return nil }, nil,
		func(m *tally.Min) AggJSON {
			if v, ok := m.Value(); ok {
				return AggJSON{Kind: "min", Min: ip(v)}
			}
			return AggJSON{Kind: "min", Empty: true}
		}),
	"max": mkAgg(func() *tally.Max { return new(tally.Max) }, func(m *tally.Max, v int64) error { m.Add(v); return nil }, nil,
		func(m *tally.Max) AggJSON {
			if v, ok := m.Value(); ok {
				return AggJSON{Kind: "max", Max: ip(v)}
			}
			return AggJSON{Kind: "max", Empty: true}
		}),
	"stats": mkAgg(func() *tally.Stats { return new(tally.Stats) }, (*tally.Stats).Add, nil,
		func(s *tally.Stats) AggJSON {
			if s.Count() == 0 {
				return AggJSON{Kind: "stats", Empty: true}
			}
			mn, _ := s.Min()
			mx, _ := s.Max()
			c := s.Summary()
			return AggJSON{Kind: "stats", Count: ip(s.Count()), Sum: ip(s.Sum()), Min: ip(mn), Max: ip(mx), SumSq: s.SumOfSquares().String(),
				ExactSum: past(c.BigSum()), ExactCount: past(c.BigCount())}
		}),
	"distinct": mkAgg(func() *tally.Distinct { return new(tally.Distinct) }, nil, (*tally.Distinct).AddString,
		func(d *tally.Distinct) AggJSON {
			regs := distinctRegisters(must(tally.Tally[*tally.Distinct]{State: d}.MarshalBinary()))
			if len(regs) == 0 {
				return AggJSON{Kind: "distinct", Empty: true}
			}
			e := U64(d.Estimate())
			return AggJSON{Kind: "distinct", Registers: regs, Estimate: &e}
		}),
}

// distinctRegisters extracts the non-zero registers from a Distinct tally
// encoding, parsing the bytes by the layout in SPEC.md: the body is the
// last value, [14, bin]; the bin is the last thing in the input.
func distinctRegisters(b []byte) regList {
	// Find the bin header from the end: try the three bin forms.
	var raw []byte
	for i := len(b) - 1; i >= 0; i-- {
		n := len(b) - i
		switch {
		case b[i] == 0xc4 && i+1 < len(b) && int(b[i+1]) == n-2:
			raw = b[i+2:]
		case b[i] == 0xc5 && i+2 < len(b) && int(binary.BigEndian.Uint16(b[i+1:])) == n-3:
			raw = b[i+3:]
		default:
			continue
		}
		break
	}
	var out regList
	if len(raw) == 1<<14 {
		for i, r := range raw {
			if r != 0 {
				out = append(out, [2]int{i, int(r)})
			}
		}
		return out
	}
	for off := 0; off+4 <= len(raw); off += 4 {
		v := binary.BigEndian.Uint32(raw[off:])
		out = append(out, [2]int{int(v >> 8), int(v & 0xff)})
	}
	return out
}

func decodeAgg(t *checker, kind string, data []byte, shard bool) (any, error) {
	k, ok := aggKinds[kind]
	require.True(t, ok, "unknown aggregate kind %q", kind)
	if shard {
		_, _, st, err := k.decodeShard(data)
		return st, err
	}
	_, st, err := k.decodeTally(data)
	return st, err
}

// past returns x in decimal when it does not fit in int64, else "".
func past(x *big.Int) string {
	if x.IsInt64() {
		return ""
	}
	return x.String()
}

// clampBig returns x, or the int64 bound it passes.
func clampBig(x *big.Int) *I64 {
	if x.IsInt64() {
		return ip(x.Int64())
	}
	return ip(map[int]int64{1: math.MaxInt64, -1: math.MinInt64}[x.Sign()])
}

// aggModel computes an aggregate from observations with plain arithmetic,
// independently of package tally, exactly. It also returns "overflow" when
// the result does not fit the format (SPEC.md 7.1).
func aggModel(kind string, o Obs) (AggJSON, string) {
	out := AggJSON{Kind: kind}
	switch kind {
	case "sum":
		s := new(big.Int)
		for _, v := range o.Values {
			s.Add(s, big.NewInt(int64(v)))
		}
		out.Sum, out.ExactSum = clampBig(s), past(s)
		if !s.IsInt64() {
			return out, "overflow"
		}
	case "min", "max", "stats":
		if len(o.Values) == 0 {
			out.Empty = true
			return out, ""
		}
		mn, mx := int64(o.Values[0]), int64(o.Values[0])
		s, sq := new(big.Int), new(big.Int)
		for _, v := range o.Values {
			mn, mx = min(mn, int64(v)), max(mx, int64(v))
			b := big.NewInt(int64(v))
			s.Add(s, b)
			sq.Add(sq, new(big.Int).Mul(b, b))
		}
		switch kind {
		case "min":
			out.Min = ip(mn)
		case "max":
			out.Max = ip(mx)
		default:
			out.Count, out.Sum, out.Min, out.Max, out.SumSq = ip(int64(len(o.Values))), clampBig(s), ip(mn), ip(mx), sq.String()
			out.ExactSum = past(s)
			if !s.IsInt64() || sq.BitLen() > 128 {
				return out, "overflow"
			}
		}
	case "distinct":
		regs := hllRegisters(o.allItems())
		for i, r := range regs {
			if r != 0 {
				out.Registers = append(out.Registers, [2]int{i, int(r)})
			}
		}
		out.Empty = len(out.Registers) == 0
	}
	return out, ""
}

// hllRegisters is SPEC.md's Distinct insertion: x = MetroHash64(item, seed
// 1337); register index = the top 14 bits of x; value = 1 + the number of
// leading zeros of (x << 14 | 1 << 13); each register keeps its maximum.
func hllRegisters(items []string) []byte {
	regs := make([]byte, 1<<14)
	for _, it := range items {
		x := metro.Hash64([]byte(it), 1337)
		i := x >> 50
		r := byte(bits.LeadingZeros64(x<<14|1<<13) + 1)
		regs[i] = max(regs[i], r)
	}
	return regs
}

// refAggBody encodes an aggregate body from its JSON state.
func refAggBody(t *checker, e refEnc, a AggJSON) refEnc {
	switch a.Kind {
	case "sum":
		return e.int(int64(*a.Sum))
	case "min", "max":
		if a.Empty {
			return e.nil()
		}
		if a.Kind == "min" {
			return e.int(int64(*a.Min))
		}
		return e.int(int64(*a.Max))
	case "stats":
		if a.Empty {
			return e.nil()
		}
		sq, ok := new(big.Int).SetString(a.SumSq, 10)
		require.True(t, ok)
		lo := new(big.Int).And(sq, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
		hi := new(big.Int).Rsh(sq, 64).Uint64()
		return e.arr(6).int(int64(*a.Count)).int(int64(*a.Sum)).int(int64(*a.Min)).int(int64(*a.Max)).uint(hi).uint(lo)
	case "distinct":
		e = e.arr(2).uint(14)
		if 4*len(a.Registers) >= 1<<14 {
			dense := make([]byte, 1<<14)
			for _, r := range a.Registers {
				dense[r[0]] = byte(r[1])
			}
			return e.bin(dense)
		}
		var sparse []byte
		for _, r := range a.Registers {
			sparse = binary.BigEndian.AppendUint32(sparse, uint32(r[0])<<8|uint32(r[1]))
		}
		return e.bin(sparse)
	}
	t.Fatalf("kind %q", a.Kind)
	return e
}

func refShard(t *checker, kind, mutator string, exp int64, a AggJSON) string {
	return refAggBody(t, env("tally.shard", 1).arr(4).str(kind).str(mutator).int(exp), a).hex()
}

func refTally(t *checker, kind string, ft int64, a AggJSON) string {
	return refAggBody(t, env("tally.tally", 1).arr(3).str(kind).int(ft), a).hex()
}

// sameAgg compares states ignoring the informative estimate.
func sameAgg(t *checker, want, got AggJSON, msg string) {
	want.Estimate, got.Estimate = nil, nil
	require.Equal(t, want, got, msg)
}

func ints(vs ...int64) Obs {
	o := Obs{Values: []I64{}}
	for _, v := range vs {
		o.Values = append(o.Values, I64(v))
	}
	return o
}

func items(n int, prefix string) Obs { return Obs{ItemRange: &itemRange{Prefix: prefix, Count: n}} }

const hourUS = int64(time.Hour / time.Microsecond)

func genTally(t *checker) any {
	var f tallyFile
	f.Comment = "Sharded tally (SPEC.md section 7). Times are microseconds since the Unix epoch."
	const exp = 1_700_000_000_000_000
	shard := func(name, kind, mutator string, o Obs) {
		k := aggKinds[kind]
		st := must(k.build(o))
		f.Shards = append(f.Shards, shardVec{Name: name, Kind: kind, Mutator: mutator, ExpiresAt: exp, Obs: o, State: k.json(st),
			Hex: hex.EncodeToString(must(k.shard(mutator, exp, st)))})
	}
	shard("sum", "sum", "m1", ints(5, 7, -2))
	shard("sum negative", "sum", "m1", ints(-1000))
	shard("sum empty", "sum", "5f0c4a8e-3c2b-4d1e-9a7f-2b6c8d9e0f1a", ints())
	shard("sum extremes", "sum", "m2", ints(math.MaxInt64, math.MinInt64))
	shard("min", "min", "m1", ints(3, -7, 12))
	shard("min empty", "min", "m1", ints())
	shard("max", "max", "m1", ints(3, -7, 12))
	shard("max empty", "max", "m1", ints())
	shard("stats", "stats", "m1", ints(1, 2, 3))
	shard("stats single", "stats", "m1", ints(-5))
	shard("stats wide sum of squares", "stats", "m1", ints(math.MinInt64, math.MaxInt64, 1))
	shard("stats empty", "stats", "m1", ints())
	// The bounds a decoder checks (SPEC.md 7.1), each reached: 4 values
	// from 0 to 10 summing to 10..30; summing to 15, their sum of squares
	// lies in [L, G] = [113, 125]; with negatives, L takes ⌊r/d⌋ (floor).
	shard("stats at the least sum", "stats", "m1", ints(0, 10, 0, 0))
	shard("stats at the greatest sum", "stats", "m1", ints(0, 10, 10, 10))
	shard("stats at the least sum of squares", "stats", "m1", ints(0, 10, 2, 3))
	shard("stats at the greatest sum of squares", "stats", "m1", ints(0, 10, 5, 0))
	shard("stats of negatives at the least sum of squares", "stats", "m1", ints(-10, 0, -2, -3))
	shard("distinct empty", "distinct", "m1", Obs{})
	shard("distinct sparse", "distinct", "m1", Obs{Items: []string{"alice", "bob", "carol", "alice"}})
	shard("distinct sparse 200", "distinct", "m1", items(200, "user-"))
	shard("distinct dense", "distinct", "m1", items(6000, "u"))
	// The sparse/dense boundary: the fewest items u0, u1, ... that set 4096
	// registers (dense), and one item fewer (4095 registers: sparse).
	dense := func(n int) bool {
		k := aggKinds["distinct"]
		return len(k.json(must(k.build(items(n, "u")))).Registers) >= 4096
	}
	n := sort.Search(6000, dense)
	require.True(t, n < 6000 && n > 4096, "boundary item count %d", n)
	shard("distinct sparse at 4095 registers", "distinct", "m1", items(n-1, "u"))
	shard("distinct dense at 4096 registers", "distinct", "m1", items(n, "u"))
	tal := func(name, kind string, ft int64, o Obs) {
		k := aggKinds[kind]
		st := must(k.build(o))
		f.Tallies = append(f.Tallies, tallyVec{Name: name, Kind: kind, FoldedThrough: I64(ft), Obs: o, State: k.json(st),
			Hex: hex.EncodeToString(must(k.tally(ft, st)))})
	}
	tal("sum, nothing folded", "sum", 0, ints())
	tal("sum", "sum", exp, ints(1, 2, 3, 4))
	tal("max", "max", exp, ints(9))
	tal("stats", "stats", exp, ints(10, 20))
	tal("distinct", "distinct", exp, Obs{Items: []string{"x", "y"}})

	now := int64(1_700_100_000_000_000)
	grace := 24 * hourUS
	read := func(name, kind string, ti *tallyInput, shards ...readShard) {
		f.Reads = append(f.Reads, runRead(t, readVec{Name: name, Kind: kind, NowUS: I64(now), GraceUS: I64(grace), Tally: ti, Shards: shards}))
	}
	old := now - grace - 2*hourUS // final: folded by GC
	edge := now - grace           // not strictly before the cutoff: stays live
	live := now + 20*hourUS       // a live mutator
	rs := func(m string, e int64, o Obs) readShard {
		return readShard{Mutator: m, ExpiresAt: I64(e), WriteTS: I64(e - 1000), Obs: o}
	}
	read("sum: no tally, nothing final", "sum", nil, rs("m1", live, ints(1, 2)), rs("m2", live, ints(10)))
	read("sum: GC folds final shards only", "sum", nil, rs("a", old, ints(5)), rs("b", old-1000, ints(7)), rs("c", edge, ints(100)), rs("d", live, ints(1000)))
	read("sum: shards at or below folded_through are skipped and deleted again", "sum",
		&tallyInput{FoldedThrough: I64(old), Obs: ints(12)},
		rs("a", old, ints(5)), rs("b", old-1000, ints(7)), rs("c", old+1, ints(1)), rs("d", live, ints(2)))
	read("max across tally and shards", "max", &tallyInput{FoldedThrough: I64(old - 5000), Obs: ints(40)},
		rs("a", old, ints(3, 50)), rs("b", live, ints(45)))
	read("stats across shards", "stats", nil, rs("a", old, ints(1, 2)), rs("b", live, ints(3)))
	read("distinct union", "distinct", nil, rs("a", old, Obs{Items: []string{"x", "y"}}), rs("b", live, Obs{Items: []string{"y", "z"}}))
	read("empty counter", "min", nil)
	// Past int64 or 2^128 (SPEC.md 7.1, 7.4): shards that each fit read
	// exactly together, clamped where an int64 is asked for; GC folds the
	// longest run of whole expires_at groups whose tally fits and leaves
	// the rest. Mutator names run against expires_at, so that GC's order
	// shows.
	read("sum past int64: the read is exact", "sum", nil, rs("a", old, ints(math.MaxInt64)), rs("b", live, ints(1)))
	read("sum below int64: the read is exact", "sum", nil, rs("a", old, ints(math.MinInt64)), rs("b", live, ints(-1)))
	read("sum past int64: GC folds the shards whose tally fits", "sum", nil,
		rs("c", old-2000, ints(5)), rs("b", old-1000, ints(math.MaxInt64-5)), rs("a", old, ints(1)))
	read("sum past int64 and back: GC folds them all", "sum", nil,
		rs("c", old-2000, ints(math.MaxInt64)), rs("b", old-1000, ints(1)), rs("a", old, ints(-1)))
	read("sum past int64: GC folds whole expires_at groups", "sum", nil,
		rs("a", old-1000, ints(5)), rs("b", old, ints(1)), rs("c", old, ints(math.MaxInt64)))
	read("sum past int64: a tally and a live shard", "sum", &tallyInput{FoldedThrough: I64(old), Obs: ints(math.MaxInt64)},
		rs("a", live, ints(math.MaxInt64)))
	read("stats sum past int64: the read is exact", "stats", nil, rs("a", old, ints(math.MaxInt64)), rs("b", live, ints(1)))
	read("stats sum past int64: GC folds the shards whose tally fits", "stats", nil,
		rs("b", old-1000, ints(math.MaxInt64)), rs("a", old, ints(1)))
	read("stats sum of squares past 2^128: the read is exact", "stats", nil,
		rs("a", old, ints(math.MinInt64, math.MaxInt64)), rs("b", old, ints(math.MinInt64, math.MaxInt64)), rs("c", live, ints(math.MinInt64, math.MaxInt64)))
	read("stats sum of squares past 2^128: GC folds the shards whose tally fits", "stats", nil,
		rs("b", old-1000, ints(math.MinInt64, math.MaxInt64, 1<<33)), rs("a", old, ints(math.MinInt64, math.MaxInt64, 1<<33)))
	read("stats sum of squares just below 2^128", "stats", nil,
		rs("a", old, ints(math.MinInt64, math.MaxInt64)), rs("b", live, ints(math.MinInt64, math.MaxInt64)))
	// The read is exact, so its order does not matter: a partial sum past
	// int64 in (expires_at, mutator) order, or the tally's, is no error.
	read("sum: a partial sum past int64, the total fits", "sum", nil,
		rs("b", live, ints(math.MaxInt64)), rs("c", live+1000, ints(1)), rs("a", live+2000, ints(-1)))
	read("sum: the tally's sum brings the shards' back", "sum", &tallyInput{FoldedThrough: I64(old), Obs: ints(-1)},
		rs("a", live, ints(math.MaxInt64)), rs("b", live+1000, ints(1)))

	sum := func(vs ...any) []byte {
		e := env("tally.shard", 1).arr(4).str("sum").str("m1").int(exp)
		for _, v := range vs {
			switch v := v.(type) {
			case int:
				e = e.int(int64(v))
			case []byte:
				e = e.raw(v...)
			}
		}
		return e.b
	}
	sh := func(kind string, body refEnc) []byte {
		return append(env("tally.shard", 1).arr(4).str(kind).str("m1").int(exp).b, body.b...)
	}
	for _, it := range hashItems() {
		x := metro.Hash64([]byte(it), 1337)
		d := new(tally.Distinct)
		d.AddString(it)
		regs := distinctRegisters(must(tally.Tally[*tally.Distinct]{State: d}.MarshalBinary()))
		require.Len(t, regs, 1)
		s, h := jsonID(it)
		if it == "" {
			s, h = sp(""), ""
		}
		f.Hashes = append(f.Hashes, hashVec{Item: s, ItemHex: h, Length: len(it), Hash: fmt.Sprintf("%016x", x), Register: regs[0][0], Value: regs[0][1]})
	}
	for _, r := range []refusal{
		{Name: "shard expires_at zero", Encoder: "tally.shard", Mutator: "m1", ExpiresAt: ip(0)},
		{Name: "shard expires_at negative", Encoder: "tally.shard", Mutator: "m1", ExpiresAt: ip(-1)},
		{Name: "shard with an invalid mutator", Encoder: "tally.shard", Mutator: "", ExpiresAt: ip(exp)},
		{Name: "shard with an invalid mutator and expires_at zero", Encoder: "tally.shard", Mutator: "", ExpiresAt: ip(0)},
		{Name: "tally folded_through negative", Encoder: "tally.tally", FoldedThrough: ip(-1)},
	} {
		r.Error = kindOf(t, encodeRefusal(r))
		require.NotEmpty(t, r.Error, r.Name)
		f.Refusals = append(f.Refusals, r)
	}
	for _, c := range momentCases {
		st := new(tally.Stats)
		for _, v := range c.vs {
			require.NoError(t, st.Add(v))
		}
		mv := momentVec{Name: c.name, Values: []I64{}, Note: c.note}
		for _, v := range c.vs {
			mv.Values = append(mv.Values, I64(v))
		}
		if m, ok := st.Mean(); ok {
			mv.Mean = fmtDouble(m)
		}
		if v, ok := st.Variance(); ok {
			mv.Variance = fmtDouble(v)
		}
		f.Moments = append(f.Moments, mv)
	}
	f.Malformed = []Malformed{
		mal("sum shard read as min", "tally.shard:min", sum(5), t),
		mal("tally read as shard", "tally.shard:sum", append(env("tally.tally", 1).arr(3).str("sum").int(0).b, 5), t),
		mal("unknown kind", "tally.shard:sum", append(env("tally.shard", 1).arr(4).str("avg").str("m1").int(exp).b, 5), t),
		mal("expires_at zero", "tally.shard:sum", append(env("tally.shard", 1).arr(4).str("sum").str("m1").int(0).b, 5), t),
		mal("expires_at negative", "tally.shard:sum", append(env("tally.shard", 1).arr(4).str("sum").str("m1").int(-1).b, 5), t),
		mal("invalid mutator", "tally.shard:sum", append(env("tally.shard", 1).arr(4).str("sum").str("").int(exp).b, 5), t),
		mal("shard of three fields", "tally.shard:sum", env("tally.shard", 1).arr(3).str("sum").str("m1").int(exp).b, t),
		mal("shard of five fields", "tally.shard:sum", env("tally.shard", 1).arr(5).str("sum").str("m1").int(exp).int(5).nil().b, t,
			"a fixed-shape array with an extra field is corrupt, never too_large (SPEC.md section 12, item 2: earlier builds said too_large)"),
		mal("fixed-shape array header above 65536", "tally.shard:sum", append(env("tally.shard", 1).b, 0xdd, 0, 1, 0, 1, 0xa3, 's', 'u', 'm'), t,
			"65537 fields in a canonical array32 header: above the nominal cap of fixed-shape arrays, too_large (SPEC.md 3.2, section 12 item 7)"),
		mal("sum is nil", "tally.shard:sum", sum([]byte{0xc0}), t),
		mal("trailing bytes", "tally.shard:sum", append(sum(5), 0xc0), t),
		mal("negative folded_through", "tally.tally:sum", append(env("tally.tally", 1).arr(3).str("sum").int(-1).b, 5), t),
		mal("stats count 0", "tally.shard:stats", sh("stats", refEnc{}.arr(6).int(0).int(0).int(0).int(0).uint(0).uint(0)), t),
		mal("stats min above max", "tally.shard:stats", sh("stats", refEnc{}.arr(6).int(2).int(3).int(2).int(1).uint(0).uint(5)), t),
		mal("stats sum outside [min·n, max·n]", "tally.shard:stats", sh("stats", refEnc{}.arr(6).int(2).int(100).int(1).int(2).uint(0).uint(5)), t),
		mal("stats single observation inconsistent", "tally.shard:stats", sh("stats", refEnc{}.arr(6).int(1).int(3).int(3).int(3).uint(0).uint(10)), t),
		mal("stats of five fields", "tally.shard:stats", sh("stats", refEnc{}.arr(5).int(1).int(3).int(3).int(3).uint(0)), t),
		mal("distinct precision 12", "tally.shard:distinct", sh("distinct", refEnc{}.arr(2).uint(12).bin(nil)), t),
		mal("distinct sparse indexes not increasing", "tally.shard:distinct", sh("distinct", refEnc{}.arr(2).uint(14).bin([]byte{0, 5, 0, 1, 0, 4, 0, 1})), t),
		mal("distinct sparse register 0", "tally.shard:distinct", sh("distinct", refEnc{}.arr(2).uint(14).bin([]byte{0, 5, 0, 0})), t),
		mal("distinct sparse register 52", "tally.shard:distinct", sh("distinct", refEnc{}.arr(2).uint(14).bin([]byte{0, 5, 0, 52})), t),
		mal("distinct sparse index 16384", "tally.shard:distinct", sh("distinct", refEnc{}.arr(2).uint(14).bin([]byte{0x40, 0, 0, 1})), t),
		mal("distinct registers of 6 bytes", "tally.shard:distinct", sh("distinct", refEnc{}.arr(2).uint(14).bin(make([]byte, 6))), t),
		mal("distinct dense with few registers set", "tally.shard:distinct", sh("distinct", refEnc{}.arr(2).uint(14).bin(append([]byte{1}, make([]byte, 1<<14-1)...))), t),
		mal("distinct bin longer than 16384", "tally.shard:distinct", sh("distinct", refEnc{}.arr(2).uint(14).raw(0xc5, 0x40, 0x01)), t,
			"the bin header alone claims 16385 bytes: too_large before the missing bytes are noticed"),
		mal("stats two values not summing to min + max", "tally.shard:stats", sh("stats", refEnc{}.arr(6).int(2).int(11).int(0).int(10).uint(0).uint(101)), t,
			"two values are min and max: the sum must be 10, although 11 is in [min·n, max·n] = [0, 20] and 101 in [L, G] = [100, 101]"),
		mal("stats sum of squares below the least", "tally.shard:stats", sh("stats", refEnc{}.arr(6).int(4).int(15).int(0).int(10).uint(0).uint(111)), t,
			"4 values from 0 to 10 summing to 15: L = 113 (0, 10, 2, 3), G = 125; 111 is odd like the sum and above sum²/count"),
		mal("stats sum of squares above the greatest", "tally.shard:stats", sh("stats", refEnc{}.arr(6).int(4).int(15).int(0).int(10).uint(0).uint(127)), t,
			"4 values from 0 to 10 summing to 15: G = 125 (0, 10, 5, 0); 127 is odd like the sum and below count·max²"),
		mal("stats of negatives, sum of squares below the least", "tally.shard:stats", sh("stats", refEnc{}.arr(6).int(4).int(-15).int(-10).int(0).uint(0).uint(111)), t,
			"4 values from -10 to 0 summing to -15: r = -5, d = 2, q = ⌊-5/2⌋ = -3, k = 1, L = 113 (-10, 0, -3, -2); division rounding toward zero gives q = -2, k = -1 and 111"),
		mal("stats sum of squares of the wrong parity", "tally.shard:stats", sh("stats", refEnc{}.arr(6).int(4).int(20).int(0).int(10).uint(0).uint(151)), t,
			"4 values from 0 to 10 summing to 20 have a sum of squares from 150 to 200; 151 is within those bounds but odd while the sum is even"),
		mal("distinct dense register 52", "tally.shard:distinct", sh("distinct", refEnc{}.arr(2).uint(14).bin(denseRegs(4096, 52))), t,
			"4096 registers of 1, the first 52: above 64 - 14 + 1"),
		mal("distinct dense with 4095 registers set", "tally.shard:distinct", sh("distinct", refEnc{}.arr(2).uint(14).bin(denseRegs(4095, 1))), t,
			"the sparse form (4 · 4095 bytes) is the one valid form"),
		mal("distinct registers as str", "tally.shard:distinct", sh("distinct", refEnc{}.arr(2).uint(14).str("")), t),
	}
	return f
}

// denseRegs is a dense register array of 16384 bytes with the first n
// registers set to 1, register 0 to first.
func denseRegs(n int, first byte) []byte {
	b := make([]byte, 1<<14)
	for i := range n {
		b[i] = 1
	}
	b[0] = first
	return b
}

// runRead sets up a counter's partition in memory.Partitions from the
// vector's inputs, reads, runs one GC and reads again, recording the
// outputs.
func runRead(t *checker, rv readVec) readVec {
	k := aggKinds[rv.Kind]
	db := memory.NewPartitions()
	ctx := context.Background()
	if rv.Tally != nil {
		st := must(k.build(rv.Tally.Obs))
		b := must(k.tally(int64(rv.Tally.FoldedThrough), st))
		require.NoError(t, db.Apply(ctx, tally.GCBatch{WriteTS: int64(rv.Tally.FoldedThrough), Tally: b}.Mutations("k")))
	}
	for _, s := range rv.Shards {
		st := must(k.build(s.Obs))
		b := must(k.shard(s.Mutator, int64(s.ExpiresAt), st))
		put := store.Mutation{Partition: "k", Op: store.OpPut, Key: tally.ShardRowKey(crdt.ActorID(s.Mutator)), Value: b, Timestamp: int64(s.WriteTS)}
		require.NoError(t, db.Apply(ctx, []store.Mutation{put}))
	}
	v, rerr, plan, gerr, after, aerr := k.readGC(db, time.UnixMicro(int64(rv.NowUS)), time.Duration(rv.GraceUS)*time.Microsecond)
	out := rv
	out.Read, out.GC, out.AfterGC, out.AfterErr = nil, nil, nil, ""
	out.ReadError, out.GCError = kindOf(t, rerr), kindOf(t, gerr)
	if rerr == nil {
		j := k.json(v)
		out.Read = &j
	}
	if gerr == nil {
		g := gcJSON{Empty: plan.Empty(), WriteTS: I64(plan.Batch.WriteTS), Delete: []string{}, Folded: plan.Folded, Live: plan.Live, Tally: hex.EncodeToString(plan.Batch.Tally)}
		for _, d := range plan.Batch.Delete {
			g.Delete = append(g.Delete, string(d))
		}
		out.GC = &g
		if out.AfterErr = kindOf(t, aerr); aerr == nil {
			j := k.json(after)
			out.AfterGC = &j
		}
	}
	return out
}

func checkTally(t *checker, raw []byte) {
	var f tallyFile
	readJSON(t, raw, &f)
	// Hashes, encoder refusals and moments first: they do not depend on
	// the aggregates below.
	require.NotEmpty(t, f.Hashes)
	lengths := map[int]bool{}
	for _, h := range f.Hashes {
		t.Run(fmt.Sprintf("hash/%d", h.Length), func(t *checker) { checkHash(t, h) })
		lengths[h.Length] = true
	}
	for _, n := range []int{0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 33, 64, 65} {
		require.True(t, lengths[n], "no hash vector of length %d", n)
	}
	require.NotEmpty(t, f.Refusals)
	for _, r := range f.Refusals {
		t.Run("refusal/"+r.Name, func(t *checker) { requireKind(t, r.Error, encodeRefusal(r), r.Name) })
	}
	require.NotEmpty(t, f.Moments)
	for _, mv := range f.Moments {
		t.Run("moments/"+mv.Name, func(t *checker) { checkMoments(t, mv) })
	}
	require.NotEmpty(t, f.Shards)
	kindsSeen := map[string]bool{}
	for _, s := range f.Shards {
		kindsSeen[s.Kind] = true
		t.Run("shard/"+s.Name, func(t *checker) { checkShard(t, s) })
	}
	require.Len(t, kindsSeen, len(aggKinds), "every aggregate kind has shard vectors")
	for _, tv := range f.Tallies {
		k := aggKinds[tv.Kind]
		st := must(k.build(tv.Obs))
		require.Equal(t, tv.Hex, hex.EncodeToString(must(k.tally(int64(tv.FoldedThrough), st))), tv.Name)
		model, _ := aggModel(tv.Kind, tv.Obs)
		sameAgg(t, model, tv.State, tv.Name)
		require.Equal(t, tv.Hex, refTally(t, tv.Kind, int64(tv.FoldedThrough), tv.State), tv.Name)
		ft, dec, err := k.decodeTally(unhex(t, tv.Hex))
		require.NoError(t, err)
		require.EqualValues(t, tv.FoldedThrough, ft)
		sameAgg(t, tv.State, k.json(dec), tv.Name)
	}
	require.NotEmpty(t, f.Reads)
	for _, rv := range f.Reads {
		t.Run(rv.Name, func(t *checker) {
			got := runRead(t, rv)
			require.Equal(t, rv, got, "reference implementation vs vector")
			// Model: a read combines the tally with every shard whose
			// expires_at is above folded_through, exactly, and never
			// fails; GC folds the final shards in increasing (expires_at,
			// mutator) order, the longest run of whole expires_at groups
			// whose result fits the format.
			var ft int64
			var all Obs
			if rv.Tally != nil {
				ft = int64(rv.Tally.FoldedThrough)
				all = appendObs(all, rv.Tally.Obs)
			}
			folded := all
			newT := ft
			cutoff := int64(rv.NowUS) - int64(rv.GraceUS)
			var del []string
			nFolded, nLive := 0, 0
			var merr, ferr string
			ordered := slices.Clone(rv.Shards)
			slices.SortFunc(ordered, func(a, b readShard) int {
				return cmp.Or(cmp.Compare(a.ExpiresAt, b.ExpiresAt), cmp.Compare(a.Mutator, b.Mutator))
			})
			var final []readShard
			for _, s := range ordered {
				if int64(s.ExpiresAt) > ft {
					all = appendObs(all, s.Obs)
				}
				switch {
				case int64(s.ExpiresAt) <= ft:
					del = append(del, s.Mutator)
				case int64(s.ExpiresAt) < cutoff:
					final = append(final, s)
				default:
					nLive++
				}
			}
			acc, n := folded, 0
			for i, s := range final {
				acc = appendObs(acc, s.Obs)
				if _, e := aggModel(rv.Kind, acc); e == "" && (i+1 == len(final) || final[i+1].ExpiresAt != s.ExpiresAt) {
					n = i + 1
				}
			}
			for _, s := range final[:n] {
				folded = appendObs(folded, s.Obs)
				newT = max(newT, int64(s.ExpiresAt))
				del = append(del, s.Mutator)
			}
			nFolded, nLive = n, nLive+len(final)-n
			model, _ := aggModel(rv.Kind, all)
			require.Equal(t, merr, rv.ReadError, "read error vs model")
			if merr == "" {
				sameAgg(t, model, *rv.Read, "read vs model")
			}
			foldedModel, _ := aggModel(rv.Kind, folded)
			require.Equal(t, ferr, rv.GCError, "gc error vs model")
			if ferr != "" {
				return
			}
			sort.Strings(del)
			require.Equal(t, len(del) == 0, rv.GC.Empty)
			if len(del) > 0 {
				require.Equal(t, del, rv.GC.Delete)
				require.EqualValues(t, newT, rv.GC.WriteTS)
				require.Equal(t, nFolded, rv.GC.Folded)
				require.Equal(t, refTally(t, rv.Kind, newT, foldedModel), rv.GC.Tally, "GC tally vs model")
			}
			require.Equal(t, nLive, rv.GC.Live)
			require.Equal(t, merr, rv.AfterErr, "read after GC error vs model")
			if merr == "" {
				sameAgg(t, model, *rv.AfterGC, "a GC never changes the value")
			}
		})
	}
	checkMalformed(t, f.Malformed)
}

func checkHash(t *checker, h hashVec) {
	it := idOf(t, h.Item, h.ItemHex)
	require.Len(t, it, h.Length)
	x, err := strconv.ParseUint(h.Hash, 16, 64)
	require.NoError(t, err)
	require.Len(t, h.Hash, 16)
	require.Equal(t, x, refMetro64([]byte(it), 1337), "SPEC.md's MetroHash64 of %q", it)
	require.Equal(t, x, metro.Hash64([]byte(it), 1337), "go-metro's MetroHash64 of %q", it)
	require.Equal(t, int(x>>50), h.Register, "register index of %q", it)
	require.Equal(t, bits.LeadingZeros64(x<<14|1<<13)+1, h.Value, "register value of %q", it)
	d := new(tally.Distinct)
	d.AddString(it)
	require.Equal(t, regList{{h.Register, h.Value}}, distinctRegisters(must(tally.Tally[*tally.Distinct]{State: d}.MarshalBinary())), "Distinct of %q", it)
}

func checkMoments(t *checker, mv momentVec) {
	st := new(tally.Stats)
	vs := i64s(mv.Values)
	for _, v := range vs {
		require.NoError(t, st.Add(v))
	}
	m, ok := st.Mean()
	require.Equal(t, mv.Mean != "", ok, mv.Name)
	v, _ := st.Variance()
	wm, wv := exactMoments(vs)
	require.Equal(t, wm, mv.Mean, "%s: exact mean rounded once", mv.Name)
	require.Equal(t, wv, mv.Variance, "%s: exact variance rounded once", mv.Name)
	if ok {
		require.Equal(t, mv.Mean, fmtDouble(m), mv.Name)
		require.Equal(t, mv.Variance, fmtDouble(v), mv.Name)
	}
}

func appendObs(a, b Obs) Obs {
	return Obs{Values: append(slices.Clone(a.Values), b.Values...), Items: append(a.allItems(), b.allItems()...)}
}

// encodeRefusal runs the encoder a refusal names on a sum aggregate.
func encodeRefusal(r refusal) error {
	var err error
	switch r.Encoder {
	case "tally.shard":
		_, err = tally.Shard[*tally.Sum]{Mutator: crdt.ActorID(r.Mutator), ExpiresAt: int64(*r.ExpiresAt)}.MarshalBinary()
	case "tally.tally":
		_, err = tally.Tally[*tally.Sum]{FoldedThrough: int64(*r.FoldedThrough)}.MarshalBinary()
	default:
		panic("unknown encoder " + r.Encoder)
	}
	return err
}

// checkShard checks one shard vector: its encoding from the observations,
// against the model and the reference writer, and its decoding.
func checkShard(t *checker, s shardVec) {
	k := aggKinds[s.Kind]
	st, err := k.build(s.Obs)
	require.NoError(t, err, s.Name)
	require.Equal(t, s.Hex, hex.EncodeToString(must(k.shard(s.Mutator, int64(s.ExpiresAt), st))), "%s encoding", s.Name)
	model, merr := aggModel(s.Kind, s.Obs)
	require.Empty(t, merr)
	sameAgg(t, model, s.State, s.Name+": state vs model")
	sameAgg(t, s.State, k.json(st), s.Name+": state vs implementation")
	require.Equal(t, s.Hex, refShard(t, s.Kind, s.Mutator, int64(s.ExpiresAt), s.State), "%s reference encoding", s.Name)
	m, e, dec, err := k.decodeShard(unhex(t, s.Hex))
	require.NoError(t, err)
	require.Equal(t, s.Mutator, m)
	require.EqualValues(t, s.ExpiresAt, e)
	sameAgg(t, s.State, k.json(dec), s.Name+": decoded")
}

// TestMomentNotesShowTheDoubleFormula checks the notes of the moments
// vectors that tell the all-double variance formula apart: the value each
// note gives for that formula is what it computes, and it differs from the
// exact variance rounded once, which the note gives too.
func TestMomentNotesShowTheDoubleFormula(t *testing.T) {
	n := 0
	for _, c := range momentCases {
		if !strings.HasPrefix(c.name, "variance rounded once: the double formula") {
			continue
		}
		n++
		_, exact := exactMoments(c.vs)
		double := fmtDouble(momentDoubleFormula(c.vs))
		require.NotEqual(t, exact, double, c.name)
		require.Contains(t, c.note, "gives "+double, c.name)
		require.Contains(t, c.note, exact, c.name)
	}
	require.Equal(t, 2, n)
}

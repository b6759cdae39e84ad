package vectors

// What every vector file shares: 64-bit integers as JSON strings, error
// kinds, malformed inputs and the decoders that must refuse them, refEnc
// (the reference msgpack writer every expected encoding is rebuilt with),
// identifiers, and the scenario steps of the G, PN and transactional
// counters.

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/timeid"
	"github.com/counterkit/counterkit/tpncounter"
	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------------------
// Shared vocabulary of the vector files.

// I64 is an int64 carried in JSON as a decimal string, so that parsers that
// read numbers as doubles do not lose precision.
type I64 int64

// MarshalJSON writes the decimal string.
func (v I64) MarshalJSON() ([]byte, error) { return json.Marshal(strconv.FormatInt(int64(v), 10)) }

// UnmarshalJSON reads the decimal string.
func (v *I64) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	*v = I64(n)
	return err
}

// Int is an integer of any size carried in JSON as a decimal string: a
// transactional counter's value, which merged states may take past int64
// (SPEC.md 6.6).
type Int string

// bigInt is v as an Int.
func bigInt(v *big.Int) Int { return Int(v.String()) }

// big returns v's value (0 for the empty string; a malformed one panics).
func (v Int) big() *big.Int {
	if v == "" {
		return new(big.Int)
	}
	b, ok := new(big.Int).SetString(string(v), 10)
	if !ok {
		panic(fmt.Sprintf("vectors: %q is not a decimal integer", v))
	}
	return b
}

// U64 is a uint64 carried in JSON as a decimal string.
type U64 uint64

// MarshalJSON writes the decimal string.
func (v U64) MarshalJSON() ([]byte, error) { return json.Marshal(strconv.FormatUint(uint64(v), 10)) }

// UnmarshalJSON reads the decimal string.
func (v *U64) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	n, err := strconv.ParseUint(s, 10, 64)
	*v = U64(n)
	return err
}

func ip(v int64) *I64 { x := I64(v); return &x }

// errorKinds maps the error names used in vectors to sentinels. kindOf
// picks the first that matches.
var errorKinds = []struct {
	name string
	err  error
}{
	{"too_large", crdt.ErrTooLarge},
	{"overflow", crdt.ErrOverflow},
	{"conflicting_transaction", crdt.ErrConflictingTransaction},
	{"invalid_actor", crdt.ErrInvalidActor},
	{"invalid_txn", crdt.ErrInvalidTxnID},
	{"invalid_amount", crdt.ErrInvalidAmount},
	{"outside_window", crdt.ErrOutsideWindow},
	{"type_mismatch", crdt.ErrTypeMismatch},
	{"unsupported_version", crdt.ErrUnsupportedVersion},
	{"corrupt", crdt.ErrCorruptEncoding},
	{"invalid_config", crdt.ErrInvalidConfig},
	{"invalid_identifier", crdt.ErrInvalidIdentifier},
}

func kindOf(t *checker, err error) string {
	if err == nil {
		return ""
	}
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	t.Fatalf("error wraps no known sentinel: %v", err)
	return ""
}

// requireKind fails unless err is of the kind want ("" for no error),
// naming both kinds and err's text.
func requireKind(t *checker, want string, err error, msgAndArgs ...any) {
	if want == "" {
		if err != nil {
			require.Fail(t, "expected success, got "+describeErr(err), msgAndArgs...)
		}
		return
	}
	for _, k := range errorKinds {
		if k.name == want {
			if !errors.Is(err, k.err) {
				require.Fail(t, fmt.Sprintf("expected error kind %s, got %s", want, describeErr(err)), msgAndArgs...)
			}
			return
		}
	}
	t.Fatalf("unknown error kind %q in vector", want)
}

// describeErr names err's kind and gives its text.
func describeErr(err error) string {
	if err == nil {
		return "success"
	}
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			return fmt.Sprintf("error kind %s (%q)", k.name, err.Error())
		}
	}
	return fmt.Sprintf("an error of no known kind (%q)", err.Error())
}

// Malformed is an input every conforming decoder rejects with Error.
type Malformed struct {
	Name    string `json:"name"`
	Decoder string `json:"decoder"`
	Hex     string `json:"hex"`
	Error   string `json:"error"`
	Note    string `json:"note,omitempty"`
}

func mal(name, decoder string, b []byte, t *checker, note ...string) Malformed {
	err := decodeAs(t, decoder, b)
	require.Error(t, err, "malformed %s/%s was accepted", decoder, name)
	return Malformed{Name: name, Decoder: decoder, Hex: hex.EncodeToString(b), Error: kindOf(t, err), Note: strings.Join(note, " ")}
}

func checkMalformed(t *checker, ms []Malformed) {
	require.NotEmpty(t, ms)
	for _, m := range ms {
		// One named vector per input, so that every failing one is reported.
		t.Run("malformed/"+m.Decoder+"/"+m.Name, func(t *checker) {
			b, err := hex.DecodeString(m.Hex)
			require.NoError(t, err)
			requireKind(t, m.Error, decodeAs(t, m.Decoder, b), "%s: %s", m.Decoder, m.Name)
		})
	}
}

// decodeAs decodes data with the named decoder. Decoders that fill a
// receiver are given a non-empty one, and on error the check requires it
// unchanged.
func decodeAs(t *checker, decoder string, data []byte) error {
	unchanged := func(before, after []byte, err error) error {
		if err != nil {
			require.Equal(t, hex.EncodeToString(before), hex.EncodeToString(after), "%s: failed decode changed the receiver", decoder)
		}
		return err
	}
	switch decoder {
	case "gcounter":
		c := gcounter.New()
		require.NoError(t, c.Increment("keep", 7))
		before := must(c.MarshalBinary())
		err := c.UnmarshalBinary(data)
		return unchanged(before, must(c.MarshalBinary()), err)
	case "pncounter":
		c := pncounter.New()
		require.NoError(t, c.Apply("keep", -7))
		before := must(c.MarshalBinary())
		err := c.UnmarshalBinary(data)
		return unchanged(before, must(c.MarshalBinary()), err)
	case "tgcounter":
		c := must(tpncounter.NewGCounter(tpncounter.Options{}))
		_ = must(c.Apply("keep", "t-keep", 7))
		before := must(c.MarshalBinary())
		err := c.UnmarshalBinary(data)
		return unchanged(before, must(c.MarshalBinary()), err)
	case "tpncounter":
		c := must(tpncounter.New(tpncounter.Options{}))
		_ = must(c.Apply("keep", "t-keep", -7))
		before := must(c.MarshalBinary())
		err := c.UnmarshalBinary(data)
		return unchanged(before, must(c.MarshalBinary()), err)
	case "deltalog.cell":
		c := deltalog.Cell{ID: timeid.FromParts(t0, 1, 1), Kind: deltalog.KindRegular, Delta: 7}
		before := must(c.MarshalBinary())
		err := c.UnmarshalBinary(data)
		return unchanged(before, must(c.MarshalBinary()), err)
	case "balance.row":
		r := balance.Row{UpdateID: timeid.FromParts(t0, 1, 1), Kind: balance.KindNormal, Amount: 7}
		before := must(r.MarshalBinary())
		err := r.UnmarshalBinary(data)
		return unchanged(before, must(r.MarshalBinary()), err)
	}
	if kind, ok := strings.CutPrefix(decoder, "tally.shard:"); ok {
		_, err := decodeAgg(t, kind, data, true)
		return err
	}
	if kind, ok := strings.CutPrefix(decoder, "tally.tally:"); ok {
		_, err := decodeAgg(t, kind, data, false)
		return err
	}
	t.Fatalf("unknown decoder %q", decoder)
	return nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func unhex(t *checker, s string) []byte {
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

// ---------------------------------------------------------------------------
// refEnc: an independent msgpack writer for the layouts in SPEC.md. It uses
// the smallest form of every integer, string, bin and array header, as the
// specification requires, and shares no code with internal/wire.

type refEnc struct{ b []byte }

func (e refEnc) raw(b ...byte) refEnc { e.b = append(e.b, b...); return e }

func (e refEnc) arr(n int) refEnc {
	switch {
	case n < 16:
		return e.raw(0x90 | byte(n))
	case n < 1<<16:
		return e.raw(0xdc, byte(n>>8), byte(n))
	}
	return e.raw(0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func (e refEnc) str(s string) refEnc {
	n := len(s)
	switch {
	case n < 32:
		e = e.raw(0xa0 | byte(n))
	case n < 1<<8:
		e = e.raw(0xd9, byte(n))
	case n < 1<<16:
		e = e.raw(0xda, byte(n>>8), byte(n))
	default:
		e = e.raw(0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return e.raw([]byte(s)...)
}

func (e refEnc) bin(b []byte) refEnc {
	n := len(b)
	switch {
	case n < 1<<8:
		e = e.raw(0xc4, byte(n))
	case n < 1<<16:
		e = e.raw(0xc5, byte(n>>8), byte(n))
	default:
		e = e.raw(0xc6, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return e.raw(b...)
}

func (e refEnc) uint(v uint64) refEnc {
	switch {
	case v < 128:
		return e.raw(byte(v))
	case v < 1<<8:
		return e.raw(0xcc, byte(v))
	case v < 1<<16:
		return e.raw(0xcd, byte(v>>8), byte(v))
	case v < 1<<32:
		return e.raw(0xce, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return e.raw(binary.BigEndian.AppendUint64([]byte{0xcf}, v)...)
}

func (e refEnc) int(v int64) refEnc {
	switch {
	case v >= 0:
		return e.uint(uint64(v))
	case v >= -32:
		return e.raw(byte(v))
	case v >= math.MinInt8:
		return e.raw(0xd0, byte(v))
	case v >= math.MinInt16:
		return e.raw(0xd1, byte(v>>8), byte(v))
	case v >= math.MinInt32:
		return e.raw(0xd2, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return e.raw(binary.BigEndian.AppendUint64([]byte{0xd3}, uint64(v))...)
}

// wide writes v as int does when it fits in int64, else as a bin 8 of its
// 16 bytes, big-endian two's complement (SPEC.md 6.7: a base's total).
func (e refEnc) wide(v *big.Int) refEnc {
	if v.IsInt64() {
		return e.int(v.Int64())
	}
	u := new(big.Int).Set(v)
	if v.Sign() < 0 {
		u.Add(u, new(big.Int).Lsh(big.NewInt(1), 128))
	}
	return e.bin(u.FillBytes(make([]byte, 16)))
}

func (e refEnc) nil() refEnc { return e.raw(0xc0) }

func (e refEnc) bool(v bool) refEnc {
	if v {
		return e.raw(0xc3)
	}
	return e.raw(0xc2)
}

// env starts the envelope [tag, version, ...body].
func env(tag string, version uint64) refEnc { return refEnc{}.arr(3).str(tag).uint(version) }

func (e refEnc) hex() string { return hex.EncodeToString(e.b) }

// ---------------------------------------------------------------------------
// Identifiers shared by several files.

func sp(s string) *string { return &s }

// idOf returns the id a step names: Hex when set, else the string.
func idOf(t *checker, s *string, h string) string {
	if h != "" {
		return string(unhex(t, h))
	}
	if s == nil {
		return ""
	}
	return *s
}

// jsonID splits an id into the JSON fields: a string when it is valid UTF-8
// and a hex string otherwise.
func jsonID(id string) (*string, string) {
	if utf8.ValidString(id) {
		return sp(id), ""
	}
	return nil, hex.EncodeToString([]byte(id))
}

// validID is the specification's id rule, written independently of crdt.
func validID(s string) bool {
	if len(s) < 1 || len(s) > 255 || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// ---------------------------------------------------------------------------
// Scenario steps shared by gcounter, pncounter and tpncounter.

// Pair is one actor's count.
type Pair struct {
	Actor string `json:"actor"`
	Count I64    `json:"count"`
}

// Step is one operation of a scenario, applied to one replica. Fields that
// an operation does not use are omitted. Outputs (Outcome, Changed, Error)
// are what the reference implementation returned.
type Step struct {
	Replica  string  `json:"replica"`
	Op       string  `json:"op"`
	Actor    *string `json:"actor,omitempty"`
	ActorHex string  `json:"actor_hex,omitempty"`
	Txn      *string `json:"txn,omitempty"`
	// ActorRange and TxnRange stand for one step per generated id (SPEC.md
	// section 11, generated vectors); see expandSteps.
	ActorRange *idRange `json:"actor_range,omitempty"`
	TxnRange   *idRange `json:"txn_range,omitempty"`
	// Actors are the actors a tpncounter retire_all step retires together
	// (SPEC.md 6.10 RetireAll).
	Actors []string `json:"actors,omitempty"`
	// Txns are a retire_late step's late copies (SPEC.md 6.10 RetireLateAt).
	Txns   []string `json:"txns,omitempty"`
	Amount *I64     `json:"amount,omitempty"`
	From   string   `json:"from,omitempty"`
	// Beyond marks a retry deliberately sent after the transaction left
	// every history and folded record (outside the window): it is counted
	// again, as SPEC.md states, unless the scenario is timed (txn_time),
	// where it is refused with outside_window.
	Beyond  bool   `json:"beyond_window,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Changed *bool  `json:"changed,omitempty"`
	Error   string `json:"error,omitempty"`
}

// idRange is a generated list of ids: prefix followed by first,
// first+1, ... (count of them) in decimal, left-padded with zeros to width
// digits (SPEC.md section 11).
type idRange struct {
	Prefix string `json:"prefix"`
	First  int    `json:"first"`
	Count  int    `json:"count"`
	Width  int    `json:"width"`
}

func (r idRange) ids() []string {
	out := make([]string, r.Count)
	for i := range out {
		out[i] = fmt.Sprintf("%s%0*d", r.Prefix, r.Width, r.First+i)
	}
	return out
}

// expandStep returns the steps a step stands for: itself, or one step per
// id of its actor_range or txn_range (with the same outputs).
func expandStep(st Step) []Step {
	switch {
	case st.ActorRange != nil:
		ids := st.ActorRange.ids()
		out := make([]Step, 0, len(ids))
		for _, a := range ids {
			x := st
			x.ActorRange, x.Actor, x.ActorHex = nil, sp(a), ""
			out = append(out, x)
		}
		return out
	case st.TxnRange != nil:
		ids := st.TxnRange.ids()
		out := make([]Step, 0, len(ids))
		for _, id := range ids {
			x := st
			x.TxnRange, x.Txn = nil, sp(id)
			out = append(out, x)
		}
		return out
	}
	return []Step{st}
}

// expandSteps expands every step (see expandStep).
func expandSteps(steps []Step) []Step {
	n := 0
	for _, st := range steps {
		switch {
		case st.ActorRange != nil:
			n += st.ActorRange.Count
		case st.TxnRange != nil:
			n += st.TxnRange.Count
		default:
			n++
		}
	}
	out := make([]Step, 0, n)
	for _, st := range steps {
		out = append(out, expandStep(st)...)
	}
	return out
}

// generated reports whether a scenario uses generated steps; its final
// states are then given as digests.
func generated(steps []Step) bool {
	return slices.ContainsFunc(steps, func(s Step) bool { return s.ActorRange != nil || s.TxnRange != nil })
}

func sha256Hex(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// fillOrCheck records (fill) or checks the outputs of one expanded step
// against its step: all expansions of a range step must agree. what names
// the step in a failure.
func fillOrCheck(t *checker, fill bool, st *Step, first bool, errKind, outcome string, changed *bool, what func() string) {
	if fill && first {
		st.Error, st.Outcome, st.Changed = errKind, outcome, changed
		return
	}
	// Plain comparisons first: a range step expands to tens of thousands
	// of steps, and require's cost under the race detector is paid on
	// each; require runs only to report a mismatch.
	if st.Error == errKind && st.Outcome == outcome && (st.Changed == nil) == (changed == nil) && (changed == nil || *st.Changed == *changed) {
		return
	}
	requireKind(t, st.Error, errorOf(errKind), what())
	require.Equal(t, st.Outcome, outcome, "%s outcome", what())
	require.Equal(t, st.Changed, changed, "%s changed", what())
}

// keepBefore reports whether a runner should snapshot the state before a
// step, to check that a failing step changes nothing: always, except for
// the expansions of a generated step that is expected to succeed (a
// snapshot per expansion would make big vectors quadratic).
func keepBefore(fill bool, st Step) bool {
	return (st.ActorRange == nil && st.TxnRange == nil) || (!fill && st.Error != "")
}

// errorOf turns a kind name back into an error of that kind (nil for "").
func errorOf(kind string) error {
	if kind == "" {
		return nil
	}
	for _, k := range errorKinds {
		if k.name == kind {
			return k.err
		}
	}
	return fmt.Errorf("unknown kind %q", kind)
}

func stepOp(replica, op, actor string, amount int64) Step {
	s, h := jsonID(actor)
	return Step{Replica: replica, Op: op, Actor: s, ActorHex: h, Amount: ip(amount)}
}

func stepMerge(replica, from string) Step { return Step{Replica: replica, Op: "merge", From: from} }

// replayCounter is what replaySteps needs of a plain counter.
type replayCounter[C any] interface {
	MarshalBinary() ([]byte, error)
	Merge(C) error
}

// replaySteps replays a gcounter or pncounter scenario's steps on the
// replicas rs: "merge" merges another replica, and every other op is
// applyOp's (an unknown one returns errUnknownOp). It fills or checks each
// step's error kind, and a failed step must leave its replica unchanged.
func replaySteps[C replayCounter[C]](t *checker, name string, steps []Step, rs map[string]C, fill bool, applyOp func(c C, x Step) error) {
	for i := range steps {
		st := &steps[i]
		for k, x := range expandStep(*st) {
			c, ok := rs[x.Replica]
			require.True(t, ok, "step %d: unknown replica %q", i, x.Replica)
			var before []byte
			if keepBefore(fill, *st) {
				before = must(c.MarshalBinary())
			}
			var err error
			if x.Op == "merge" {
				err = c.Merge(rs[x.From])
			} else if err = applyOp(c, x); errors.Is(err, errUnknownOp) {
				t.Fatalf("unknown op %q", x.Op)
			}
			fillOrCheck(t, fill, st, k == 0, kindOf(t, err), "", nil, func() string { return fmt.Sprintf("%s step %d.%d", name, i, k) })
			if err != nil && before != nil {
				require.Equal(t, before, must(c.MarshalBinary()), "%s step %d: failed op changed the state", name, i)
			}
		}
	}
}

// errUnknownOp is what a replaySteps op function returns for an op it does
// not know.
var errUnknownOp = errors.New("unknown op")

func ptr[T any](v T) *T { return &v }

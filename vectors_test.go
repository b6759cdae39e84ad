package counterkit_test

// Language-neutral test vectors (SPEC.md, "Test vectors").
//
// The JSON files under testdata/vectors are produced by the code and then
// locked:
//
//	go test . -run TestVectors -update   # regenerate (review the diff!)
//	go test . -run TestVectors           # check
//
// Checking replays every vector against the real types (operations, merges,
// encodings, decodings, rejections) and, separately, against plain models
// written here from the specification: a per-actor map for the G/PN counters,
// a map of accepted transactions for the transactional counters, a map of
// regular cells for the delta log, plain loops for the tally aggregates
// (including HyperLogLog registers computed from MetroHash64 directly) and
// "the sum of every normal row ever added" for balance. Every expected
// encoding is also rebuilt from the vector's structured state by refEnc, a
// small msgpack writer that shares no code with the codecs. So a vector
// whose expectations merely mirror a bug in the implementation fails here.
//
// This file holds the harness shared by every vector file (the list of
// files, TestVectors, error kinds, malformed inputs, refEnc, scenario
// steps); each vector file has its own test file named for it:
// vectors_envelope_test.go, vectors_gcounter_test.go,
// vectors_pncounter_test.go, vectors_tpncounter_test.go,
// vectors_tally_test.go, vectors_deltalog_test.go and
// vectors_balance_test.go.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/timeid"
	"github.com/counterkit/counterkit/tpncounter"
)

var update = flag.Bool("update", false, "regenerate testdata/vectors/*.json from the code (review the diff before committing)")

const vectorDir = "testdata/vectors"

// vectorFiles maps every vector file to the function that checks it. A file
// in vectorDir that is not listed here fails TestVectorFilesAreRead.
var vectorFiles = map[string]struct {
	gen   func(t *testing.T) any
	check func(t *testing.T, raw []byte)
}{
	"envelope.json":   {genEnvelope, checkEnvelope},
	"gcounter.json":   {genGCounter, checkGCounter},
	"pncounter.json":  {genPNCounter, checkPNCounter},
	"tpncounter.json": {genTPN, checkTPN},
	"tally.json":      {genTally, checkTally},
	"deltalog.json":   {genDeltalog, checkDeltalog},
	"balance.json":    {genBalance, checkBalance},
	"storage.json":    {genStorage, checkStorage},
}

func TestVectors(t *testing.T) {
	for _, name := range sortedKeys(vectorFiles) {
		vf := vectorFiles[name]
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			path := filepath.Join(vectorDir, name)
			if *update {
				v := vf.gen(t)
				b, err := json.MarshalIndent(v, "", "  ")
				require.NoError(t, err)
				require.NoError(t, os.MkdirAll(vectorDir, 0o755))
				require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
			}
			raw, err := os.ReadFile(path)
			require.NoError(t, err, "run go test . -run TestVectors -update to create it")
			vf.check(t, raw)
		})
	}
}

// TestVectorFilesAreRead fails when a vector file exists that no test reads,
// when a package with a wire codec has no vector file, or when a type tag
// registered in crdt/envelope.go appears in no vector.
func TestVectorFilesAreRead(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(vectorDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		_, ok := vectorFiles[filepath.Base(f)]
		require.True(t, ok, "%s is not read by any test: add it to vectorFiles", f)
	}
	// Every top-level package that encodes with internal/wire is a type
	// package and needs <name>.json.
	dirs, err := os.ReadDir(".")
	require.NoError(t, err)
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "internal" || strings.HasPrefix(d.Name(), ".") {
			continue
		}
		srcs, _ := filepath.Glob(filepath.Join(d.Name(), "*.go"))
		codec := false
		for _, s := range srcs {
			if strings.HasSuffix(s, "_test.go") {
				continue
			}
			b, err := os.ReadFile(s)
			require.NoError(t, err)
			if bytes.Contains(b, []byte("wire.NewEncoder(")) {
				codec = true
			}
		}
		if codec {
			_, ok := vectorFiles[d.Name()+".json"]
			require.True(t, ok, "package %s has a wire codec but no %s/%s.json", d.Name(), vectorDir, d.Name())
			_, err := os.Stat(filepath.Join(vectorDir, d.Name()+".json"))
			require.NoError(t, err)
		}
	}
	// Every registered tag occurs in some vector file.
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		all = append(all, b...)
	}
	for _, tag := range registeredTags(t) {
		enc := hex.EncodeToString(refEnc{}.str(tag).b)
		require.True(t, bytes.Contains(all, []byte(enc)), "type tag %q is in crdt/envelope.go but in no vector's hex", tag)
	}
}

// registeredTags parses crdt/envelope.go for its TypeTag constants, so a new
// tag without vectors is noticed.
func registeredTags(t *testing.T) []string {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("crdt", "envelope.go"), nil, 0)
	require.NoError(t, err)
	var tags []string
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "TypeTag" {
				continue
			}
			for _, v := range vs.Values {
				lit := v.(*ast.BasicLit)
				s, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				tags = append(tags, s)
			}
		}
	}
	require.GreaterOrEqual(t, len(tags), 8)
	return tags
}

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

func kindOf(t *testing.T, err error) string {
	t.Helper()
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

func requireKind(t *testing.T, want string, err error, msgAndArgs ...any) {
	t.Helper()
	if want == "" {
		require.NoError(t, err, msgAndArgs...)
		return
	}
	require.Error(t, err, msgAndArgs...)
	for _, k := range errorKinds {
		if k.name == want {
			require.ErrorIs(t, err, k.err, msgAndArgs...)
			return
		}
	}
	t.Fatalf("unknown error kind %q in vector", want)
}

// Malformed is an input every conforming decoder rejects with Error.
type Malformed struct {
	Name    string `json:"name"`
	Decoder string `json:"decoder"`
	Hex     string `json:"hex"`
	Error   string `json:"error"`
	Note    string `json:"note,omitempty"`
}

func mal(name, decoder string, b []byte, t *testing.T, note ...string) Malformed {
	t.Helper()
	err := decodeAs(t, decoder, b)
	require.Error(t, err, "malformed %s/%s was accepted", decoder, name)
	return Malformed{Name: name, Decoder: decoder, Hex: hex.EncodeToString(b), Error: kindOf(t, err), Note: strings.Join(note, " ")}
}

func checkMalformed(t *testing.T, ms []Malformed) {
	t.Helper()
	require.NotEmpty(t, ms)
	for _, m := range ms {
		// One subtest per input, so that every failing vector is reported.
		t.Run("malformed/"+m.Decoder+"/"+m.Name, func(t *testing.T) {
			b, err := hex.DecodeString(m.Hex)
			require.NoError(t, err)
			requireKind(t, m.Error, decodeAs(t, m.Decoder, b), "%s: %s", m.Decoder, m.Name)
		})
	}
}

// decodeAs decodes data with the named decoder. Decoders that fill a
// receiver are given a non-empty one, and on error the test asserts it is
// unchanged.
func decodeAs(t *testing.T, decoder string, data []byte) error {
	t.Helper()
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

func unhex(t *testing.T, s string) []byte {
	t.Helper()
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
func idOf(t *testing.T, s *string, h string) string {
	t.Helper()
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
	Amount     *I64     `json:"amount,omitempty"`
	From       string   `json:"from,omitempty"`
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
		var out []Step
		for _, a := range st.ActorRange.ids() {
			x := st
			x.ActorRange, x.Actor, x.ActorHex = nil, sp(a), ""
			out = append(out, x)
		}
		return out
	case st.TxnRange != nil:
		var out []Step
		for _, id := range st.TxnRange.ids() {
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
	var out []Step
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
// against its step: all expansions of a range step must agree.
func fillOrCheck(t *testing.T, fill bool, st *Step, first bool, errKind, outcome string, changed *bool, what string) {
	t.Helper()
	if fill && first {
		st.Error, st.Outcome, st.Changed = errKind, outcome, changed
		return
	}
	requireKind(t, st.Error, errorOf(errKind), what)
	require.Equal(t, st.Outcome, outcome, "%s outcome", what)
	require.Equal(t, st.Changed, changed, "%s changed", what)
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

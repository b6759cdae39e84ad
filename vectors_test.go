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

import (
	"bytes"
	"context"
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
	"math/big"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	metro "github.com/dgryski/go-metro"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/internal/wire"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/tally"
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
		c := deltalog.Cell{ID: deltalog.IDFromParts(t0, 1, 1), Kind: deltalog.KindRegular, Delta: 7}
		before := must(c.MarshalBinary())
		err := c.UnmarshalBinary(data)
		return unchanged(before, must(c.MarshalBinary()), err)
	case "balance.row":
		r := balance.Row{UpdateID: deltalog.IDFromParts(t0, 1, 1), Kind: balance.KindNormal, Amount: 7}
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
// envelope.json

type envelopeFile struct {
	Comment string `json:"comment"`
	// Ints are int64 values and their only accepted encoding.
	Ints []struct {
		Value I64    `json:"value"`
		Hex   string `json:"hex"`
	} `json:"ints"`
	// IDs are actor/transaction id candidates and whether they are valid.
	IDs []struct {
		ID    *string `json:"id,omitempty"`
		IDHex string  `json:"id_hex,omitempty"`
		Valid bool    `json:"valid"`
	} `json:"ids"`
	// Empty is the encoding of the empty state of every state type.
	Empty []struct {
		Decoder string `json:"decoder"`
		Hex     string `json:"hex"`
	} `json:"empty"`
	Malformed []Malformed `json:"malformed"`
}

func genEnvelope(t *testing.T) any {
	var f envelopeFile
	f.Comment = "Envelope, integer and id rules shared by every type. See SPEC.md sections 2-3."
	for _, v := range []int64{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64,
		-1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64} {
		e := wire.NewEncoder("x", 1)
		e.Int(v)
		b := must(e.Bytes())
		pre := len(refEnc{}.arr(3).str("x").uint(1).b)
		f.Ints = append(f.Ints, struct {
			Value I64    `json:"value"`
			Hex   string `json:"hex"`
		}{I64(v), hex.EncodeToString(b[pre:])})
	}
	for _, id := range []string{"a", "alice", "Zoë", "日本", "🦀", "with space", strings.Repeat("x", 255),
		"", strings.Repeat("x", 256), "a\x00b", "tab\there", "del\x7f", "nel\u0085", "\xff\xfe", "line\n"} {
		s, h := jsonID(id)
		f.IDs = append(f.IDs, struct {
			ID    *string `json:"id,omitempty"`
			IDHex string  `json:"id_hex,omitempty"`
			Valid bool    `json:"valid"`
		}{s, h, crdt.ActorID(id).Validate() == nil})
	}
	addEmpty := func(dec string, b []byte) {
		require.NoError(t, decodeAs(t, dec, b))
		f.Empty = append(f.Empty, struct {
			Decoder string `json:"decoder"`
			Hex     string `json:"hex"`
		}{dec, hex.EncodeToString(b)})
	}
	addEmpty("gcounter", must(gcounter.New().MarshalBinary()))
	addEmpty("pncounter", must(pncounter.New().MarshalBinary()))
	addEmpty("tgcounter", must(must(tpncounter.NewGCounter(tpncounter.Options{})).MarshalBinary()))
	addEmpty("tpncounter", must(must(tpncounter.New(tpncounter.Options{})).MarshalBinary()))

	g := "gcounter"
	body := refEnc{}.arr(1).arr(2).str("a").int(5) // [["a", 5]]
	good := append(env(g, 1).b, body.b...)
	require.NoError(t, decodeAs(t, g, good))
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	f.Malformed = []Malformed{
		mal("empty input", g, []byte{}, t),
		mal("not an array", g, []byte{0x01}, t),
		mal("nil instead of envelope", g, []byte{0xc0}, t),
		mal("envelope of two elements", g, refEnc{}.arr(2).str(g).uint(1).b, t),
		mal("envelope of four elements", g, cat(refEnc{}.arr(4).str(g).uint(1).b, body.b, []byte{0xc0}), t),
		mal("tag is not a string", g, cat(refEnc{}.arr(3).uint(1).uint(1).b, body.b), t),
		mal("tag longer than 64 bytes", g, cat(refEnc{}.arr(3).str(strings.Repeat("g", 65)).uint(1).b, body.b), t),
		mal("wrong tag", g, cat(env("pncounter", 1).b, body.b), t),
		mal("unknown tag", g, cat(env("nosuchtype", 1).b, body.b), t),
		mal("tag differs in case", g, cat(env("GCounter", 1).b, body.b), t),
		mal("version 0", g, cat(env(g, 0).b, body.b), t),
		mal("version 2 (newer than this build)", g, cat(env(g, 2).b, body.b), t),
		mal("version is negative", g, cat(refEnc{}.arr(3).str(g).int(-1).b, body.b), t),
		mal("version is a string", g, cat(refEnc{}.arr(3).str(g).str("1").b, body.b), t),
		mal("version is a float", g, cat(refEnc{}.arr(3).str(g).raw(0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0).b, body.b), t),
		mal("tag checked before version", "pncounter", cat(env(g, 9).b, body.b), t, "a wrong tag is type_mismatch even when the version is unsupported too"),
		mal("trailing byte", g, cat(good, []byte{0xc0}), t),
		mal("truncated body", g, good[:len(good)-1], t),
		mal("truncated in tag", g, good[:4], t),
		mal("array header claims more elements than bytes remain", g, cat(env(g, 1).b, []byte{0xdc, 0x00, 0x10, 0x92}), t,
			"16 pairs in the canonical array16 header (dc 0010, below the 30000 cap) but 1 byte remains: rejected for the count"),
		mal("envelope header claims more elements than bytes remain", g, []byte{0xdc, 0x00, 0x10, 0xa1, 'g'}, t,
			"canonical array16 header of 16 elements with 2 bytes left: the remaining-bytes check comes before the length-3 check"),
		mal("envelope header claims 2^31 elements", g, []byte{0xdd, 0x80, 0, 0, 0, 0xa1, 'g'}, t,
			"above the envelope's nominal cap of 2^31-1: too_large (SPEC.md 3.2, section 12 item 7)"),
		mal("int 5 as int8 (not smallest form)", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("a").raw(0xd0, 5).b), t),
		mal("int 5 as uint8 (not smallest form)", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("a").raw(0xcc, 5).b), t),
		mal("int 5 as uint64 (not smallest form)", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("a").raw(0xcf, 0, 0, 0, 0, 0, 0, 0, 5).b), t),
		mal("int 200 as uint16 (not smallest form)", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("a").raw(0xcd, 0, 200).b), t),
		mal("uint64 above int64 range", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("a").uint(1<<63).b), t),
		mal("float where int is required", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("a").raw(0xca, 0x40, 0xa0, 0, 0).b), t),
		mal("bin where string is required", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).bin([]byte("a")).int(5).b), t),
		mal("map where array is required", g, cat(env(g, 1).b, []byte{0x80}), t),
		mal("id of 256 bytes", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str(strings.Repeat("x", 256)).int(5).b), t),
		mal("id with control character", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("a\x01").int(5).b), t),
		mal("id not UTF-8", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("\xc3\x28").int(5).b), t),
		mal("empty id", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).str("").int(5).b), t),
		mal("string header claims 2 GiB", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).raw(0xdb, 0x7f, 0xff, 0xff, 0xff, 'a').b), t),
	}
	// Non-canonical encodings: every header and integer must use its
	// smallest msgpack form, so each state has exactly one encoding.
	nonCanon := func(name, dec string, in []byte) {
		m := mal(name, dec, in, t, "non-canonical: not the smallest msgpack form")
		require.Equal(t, "corrupt", m.Error, name)
		f.Malformed = append(f.Malformed, m)
	}
	nonCanon("version 1 as uint64", g, cat(refEnc{}.arr(3).str(g).raw(0xcf, 0, 0, 0, 0, 0, 0, 0, 1).b, body.b))
	nonCanon("tag as str8", g, cat(refEnc{}.arr(3).raw(0xd9, 8).raw([]byte(g)...).uint(1).b, body.b))
	nonCanon("envelope header as array16", g, cat([]byte{0xdc, 0, 3}, refEnc{}.str(g).uint(1).b, body.b))
	nonCanon("actor as str8", g, cat(env(g, 1).b, refEnc{}.arr(1).arr(2).raw(0xd9, 1, 'a').int(5).b))
	tg := must(tpncounter.NewGCounter(tpncounter.Options{}))
	_ = must(tg.Apply("a", "t1", 5))
	nonCanon("tgcounter seq 1 as uint64", "tgcounter",
		cat(env("tgcounter", 1).b, refEnc{}.arr(1).arr(5).str("a").raw(0xcf, 0, 0, 0, 0, 0, 0, 0, 1).int(0).arr(1).arr(2).str("t1").int(5).arr(0).b))
	st := must(aggKinds["stats"].build(ints(2)))
	_ = st
	nonCanon("tally stats sum of squares as uint64", "tally.shard:stats",
		env("tally.shard", 1).arr(4).str("stats").str("m").int(1).arr(6).int(1).int(2).int(2).int(2).uint(0).raw(0xcf, 0, 0, 0, 0, 0, 0, 0, 4).b)
	return f
}

func checkEnvelope(t *testing.T, raw []byte) {
	var f envelopeFile
	require.NoError(t, json.Unmarshal(raw, &f))
	require.NotEmpty(t, f.Ints)
	for _, c := range f.Ints {
		require.Equal(t, c.Hex, refEnc{}.int(int64(c.Value)).hex(), "reference encoding of %d", c.Value)
		e := wire.NewEncoder("x", 1)
		e.Int(int64(c.Value))
		b := must(e.Bytes())
		require.True(t, strings.HasSuffix(hex.EncodeToString(b), c.Hex), "wire encoding of %d", c.Value)
		d, _, err := wire.NewDecoder(b, "x", 1, 100)
		require.NoError(t, err)
		v, err := d.Int()
		require.NoError(t, err)
		require.EqualValues(t, c.Value, v)
	}
	require.NotEmpty(t, f.IDs)
	for _, c := range f.IDs {
		id := idOf(t, c.ID, c.IDHex)
		require.Equal(t, c.Valid, validID(id), "spec rule for %q", id)
		require.Equal(t, c.Valid, crdt.ActorID(id).Validate() == nil, "ActorID %q", id)
		require.Equal(t, c.Valid, crdt.TxnID(id).Validate() == nil, "TxnID %q", id)
	}
	for _, c := range f.Empty {
		require.NoError(t, decodeAs(t, c.Decoder, unhex(t, c.Hex)))
	}
	wantEmpty := map[string]string{
		"gcounter":   env("gcounter", 1).arr(0).hex(),
		"pncounter":  env("pncounter", 2).arr(0).hex(),
		"tgcounter":  env("tgcounter", 2).arr(0).hex(),
		"tpncounter": env("tpncounter", 2).arr(2).arr(0).arr(0).hex(),
	}
	require.Len(t, f.Empty, len(wantEmpty))
	for _, c := range f.Empty {
		require.Equal(t, wantEmpty[c.Decoder], c.Hex, c.Decoder)
	}
	checkMalformed(t, f.Malformed)
}

// reencode decodes data and encodes it again.
func reencode(t *testing.T, decoder string, data []byte) []byte {
	switch decoder {
	case "gcounter":
		c := gcounter.New()
		require.NoError(t, c.UnmarshalBinary(data))
		return must(c.MarshalBinary())
	case "tgcounter":
		c := must(tpncounter.NewGCounter(tpncounter.Options{}))
		require.NoError(t, c.UnmarshalBinary(data))
		return must(c.MarshalBinary())
	}
	if kind, ok := strings.CutPrefix(decoder, "tally.shard:"); ok {
		k := aggKinds[kind]
		m, exp, st, err := k.decodeShard(data)
		require.NoError(t, err)
		return must(k.shard(m, exp, st))
	}
	t.Fatalf("reencode: unsupported decoder %q", decoder)
	return nil
}

// ---------------------------------------------------------------------------
// gcounter.json and pncounter.json

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
	Amount   *I64    `json:"amount,omitempty"`
	From     string  `json:"from,omitempty"`
	// Beyond marks a retry deliberately sent after the transaction left
	// every history and folded record (outside the window): it is counted
	// again, as SPEC.md states, unless the scenario is timed (txn_time),
	// where it is refused with outside_window.
	Beyond  bool   `json:"beyond_window,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Changed *bool  `json:"changed,omitempty"`
	Error   string `json:"error,omitempty"`
}

func stepOp(replica, op, actor string, amount int64) Step {
	s, h := jsonID(actor)
	return Step{Replica: replica, Op: op, Actor: s, ActorHex: h, Amount: ip(amount)}
}

func stepMerge(replica, from string) Step { return Step{Replica: replica, Op: "merge", From: from} }

type gState struct {
	Entries []Pair `json:"entries"`
	Value   I64    `json:"value"`
	Hex     string `json:"hex"`
}

type gScenario struct {
	Name     string            `json:"name"`
	Note     string            `json:"note,omitempty"`
	Replicas []string          `json:"replicas"`
	Steps    []Step            `json:"steps"`
	Final    map[string]gState `json:"final"`
}

type gFile struct {
	Comment   string      `json:"comment"`
	Scenarios []gScenario `json:"scenarios"`
	Malformed []Malformed `json:"malformed"`
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
func runG(t *testing.T, sc *gScenario, fill bool) map[string]*gcounter.Counter {
	rs := map[string]*gcounter.Counter{}
	for _, r := range sc.Replicas {
		rs[r] = gcounter.New()
	}
	for i := range sc.Steps {
		st := &sc.Steps[i]
		c := rs[st.Replica]
		require.NotNil(t, c, "step %d: unknown replica %q", i, st.Replica)
		before := must(c.MarshalBinary())
		var err error
		switch st.Op {
		case "increment":
			err = c.Increment(crdt.ActorID(idOf(t, st.Actor, st.ActorHex)), int64(*st.Amount))
		case "merge":
			err = c.Merge(rs[st.From])
		default:
			t.Fatalf("unknown op %q", st.Op)
		}
		if fill {
			st.Error = kindOf(t, err)
		} else {
			requireKind(t, st.Error, err, "%s step %d", sc.Name, i)
		}
		if err != nil {
			require.Equal(t, before, must(c.MarshalBinary()), "%s step %d: failed op changed the state", sc.Name, i)
		}
	}
	return rs
}

func genGCounter(t *testing.T) any {
	long := strings.Repeat("x", 255)
	inc := func(r, a string, n int64) Step { return stepOp(r, "increment", a, n) }
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
		{Name: "merge that would overflow is refused", Replicas: []string{"r1", "r2"}, Steps: []Step{
			inc("r1", "a", math.MaxInt64-1), inc("r2", "b", 2), inc("r2", "a", 1), stepMerge("r1", "r2"), stepMerge("r2", "r1")}},
	}
	for i := range scs {
		rs := runG(t, &scs[i], true)
		scs[i].Final = map[string]gState{}
		for name, c := range rs {
			scs[i].Final[name] = gState{Entries: gPairs(c), Value: I64(c.Value()), Hex: hex.EncodeToString(must(c.MarshalBinary()))}
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
	return gFile{
		Comment:   "G-Counter (SPEC.md section 4). Body: array of [actor str, count int > 0], strictly increasing by actor bytes.",
		Scenarios: scs,
		Malformed: []Malformed{
			mal("actors out of order", g, pairs("b", 1, "a", 1), t),
			mal("duplicate actor", g, pairs("a", 1, "a", 2), t),
			mal("zero count", g, pairs("a", 0), t),
			mal("negative count", g, pairs("a", -1), t),
			mal("counts sum past int64", g, cat(env(g, 1).arr(2).arr(2).str("a").int(math.MaxInt64).arr(2).str("b").int(1).b), t),
			mal("pair of three elements", g, cat(env(g, 1).arr(1).arr(3).str("a").int(1).int(1).b), t),
			mal("pair of one element", g, cat(env(g, 1).arr(1).arr(1).str("a").b), t),
			mal("body is nil", g, cat(env(g, 1).nil().b), t),
			mal("body is a map", g, cat(env(g, 1).raw(0x81).str("a").int(1).b), t),
			mal("more than 30000 actors", g, cat(env(g, 1).arr(30001).b), t, "the cap is checked before the remaining-bytes check"),
			mal("invalid actor", g, pairs("a\x7f", 1), t),
			mal("trailing bytes", g, cat(pairs("a", 1), []byte{0}), t),
		},
	}
}

// gModel is the specification's G-Counter: a map from actor to count.
type gModel map[string]int64

func gModelStep(m map[string]gModel, st Step, t *testing.T) string {
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
		if !fitsSum(cur, a, n) {
			return "overflow"
		}
		if n > 0 {
			cur[a] += n
		}
	case "merge":
		out := gModel{}
		for a, n := range cur {
			out[a] = n
		}
		for a, n := range m[st.From] {
			out[a] = max(out[a], n)
		}
		if !fitsSum(out, "", 0) {
			return "overflow"
		}
		m[st.Replica] = out
	}
	return ""
}

// fitsSum reports whether sum(m) + n fits in int64 (exact arithmetic).
func fitsSum(m gModel, _ string, n int64) bool {
	s := big.NewInt(n)
	for _, v := range m {
		s.Add(s, big.NewInt(v))
	}
	return s.IsInt64()
}

func (m gModel) pairs() []Pair {
	out := []Pair{}
	for _, a := range sortedKeys(m) {
		if m[a] > 0 {
			out = append(out, Pair{a, I64(m[a])})
		}
	}
	return out
}

func (m gModel) sum() int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}

// refG encodes a gcounter body from pairs.
func refGBody(e refEnc, ps []Pair) refEnc {
	e = e.arr(len(ps))
	for _, p := range ps {
		e = e.arr(2).str(p.Actor).int(int64(p.Count))
	}
	return e
}

func checkGCounter(t *testing.T, raw []byte) {
	var f gFile
	require.NoError(t, json.Unmarshal(raw, &f))
	require.NotEmpty(t, f.Scenarios)
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		t.Run(sc.Name, func(t *testing.T) {
			rs := runG(t, sc, false)
			model := map[string]gModel{}
			for _, r := range sc.Replicas {
				model[r] = gModel{}
			}
			for j, st := range sc.Steps {
				require.Equal(t, st.Error, gModelStep(model, st, t), "model disagrees with vector at step %d", j)
			}
			require.Len(t, sc.Final, len(rs))
			for name, want := range sc.Final {
				c := rs[name]
				require.Equal(t, want.Hex, hex.EncodeToString(must(c.MarshalBinary())), "%s encoding", name)
				require.Equal(t, want.Hex, refGBody(env("gcounter", 1), want.Entries).hex(), "%s: reference encoding of the listed entries", name)
				require.Equal(t, model[name].pairs(), want.Entries, "%s entries vs model", name)
				require.EqualValues(t, model[name].sum(), want.Value, "%s value vs model", name)
				require.EqualValues(t, want.Value, c.Value())
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
	checkMalformed(t, f.Malformed)
}

type pnState struct {
	P     []Pair `json:"p"`
	N     []Pair `json:"n"`
	Value I64    `json:"value"`
	Hex   string `json:"hex"`
}

type pnScenario struct {
	Name     string             `json:"name"`
	Replicas []string           `json:"replicas"`
	Steps    []Step             `json:"steps"`
	Final    map[string]pnState `json:"final"`
}

type pnFile struct {
	Comment   string       `json:"comment"`
	Scenarios []pnScenario `json:"scenarios"`
	Version1  []pnCompat   `json:"version1"`
	Malformed []Malformed  `json:"malformed"`
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

func runPN(t *testing.T, sc *pnScenario, fill bool) map[string]*pncounter.Counter {
	rs := map[string]*pncounter.Counter{}
	for _, r := range sc.Replicas {
		rs[r] = pncounter.New()
	}
	for i := range sc.Steps {
		st := &sc.Steps[i]
		c := rs[st.Replica]
		before := must(c.MarshalBinary())
		var err error
		switch st.Op {
		case "apply":
			err = c.Apply(crdt.ActorID(idOf(t, st.Actor, st.ActorHex)), int64(*st.Amount))
		case "merge":
			err = c.Merge(rs[st.From])
		default:
			t.Fatalf("unknown op %q", st.Op)
		}
		if fill {
			st.Error = kindOf(t, err)
		} else {
			requireKind(t, st.Error, err, "%s step %d", sc.Name, i)
		}
		if err != nil {
			require.Equal(t, before, must(c.MarshalBinary()), "%s step %d: failed op changed the state", sc.Name, i)
		}
	}
	return rs
}

func genPNCounter(t *testing.T) any {
	ap := func(r, a string, n int64) Step { return stepOp(r, "apply", a, n) }
	scs := []pnScenario{
		{Name: "empty", Replicas: []string{"r"}},
		{Name: "increments and decrements", Replicas: []string{"r"}, Steps: []Step{
			ap("r", "a", 5), ap("r", "b", -3), ap("r", "a", -2), ap("r", "c", 7), ap("r", "b", 0)}},
		{Name: "only decrements", Replicas: []string{"r"}, Steps: []Step{ap("r", "a", -1), ap("r", "b", -300)}},
		{Name: "extremes and overflow per half", Replicas: []string{"r"}, Steps: []Step{
			ap("r", "a", math.MaxInt64), ap("r", "b", -math.MaxInt64), ap("r", "c", 1), ap("r", "c", -1), ap("r", "d", math.MinInt64)}},
		{Name: "rejected updates", Replicas: []string{"r"}, Steps: []Step{
			ap("r", "a", 4), ap("r", "", 1), ap("r", "", -1), ap("r", "x\ny", -1), ap("r", "a", math.MinInt64)}},
		{Name: "concurrent replicas converge", Replicas: []string{"r1", "r2"}, Steps: []Step{
			ap("r1", "a", 10), ap("r1", "a", -4), ap("r2", "b", -7), ap("r2", "a", 3), ap("r2", "b", 2),
			stepMerge("r1", "r2"), stepMerge("r2", "r1"), stepMerge("r1", "r2")}},
		{Name: "merge overflowing one half is refused whole", Replicas: []string{"r1", "r2"}, Steps: []Step{
			ap("r1", "a", -(math.MaxInt64 - 1)), ap("r1", "p", 1), ap("r2", "b", -2), ap("r2", "q", 5),
			stepMerge("r1", "r2")}},
		// Front coding: node-1 → node-10 shares 6 bytes, node-10 → node-2
		// shares 5; "aāx" → "aąy" share the bytes 61 c4 but the prefix
		// stops at the character boundary after "a".
		{Name: "front-coded ids", Replicas: []string{"r"}, Steps: []Step{
			ap("r", "node-2", 3), ap("r", "node-10", -4), ap("r", "node-1", 1), ap("r", "node-1", -1),
			ap("r", "aāx", 200), ap("r", "aąy", -70000), ap("r", "node-10", 1)}},
	}
	for i := range scs {
		rs := runPN(t, &scs[i], true)
		scs[i].Final = map[string]pnState{}
		for name, c := range rs {
			scs[i].Final[name] = pnState{P: gPairs(c.P()), N: gPairs(c.N()), Value: I64(c.Value()), Hex: hex.EncodeToString(must(c.MarshalBinary()))}
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
	return pnFile{
		Comment:   "PN-Counter (SPEC.md section 5). Version 2 body: one front-coded row [shared, suffix, p, n] per actor. version1 lists version 1 encodings ([P, N], each a G-Counter body) that decoders still read.",
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
			mal("N sums past int64", p, row(row(v2(2), 0, "a", 0, math.MaxInt64), 0, "b", 0, 1).b, t),
			mal("invalid actor", p, row(v2(1), 0, "", 1, 0).b, t),
			mal("actor longer than 255 bytes", p, row(row(v2(2), 0, strings.Repeat("x", 255), 1, 0), 255, "y", 1, 0).b, t),
			mal("more than 60000 rows", p, append(env(p, 2).b, 0xdd, 0, 0, 0xea, 0x61), t),
			mal("gcounter envelope", p, env("gcounter", 1).arr(0).b, t),
			mal("version 3", p, env(p, 3).arr(0).b, t),
			mal("trailing bytes", p, append(v2(0).b, 0x90), t),
			mal("v1: body of one half", p, env(p, 1).arr(1).arr(0).b, t),
			mal("v1: body of three halves", p, env(p, 1).arr(3).arr(0).arr(0).arr(0).b, t),
			mal("v1: N unsorted", p, env(p, 1).arr(2).arr(0).arr(2).arr(2).str("b").int(1).arr(2).str("a").int(1).b, t),
			mal("v1: P zero count", p, env(p, 1).arr(2).arr(1).arr(2).str("a").int(0).arr(0).b, t),
			mal("v1: N negative count", p, env(p, 1).arr(2).arr(0).arr(1).arr(2).str("a").int(-3).b, t),
			mal("v1: N sums past int64", p, env(p, 1).arr(2).arr(0).arr(2).arr(2).str("a").int(math.MaxInt64).arr(2).str("b").int(1).b, t),
			mal("v1: invalid actor in P", p, env(p, 1).arr(2).arr(1).arr(2).str("").int(1).arr(0).b, t),
			mal("v1: rows under version 1", p, row(env(p, 1).arr(1), 0, "a", 1, 0).b, t),
		},
	}
}

func checkPNCounter(t *testing.T, raw []byte) {
	var f pnFile
	require.NoError(t, json.Unmarshal(raw, &f))
	require.NotEmpty(t, f.Scenarios)
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		t.Run(sc.Name, func(t *testing.T) {
			rs := runPN(t, sc, false)
			// Model: two maps per replica.
			P, N := map[string]gModel{}, map[string]gModel{}
			for _, r := range sc.Replicas {
				P[r], N[r] = gModel{}, gModel{}
			}
			for j, st := range sc.Steps {
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
					case n >= 0:
						want = gModelStep(P, Step{Replica: st.Replica, Op: "increment", Actor: sp(a), Amount: ip(n)}, t)
					default:
						want = gModelStep(N, Step{Replica: st.Replica, Op: "increment", Actor: sp(a), Amount: ip(-n)}, t)
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
			require.Len(t, sc.Final, len(rs))
			for name, want := range sc.Final {
				c := rs[name]
				require.Equal(t, want.Hex, hex.EncodeToString(must(c.MarshalBinary())), "%s encoding", name)
				require.Equal(t, want.Hex, refPNBody(env("pncounter", 2), want.P, want.N).hex(), "%s reference encoding", name)
				require.Equal(t, P[name].pairs(), want.P)
				require.Equal(t, N[name].pairs(), want.N)
				require.EqualValues(t, P[name].sum()-N[name].sum(), want.Value, "%s value vs model", name)
				require.EqualValues(t, want.Value, c.Value())
				dec := pncounter.New()
				require.NoError(t, dec.UnmarshalBinary(unhex(t, want.Hex)))
				require.True(t, dec.Equal(c))
			}
		})
	}
	require.NotEmpty(t, f.Version1)
	for _, c := range f.Version1 {
		t.Run("version 1/"+c.Name, func(t *testing.T) {
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
}

func clone(m map[string]gModel) map[string]gModel {
	out := map[string]gModel{}
	for r, g := range m {
		c := gModel{}
		for a, n := range g {
			c[a] = n
		}
		out[r] = c
	}
	return out
}

// ---------------------------------------------------------------------------
// tpncounter.json (tgcounter and tpncounter)

// TxnJSON is one transaction held in a history or folded record.
type TxnJSON struct {
	Txn    string `json:"txn"`
	Amount I64    `json:"amount"`
}

type tEntry struct {
	Actor   string    `json:"actor"`
	Seq     U64       `json:"seq"`
	Total   I64       `json:"total"`
	Forgot  I64       `json:"forgot"`
	History []TxnJSON `json:"history"`
	Folded  []TxnJSON `json:"folded"`
}

type tState struct {
	Entries *[]tEntry         `json:"entries,omitempty"`
	P       *[]tEntry         `json:"p,omitempty"`
	N       *[]tEntry         `json:"n,omitempty"`
	Value   I64               `json:"value"`
	Status  map[string]string `json:"status"`
	// Conflicts lists the ids held with more than one signed amount, sorted
	// by id (absent when there is none).
	Conflicts []tConflictJSON `json:"conflicts,omitempty"`
	Hex       string          `json:"hex"`
}

// tCopyJSON is one actor's copy of a transaction: a signed amount in a
// tpncounter (negative for a debit), folded when the actor folded it.
type tCopyJSON struct {
	Actor  string `json:"actor"`
	Amount I64    `json:"amount"`
	Folded bool   `json:"folded"`
}

// tConflictJSON is an id held with more than one signed amount: every copy
// (sorted by actor, a tpncounter's credits first) and the one that counts.
type tConflictJSON struct {
	Txn     string      `json:"txn"`
	Counted tCopyJSON   `json:"counted"`
	Copies  []tCopyJSON `json:"copies"`
}

func conflictsJSON(cs []tpncounter.Conflict) []tConflictJSON {
	var out []tConflictJSON
	cp := func(c tpncounter.Copy) tCopyJSON { return tCopyJSON{string(c.Actor), I64(c.Amount), c.Folded} }
	for _, c := range cs {
		j := tConflictJSON{Txn: string(c.ID), Counted: cp(c.Counted)}
		for _, x := range c.Copies {
			j.Copies = append(j.Copies, cp(x))
		}
		out = append(out, j)
	}
	return out
}

type tOptions struct {
	HistoryLength int `json:"history_length"`
	FoldedLength  int `json:"folded_length"`
	MaxActors     int `json:"max_actors"`
	// TxnTime is "timeuuid" when transactions are timed by their version 1
	// UUID ids (SPEC.md 6.1), empty otherwise.
	TxnTime string `json:"txn_time,omitempty"`
}

type tScenario struct {
	Name     string            `json:"name"`
	Note     string            `json:"note,omitempty"`
	Type     string            `json:"type"`
	Options  tOptions          `json:"options"`
	Replicas []string          `json:"replicas"`
	Steps    []Step            `json:"steps"`
	Final    map[string]tState `json:"final"`
}

type tFile struct {
	Comment   string      `json:"comment"`
	Scenarios []tScenario `json:"scenarios"`
	Version1  []tCompat   `json:"version1"`
	TimeUUIDs []tTimeUUID `json:"timeuuids"`
	Decoded   []tDecoded  `json:"decoded"`
	Malformed []Malformed `json:"malformed"`
}

// tDecoded is a valid encoding holding conflicting copies (one id with two
// amounts, or in both halves), as Merge leaves them: the state it decodes
// to, its value and its conflicts.
type tDecoded struct {
	Name      string          `json:"name"`
	Note      string          `json:"note,omitempty"`
	Type      string          `json:"type"`
	Hex       string          `json:"hex"`
	Entries   *[]tEntry       `json:"entries,omitempty"`
	P         *[]tEntry       `json:"p,omitempty"`
	N         *[]tEntry       `json:"n,omitempty"`
	Value     I64             `json:"value"`
	Conflicts []tConflictJSON `json:"conflicts"`
}

// decodeT decodes a tgcounter or tpncounter encoding.
func decodeT(t *testing.T, typ string, b []byte) tReplica {
	if typ == "tgcounter" {
		g := must(tpncounter.NewGCounter(tpncounter.Options{}))
		require.NoError(t, g.UnmarshalBinary(b))
		return tg{g}
	}
	c := must(tpncounter.New(tpncounter.Options{}))
	require.NoError(t, c.UnmarshalBinary(b))
	return tpn{c}
}

// modelOf is the model holding the listed entries (forgotten copies, which
// an encoding only shows in totals, are not needed for conflicts).
func modelOf(halves ...[]tEntry) *tModel {
	m := newTModel(tOptions{})
	for s, es := range halves {
		for _, e := range es {
			en := &tEnt{seq: uint64(e.Seq)}
			for _, x := range e.Folded {
				en.items = append(en.items, tItem{txn: x.Txn, amt: int64(x.Amount), folded: true})
			}
			for _, x := range e.History {
				en.items = append(en.items, tItem{txn: x.Txn, amt: int64(x.Amount)})
			}
			m.half[s][e.Actor] = en
		}
	}
	return m
}

// tCompat is a format version 1 tpncounter encoding (entries without
// forgot) that decoders still read; it re-encodes as Reencoded.
type tCompat struct {
	Name      string   `json:"name"`
	Hex       string   `json:"hex"`
	P         []tEntry `json:"p"`
	N         []tEntry `json:"n"`
	Reencoded string   `json:"reencoded"`
}

// tTimeUUID is a transaction id and the time TimeUUID gives it (Unix
// nanoseconds), or valid false when it has none.
type tTimeUUID struct {
	ID    string `json:"id"`
	Valid bool   `json:"valid"`
	Nanos I64    `json:"unix_nanos,omitempty"`
}

// tReplica hides the difference between GCounter and Counter.
type tReplica interface {
	apply(a crdt.ActorID, x crdt.TxnID, n int64) (tpncounter.Outcome, error)
	compact(a crdt.ActorID) (bool, error)
	merge(o tReplica) error
	bytes() []byte
	value() int64
	status(x crdt.TxnID) tpncounter.Status
	amount(x crdt.TxnID) (int64, bool)
	state() tState
	decodeEqual(t *testing.T, b []byte) bool
}

type tg struct{ c *tpncounter.GCounter }

func (r tg) apply(a crdt.ActorID, x crdt.TxnID, n int64) (tpncounter.Outcome, error) {
	return r.c.Apply(a, x, n)
}
func (r tg) compact(a crdt.ActorID) (bool, error)  { return r.c.Compact(a) }
func (r tg) merge(o tReplica) error                { return r.c.Merge(o.(tg).c) }
func (r tg) bytes() []byte                         { return must(r.c.MarshalBinary()) }
func (r tg) value() int64                          { return r.c.Value() }
func (r tg) status(x crdt.TxnID) tpncounter.Status { return r.c.Status(x) }
func (r tg) amount(x crdt.TxnID) (int64, bool) {
	o, ok := r.c.Owner(x)
	return o.Amount, ok
}
func (r tg) state() tState {
	es := tEntries(r.c)
	return tState{Entries: &es, Conflicts: conflictsJSON(r.c.Conflicts())}
}
func (r tg) decodeEqual(t *testing.T, b []byte) bool {
	d := must(tpncounter.NewGCounter(r.c.Options()))
	require.NoError(t, d.UnmarshalBinary(b))
	return d.Equal(r.c) && d.Value() == r.c.Value()
}

type tpn struct{ c *tpncounter.Counter }

func (r tpn) apply(a crdt.ActorID, x crdt.TxnID, n int64) (tpncounter.Outcome, error) {
	return r.c.Apply(a, x, n)
}
func (r tpn) compact(a crdt.ActorID) (bool, error)  { return r.c.Compact(a) }
func (r tpn) merge(o tReplica) error                { return r.c.Merge(o.(tpn).c) }
func (r tpn) bytes() []byte                         { return must(r.c.MarshalBinary()) }
func (r tpn) value() int64                          { return r.c.Value() }
func (r tpn) status(x crdt.TxnID) tpncounter.Status { return r.c.Status(x) }
func (r tpn) amount(x crdt.TxnID) (int64, bool)     { return r.c.Amount(x) }
func (r tpn) state() tState {
	p, n := tEntries(r.c.Positive()), tEntries(r.c.Negative())
	return tState{P: &p, N: &n, Conflicts: conflictsJSON(r.c.Conflicts())}
}
func (r tpn) decodeEqual(t *testing.T, b []byte) bool {
	d := must(tpncounter.New(r.c.Options()))
	require.NoError(t, d.UnmarshalBinary(b))
	return d.Equal(r.c) && d.Value() == r.c.Value()
}

func tEntries(g *tpncounter.GCounter) []tEntry {
	out := []tEntry{}
	conv := func(l []tpncounter.Txn) []TxnJSON {
		o := []TxnJSON{}
		for _, x := range l {
			o = append(o, TxnJSON{string(x.ID), I64(x.Amount)})
		}
		return o
	}
	for _, a := range g.Actors() {
		e, _ := g.Entry(a)
		var forgot int64
		if !e.Forgot.IsZero() {
			forgot = e.Forgot.UnixNano()
		}
		out = append(out, tEntry{Actor: string(a), Seq: U64(e.Seq), Total: I64(e.Total), Forgot: I64(forgot), History: conv(e.History), Folded: conv(e.Folded)})
	}
	return out
}

var outcomeNames = map[tpncounter.Outcome]string{
	tpncounter.Applied: "applied", tpncounter.Duplicate: "duplicate", tpncounter.DuplicateFolded: "duplicate_folded",
	tpncounter.Superseded: "superseded",
}

var statusNames = map[tpncounter.Status]string{
	tpncounter.Unknown: "unknown", tpncounter.InHistory: "in_history", tpncounter.Folded: "folded",
}

func runT(t *testing.T, sc *tScenario, fill bool) map[string]tReplica {
	opts := tpncounter.Options{HistoryLength: sc.Options.HistoryLength, FoldedLength: sc.Options.FoldedLength, MaxActors: sc.Options.MaxActors}
	switch sc.Options.TxnTime {
	case "":
	case "timeuuid":
		opts.TxnTime = tpncounter.TimeUUID
	default:
		t.Fatalf("unknown txn_time %q", sc.Options.TxnTime)
	}
	rs := map[string]tReplica{}
	for _, r := range sc.Replicas {
		switch sc.Type {
		case "tgcounter":
			rs[r] = tg{must(tpncounter.NewGCounter(opts))}
		case "tpncounter":
			rs[r] = tpn{must(tpncounter.New(opts))}
		default:
			t.Fatalf("unknown type %q", sc.Type)
		}
	}
	for i := range sc.Steps {
		st := &sc.Steps[i]
		r := rs[st.Replica]
		require.NotNil(t, r, "step %d: replica %q", i, st.Replica)
		before := r.bytes()
		var err error
		var outcome string
		var changed *bool
		switch st.Op {
		case "apply":
			var o tpncounter.Outcome
			o, err = r.apply(crdt.ActorID(idOf(t, st.Actor, st.ActorHex)), crdt.TxnID(idOf(t, st.Txn, "")), int64(*st.Amount))
			outcome = outcomeNames[o]
		case "compact":
			var ch bool
			ch, err = r.compact(crdt.ActorID(idOf(t, st.Actor, st.ActorHex)))
			if err == nil {
				changed = &ch
			}
		case "merge":
			err = r.merge(rs[st.From])
		default:
			t.Fatalf("unknown op %q", st.Op)
		}
		if fill {
			st.Error, st.Outcome, st.Changed = kindOf(t, err), outcome, changed
		} else {
			requireKind(t, st.Error, err, "%s step %d", sc.Name, i)
			require.Equal(t, st.Outcome, outcome, "%s step %d outcome", sc.Name, i)
			require.Equal(t, st.Changed, changed, "%s step %d changed", sc.Name, i)
		}
		if err != nil || (st.Op == "apply" && outcome != "applied") || (changed != nil && !*changed) {
			// Refused, recognised (duplicate, duplicate_folded, superseded)
			// or nothing to do: nothing changes.
			require.Equal(t, hex.EncodeToString(before), hex.EncodeToString(r.bytes()), "%s step %d: state changed", sc.Name, i)
		}
	}
	return rs
}

func tApply(r, actor, txn string, n int64) Step {
	s := stepOp(r, "apply", actor, n)
	s.Txn = sp(txn)
	return s
}

func tCompact(r, actor string) Step { s := stepOp(r, "compact", actor, 0); s.Amount = nil; return s }

func genTPN(t *testing.T) any {
	ap, cp, mg := tApply, tCompact, stepMerge
	var seed002 []Step
	for i := 1; i <= 6; i++ {
		seed002 = append(seed002, ap("r", "actor1", fmt.Sprintf("txn%d", i), 10))
	}
	seed002 = append(seed002, cp("r", "actor1"), ap("r", "actor1", "txn2", 10), ap("r", "actor1", "txn5", 10))
	var window []Step
	for i := 1; i <= 6; i++ {
		window = append(window, ap("r", "a", fmt.Sprintf("t%d", i), int64(i)))
	}
	beyond := func(s Step) Step { s.Beyond = true; return s }
	window = append(window, ap("r", "a", "t3", 3), ap("r", "a", "t5", 5), beyond(ap("r", "a", "t2", 2)), beyond(ap("r", "a", "t1", 1)))
	// tu(i) is a version 1 UUID id created i seconds after t0.
	tu := func(i int) string { return vid(float64(i), 1, 1).String() }
	var timedWindow []Step
	for i := 1; i <= 6; i++ {
		timedWindow = append(timedWindow, ap("r", "a", tu(i), int64(i)))
	}
	timedWindow = append(timedWindow, ap("r", "a", tu(3), 3), ap("r", "a", tu(5), 5), beyond(ap("r", "a", tu(2), 2)), beyond(ap("r", "a", tu(1), 1)),
		beyond(ap("r", "b", vid(1.5, 7, 7).String(), 9)), ap("r", "b", tu(7), 7), ap("r", "a", "t8", 8))

	// The window with deferred ids (SPEC.md 6.5 rule 5): p0 and p1 are
	// held by a and b; c retries x after each of a's later transactions.
	deferred := []Step{ap("r1", "a", "p0", 1), ap("r1", "a", "p1", 1), ap("r2", "b", "p0", 1), ap("r2", "b", "p1", 1),
		mg("r1", "r2"), ap("r1", "a", "x", 100), ap("r1", "c", "x", 100)}
	edge := []Step{ap("r", "a", "x", 100), ap("r", "c", "x", 100)}
	for i := 1; i <= 5; i++ {
		y := fmt.Sprintf("y%d", i)
		if i <= 4 {
			deferred = append(deferred, ap("r1", "a", y, 10), ap("r1", "c", "x", 100))
			edge = append(edge, ap("r", "a", y, 10), ap("r", "c", "x", 100))
		} else {
			edge = append(edge, ap("r", "a", y, 10), beyond(ap("r", "c", "x", 100)))
		}
	}

	scs := []tScenario{
		{Name: "empty tgcounter", Type: "tgcounter", Replicas: []string{"r"}},
		{Name: "empty tpncounter", Type: "tpncounter", Replicas: []string{"r"}},
		{Name: "seed 002 history_length example", Type: "tgcounter", Options: tOptions{HistoryLength: 3}, Replicas: []string{"r"}, Steps: seed002,
			Note: "six credits of 10 with history_length 3: value 60, txn1 and txn2 folded, txn3..txn6 in history; Compact (Find) folds txn3; retries are recognised"},
		{Name: "forgetting and the window edge", Type: "tgcounter", Options: tOptions{HistoryLength: 2, FoldedLength: 1}, Replicas: []string{"r"}, Steps: window,
			Note: "t3 is recognised through the folded record, t5 in the history; t2 and t1 have been forgotten, so their retries count again (outside the window, counted twice)"},
		{Name: "retries and rejected input on one replica", Type: "tgcounter", Replicas: []string{"r"}, Steps: []Step{
			ap("r", "a", "t1", 10), ap("r", "a", "t1", 10), ap("r", "b", "t1", 10), ap("r", "a", "t1", 11),
			ap("r", "a", "", 1), ap("r", "", "t2", 1), ap("r", "a", "t2", 0), ap("r", "a", "t2", -5), ap("r", "a", "t\x002", 1),
			ap("r", "a", strings.Repeat("t", 255), 1)}},
		{Name: "concurrent duplicate on two actors counts once", Type: "tgcounter", Options: tOptions{HistoryLength: 2}, Replicas: []string{"r1", "r2"}, Steps: []Step{
			ap("r1", "a", "t1", 10), ap("r2", "b", "t1", 10), ap("r2", "b", "t2", 5),
			mg("r1", "r2"), mg("r2", "r1"), cp("r2", "b"), cp("r2", "a"), mg("r1", "r2"), mg("r2", "r1")}},
		{Name: "folded by one actor, held by another", Type: "tgcounter", Options: tOptions{HistoryLength: 1}, Replicas: []string{"r1", "r2"}, Steps: []Step{
			ap("r1", "a", "t1", 10), ap("r1", "a", "t2", 20), ap("r1", "a", "t3", 30), ap("r2", "b", "t1", 10),
			mg("r1", "r2"), cp("r1", "b"), ap("r1", "b", "t1", 10), mg("r2", "r1")}},
		{Name: "folded by two actors: the larger id unfolds", Type: "tgcounter", Options: tOptions{HistoryLength: 1}, Replicas: []string{"r1", "r2"}, Steps: []Step{
			ap("r1", "a", "t1", 10), ap("r1", "a", "t2", 20), ap("r1", "a", "t3", 30),
			ap("r2", "b", "t1", 10), ap("r2", "b", "u2", 1), ap("r2", "b", "u3", 2),
			mg("r1", "r2"), cp("r1", "a"), cp("r1", "b"), mg("r2", "r1")}},
		{Name: "forgetting is deferred while another actor holds the id", Type: "tgcounter", Options: tOptions{HistoryLength: 1, FoldedLength: 1}, Replicas: []string{"r1", "r2"}, Steps: []Step{
			ap("r1", "a", "t1", 1), ap("r2", "b", "t1", 1), mg("r1", "r2"),
			ap("r1", "a", "t2", 2), ap("r1", "a", "t3", 3), ap("r1", "a", "t4", 4),
			cp("r1", "b"), ap("r1", "a", "t5", 5), mg("r2", "r1")}},
		{Name: "credits and debits", Type: "tpncounter", Replicas: []string{"r"}, Steps: []Step{
			ap("r", "a", "t1", 10), ap("r", "b", "t2", -4), ap("r", "a", "t2", -4), ap("r", "a", "t2", 4), ap("r", "a", "t1", -10),
			ap("r", "a", "t3", 0), ap("r", "a", "t3", math.MinInt64), ap("r", "a", "", 1), ap("r", "", "t3", 1), ap("r", "c", "t3", -1)}},
		{Name: "overflow of either half", Type: "tpncounter", Replicas: []string{"r"}, Steps: []Step{
			ap("r", "a", "t1", math.MaxInt64), ap("r", "a", "t2", 1), ap("r", "b", "t3", -math.MaxInt64), ap("r", "b", "t4", -1), ap("r", "c", "t5", -1)}},
		{Name: "merges with conflicting amounts: the owner's copy counts", Type: "tpncounter", Replicas: []string{"r1", "r2", "r3"}, Steps: []Step{
			ap("r1", "a", "t1", 5), ap("r2", "b", "t1", -5), ap("r3", "c", "t1", 6), ap("r3", "c", "t2", 1),
			mg("r1", "r2"), mg("r2", "r1"), mg("r1", "r3"), mg("r3", "r1"),
			ap("r1", "d", "t1", 5), ap("r1", "d", "t1", -5), ap("r1", "d", "t1", 6), ap("r1", "d", "t1", -6)},
			Note: "t1 is written concurrently as a credit of 5 (a), a debit of 5 (b) and a credit of 6 (c): Merge accepts it (no error) and a's copy counts, a being the smallest actor id holding t1 and none having folded it: value 5 + 1; a retry with a losing copy's amount is superseded, with any other amount conflicting_transaction"},
		{Name: "tgcounter merge with a conflicting amount: the smaller actor's copy counts", Type: "tgcounter", Replicas: []string{"r1", "r2"}, Steps: []Step{
			ap("r1", "a", "t1", 5), ap("r2", "b", "t1", 6), mg("r1", "r2"), mg("r2", "r1")}},
		{Name: "the window: deferred ids do not shorten it", Type: "tgcounter", Options: tOptions{HistoryLength: 2, FoldedLength: 2}, Replicas: []string{"r1", "r2"}, Steps: deferred,
			Note: "a and b both hold p0 and p1, so a defers them (keeps them folded beyond folded_length) while b holds them. After a applies x and then y1..y4, a retry of x by c is recognised after every step (duplicate while x is in a's history, duplicate_folded once folded): x stays known for history_length + folded_length = 4 later transactions of a. Deferred ids take room of their own; under the earlier rule they took folded_length room and x was forgotten after y3"},
		{Name: "the window edge: forgotten after history_length + folded_length + 1 later transactions", Type: "tgcounter", Options: tOptions{HistoryLength: 2, FoldedLength: 2}, Replicas: []string{"r"}, Steps: edge,
			Note: "a applies x and then y1..y5, and c retries x after every step: recognised through y4 (H+F = 4 later transactions), unknown after y5, so the last retry is counted again (outside the window)"},
		{Name: "conflict within a half: the smaller actor counts, the loser is superseded, then dropped", Type: "tgcounter", Replicas: []string{"r1", "r2", "r3"}, Steps: []Step{
			ap("r1", "a", "T", 50), ap("r2", "b", "T", 60), mg("r1", "r2"), mg("r3", "r1"),
			ap("r1", "c", "T", 60), ap("r1", "c", "T", 7), ap("r1", "c", "T", 50),
			cp("r1", "b"), ap("r1", "c", "T", 60), ap("r1", "c", "T", 50), mg("r2", "r1")},
			Note: "a and b write T concurrently with 50 and 60; merged, a's 50 counts (smallest actor, neither folded) and T is listed as a conflict (r3 keeps that state). A retry of 60 is superseded, of 7 conflicting_transaction, of 50 duplicate. When b compacts it drops its losing copy: the conflict is gone and the value is unchanged; a retry of 60 is now conflicting_transaction. r2 converges on the same state"},
		{Name: "conflict across halves: credit against debit", Type: "tpncounter", Replicas: []string{"r1", "r2", "r3"}, Steps: []Step{
			ap("r1", "b", "T", 50), ap("r1", "a", "U", 5), ap("r2", "a", "T", -30), ap("r2", "a", "U", -5),
			mg("r1", "r2"), mg("r3", "r1"),
			ap("r1", "c", "T", 50), ap("r1", "c", "T", -30), ap("r1", "c", "T", 30), ap("r1", "c", "U", 5), ap("r1", "c", "U", -5),
			cp("r1", "b"), cp("r1", "a"), ap("r1", "c", "T", 50), ap("r1", "c", "U", -5), mg("r2", "r1")},
			Note: "T: a credit of 50 by b and a debit of 30 by a, neither folded: a is the smaller actor, so the debit counts (-30) and b's credit counts nothing. U: a credit and a debit of 5 by one actor, a: the credit wins the tie. Value -30 + 5 = -25 with both listed as conflicts (r3). Retries: the losing copy's signed amount is superseded, the counting one duplicate, any other conflicting_transaction. Compacting b drops its credit of T and compacting a drops its debit of U (copies that lose across halves); the conflicts are gone and the value is unchanged"},
		{Name: "conflict: a folded copy beats a history copy of a smaller actor", Type: "tgcounter", Options: tOptions{HistoryLength: 1}, Replicas: []string{"r1", "r2", "r3"}, Steps: []Step{
			ap("r2", "b", "T", 60), ap("r2", "b", "u1", 1), ap("r2", "b", "u2", 2), ap("r1", "a", "T", 50),
			mg("r1", "r2"), mg("r3", "r1"), ap("r1", "c", "T", 60), ap("r1", "c", "T", 50), ap("r1", "c", "T", 7),
			cp("r1", "a"), ap("r1", "c", "T", 50), mg("r2", "r1")},
			Note: "b folded T (60) before it saw a's concurrent T (50, in a's history): the folded copy counts although a < b, so the value is 60 + 1 + 2 (r3). A retry of 60 is duplicate_folded, of 50 superseded. When a compacts it drops its history copy"},
		{Name: "three replicas converge", Type: "tpncounter", Options: tOptions{HistoryLength: 2, FoldedLength: 2}, Replicas: []string{"r1", "r2", "r3"}, Steps: []Step{
			ap("r1", "a", "x1", 100), ap("r1", "a", "x2", -30), ap("r2", "b", "x2", -30), ap("r2", "b", "x3", 7),
			ap("r3", "c", "x1", 100), ap("r3", "c", "x4", -1), ap("r3", "c", "x5", 2), ap("r3", "c", "x6", 3),
			mg("r1", "r3"), ap("r1", "a", "x7", 9), mg("r2", "r1"), cp("r2", "b"), mg("r3", "r2"), cp("r3", "c"),
			mg("r1", "r3"), mg("r2", "r1"), mg("r3", "r2")}},
		{Name: "max actors", Type: "tgcounter", Options: tOptions{MaxActors: 2}, Replicas: []string{"r1", "r2"}, Steps: []Step{
			ap("r1", "a", "t1", 1), ap("r1", "b", "t2", 1), ap("r1", "c", "t3", 1), ap("r2", "c", "t3", 1), mg("r1", "r2")}},
		{Name: "timed: a retry outside the window is refused", Type: "tgcounter", Options: tOptions{HistoryLength: 2, FoldedLength: 1, TxnTime: "timeuuid"},
			Replicas: []string{"r"}, Steps: timedWindow,
			Note: "the forgetting-and-window-edge scenario with timed ids: t1 and t2 are forgotten (forgot = t2's time); their retries, and a new id no later than t2, are refused with outside_window instead of counted again; an untimed id is invalid_txn"},
		{Name: "timed: the horizon travels with the entry", Type: "tpncounter", Options: tOptions{HistoryLength: 1, FoldedLength: 1, TxnTime: "timeuuid"},
			Replicas: []string{"r1", "r2"}, Steps: []Step{
				ap("r1", "a", tu(1), 10), ap("r1", "a", tu(2), 20), ap("r1", "a", tu(3), 30), ap("r1", "a", tu(4), -5),
				cp("r1", "a"), mg("r2", "r1"), beyond(ap("r2", "b", tu(1), 10)), beyond(ap("r2", "b", vid(0.5, 3, 3).String(), -1)),
				beyond(ap("r2", "b", tu(1), -10)), ap("r2", "b", vid(1.5, 3, 3).String(), -1), ap("r2", "b", tu(6), 1)},
			Note: "r1 forgets the credit at t=1 s; r2 merges r1's entry and refuses a retry of it. An unknown transaction is checked against the later of both halves' horizons: a debit no later than t=1 s is refused too, although the debit half has forgotten nothing (the losing write of a credit/debit conflict may have been forgotten in the other half); a debit after it is accepted"},
	}
	for i := range scs {
		sc := &scs[i]
		rs := runT(t, sc, true)
		sc.Final = map[string]tState{}
		for name, r := range rs {
			st := r.state()
			st.Value, st.Hex, st.Status = I64(r.value()), hex.EncodeToString(r.bytes()), map[string]string{}
			for _, x := range scenarioTxns(sc) {
				st.Status[x] = statusNames[r.status(crdt.TxnID(x))]
			}
			sc.Final[name] = st
		}
	}
	g, p := "tgcounter", "tpncounter"
	entry := func(e refEnc, actor string, seq uint64, total int64, hist, folded [][2]any) refEnc {
		e = e.arr(6).str(actor).uint(seq).int(total).int(0)
		for _, l := range [][][2]any{hist, folded} {
			e = e.arr(len(l))
			for _, x := range l {
				e = e.arr(2).str(x[0].(string)).int(int64(x[1].(int)))
			}
		}
		return e
	}
	t1 := [][2]any{{"t1", 5}}
	var compat []tCompat
	for _, c := range []struct {
		name string
		p, n []tEntry
	}{
		{"empty", []tEntry{}, []tEntry{}},
		{"credits and a debit", []tEntry{
			{Actor: "a", Seq: 4, Total: 3, History: []TxnJSON{{"t3", 3}, {"t4", 4}}, Folded: []TxnJSON{{"t1", 1}, {"t2", 2}}},
			{Actor: "b", Seq: 1, History: []TxnJSON{{"t5", 5}}, Folded: []TxnJSON{}}},
			[]tEntry{{Actor: "a", Seq: 1, History: []TxnJSON{{"d1", 7}}, Folded: []TxnJSON{}}}},
	} {
		v1 := refTBodyV(refTBodyV(env(p, 1).arr(2), c.p, 1), c.n, 1)
		dec := must(tpncounter.New(tpncounter.Options{}))
		require.NoError(t, dec.UnmarshalBinary(v1.b), c.name)
		compat = append(compat, tCompat{Name: c.name, Hex: v1.hex(), P: c.p, N: c.n, Reencoded: hex.EncodeToString(must(dec.MarshalBinary()))})
	}
	var tus []tTimeUUID
	for _, id := range []string{tu(1), "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "6ba7b810-9dad-41d1-80b4-00c04fd430c8",
		"6ba7b8109dad11d180b400c04fd430c8", "6BA7B810-9DAD-11D1-80B4-00C04FD430C8", "urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8", "t1",
		"00000000-0000-1000-8000-000000000000", "ffffffff-ffff-1fff-8000-000000000000", "6ba7b810-9dad-11d1-00b4-00c04fd430c8"} {
		at, ok := tpncounter.TimeUUID(crdt.TxnID(id))
		c := tTimeUUID{ID: id, Valid: ok}
		if ok {
			c.Nanos = I64(at.UnixNano())
		}
		tus = append(tus, c)
	}
	var decoded []tDecoded
	h := func(txn string, amt int64) []TxnJSON { return []TxnJSON{{txn, I64(amt)}} }
	none := []TxnJSON{}
	for _, d := range []struct {
		name, note string
		p, n       []tEntry
	}{
		{"tgcounter: one id with two amounts", "a < b and neither folded t1: a's 5 counts",
			[]tEntry{{Actor: "a", Seq: 1, History: h("t1", 5), Folded: none}, {Actor: "b", Seq: 1, History: h("t1", 6), Folded: none}}, nil},
		{"tgcounter: a folded copy counts over a smaller actor's history copy", "b folded t1 (total 6): its copy counts, a's 5 in a history counts nothing",
			[]tEntry{{Actor: "a", Seq: 1, History: h("t1", 5), Folded: none}, {Actor: "b", Seq: 2, Total: 6, History: none, Folded: h("t1", 6)}}, nil},
		{"tgcounter: two folded copies", "a and b both folded t1 with 5 and 6: the smaller actor's fold counts, b's is subtracted from the sum of the totals (5 + 6 - 6)",
			[]tEntry{{Actor: "a", Seq: 2, Total: 5, History: none, Folded: h("t1", 5)}, {Actor: "b", Seq: 2, Total: 6, History: none, Folded: h("t1", 6)}}, nil},
		{"tpncounter: one id with two amounts and one in both halves", "t1 is credited 5 by a and 6 by b: a's 5 counts; t2 is credited 3 by a and debited 3 by c: a < c, the credit counts; value 5 + 3",
			[]tEntry{{Actor: "a", Seq: 2, History: []TxnJSON{{"t1", 5}, {"t2", 3}}, Folded: none}, {Actor: "b", Seq: 1, History: h("t1", 6), Folded: none}},
			[]tEntry{{Actor: "c", Seq: 1, History: h("t2", 3), Folded: none}}},
		{"tpncounter: in both halves, the folded debit counts", "t1 is credited 5 by a (history) and debited 7 by b (folded): the folded copy counts, value -7",
			[]tEntry{{Actor: "a", Seq: 1, History: h("t1", 5), Folded: none}},
			[]tEntry{{Actor: "b", Seq: 2, Total: 7, History: none, Folded: h("t1", 7)}}},
		{"tpncounter: in both halves, one actor", "a credited and debited t1: the credit wins the tie, value 4",
			[]tEntry{{Actor: "a", Seq: 1, History: h("t1", 4), Folded: none}},
			[]tEntry{{Actor: "a", Seq: 1, History: h("t1", 4), Folded: none}}},
	} {
		dv := tDecoded{Name: d.name, Note: d.note}
		var enc refEnc
		if d.n == nil {
			dv.Type, dv.Entries, enc = g, &d.p, refTBody(env(g, 2), d.p)
		} else {
			dv.Type, dv.P, dv.N, enc = p, &d.p, &d.n, refTBody(refTBody(env(p, 2).arr(2), d.p), d.n)
		}
		r := decodeT(t, dv.Type, enc.b)
		dv.Hex, dv.Value, dv.Conflicts = enc.hex(), I64(r.value()), r.state().Conflicts
		decoded = append(decoded, dv)
	}
	return tFile{
		Comment:   "Transactional counters (SPEC.md section 6). Format version 2. tgcounter body: array of entries [actor, seq uint, total int, forgot int (Unix ns), history [[txn, amount]...], folded [[txn, amount]...]] sorted by actor; tpncounter body: [P body, N body]. version1 lists version 1 encodings (entries without forgot) that decoders still read; timeuuids gives TimeUUID's answer for sample ids; decoded lists valid encodings holding conflicting copies of one id (two amounts, or both halves) with the value the owner rule gives them.",
		Scenarios: scs,
		Version1:  compat,
		TimeUUIDs: tus,
		Decoded:   decoded,
		Malformed: []Malformed{
			mal("actors out of order", g, entry(entry(env(g, 2).arr(2), "b", 1, 0, t1, nil), "a", 1, 0, [][2]any{{"t2", 1}}, nil).b, t,
				"format version 2, entries of 6 fields: only the actor order is wrong"),
			mal("duplicate actor", g, entry(entry(env(g, 2).arr(2), "a", 1, 0, t1, nil), "a", 1, 0, [][2]any{{"t2", 1}}, nil).b, t,
				"format version 2: actors must be strictly increasing"),
			mal("tpncounter N half actors out of order", p, entry(entry(env(p, 2).arr(2).arr(0).arr(2), "b", 1, 0, t1, nil), "a", 1, 0, [][2]any{{"t2", 1}}, nil).b, t,
				"each half is checked like a tgcounter body"),
			mal("seq 0", g, entry(env(g, 2).arr(1), "a", 0, 0, t1, nil).b, t),
			mal("negative total", g, entry(env(g, 2).arr(1), "a", 1, -1, t1, nil).b, t),
			mal("zero amount", g, entry(env(g, 2).arr(1), "a", 1, 0, [][2]any{{"t1", 0}}, nil).b, t),
			mal("negative amount", g, entry(env(g, 2).arr(1), "a", 1, 0, [][2]any{{"t1", -5}}, nil).b, t),
			mal("one actor holds a txn twice", g, entry(env(g, 2).arr(1), "a", 2, 5, t1, t1).b, t),
			mal("value past int64", g, entry(entry(env(g, 2).arr(2), "a", 1, math.MaxInt64, nil, nil), "b", 1, 0, t1, nil).b, t),
			mal("invalid txn id", g, entry(env(g, 2).arr(1), "a", 1, 0, [][2]any{{"", 1}}, nil).b, t),
			mal("invalid actor id", g, entry(env(g, 2).arr(1), "a\x1b", 1, 0, t1, nil).b, t),
			mal("entry of five fields", g, env(g, 2).arr(1).arr(5).str("a").uint(1).int(0).arr(0).arr(0).b, t,
				"a version 1 entry under version 2"),
			mal("entry of seven fields", g, env(g, 2).arr(1).arr(7).str("a").uint(1).int(0).int(0).arr(0).arr(0).nil().b, t),
			mal("negative forgot", g, env(g, 2).arr(1).arr(6).str("a").uint(1).int(0).int(-1).arr(0).arr(0).b, t),
			mal("more actors than MaxActors (4096)", g, env(g, 2).arr(4097).b, t),
			mal("more than 4096 txns in one entry", g, env(g, 2).arr(1).arr(6).str("a").uint(1).int(0).int(0).arr(4097).b, t),
			mal("seq as negative int", g, env(g, 2).arr(1).arr(6).str("a").int(-1).int(0).int(0).arr(0).arr(0).b, t),
			mal("tpncounter of one half", p, env(p, 2).arr(1).arr(0).b, t),
			mal("tpncounter of three halves", p, env(p, 2).arr(3).arr(0).arr(0).arr(0).b, t),
			mal("tgcounter envelope as tpncounter", p, env(g, 2).arr(0).b, t),
			mal("version 3", g, env(g, 3).arr(0).b, t),
			mal("trailing bytes", g, append(env(g, 2).arr(0).b, 0xc0), t),
			mal("v1: entry of six fields", g, env(g, 1).arr(1).arr(6).str("a").uint(1).int(0).int(0).arr(0).arr(0).b, t),
			mal("v1: entry of four fields", g, env(g, 1).arr(1).arr(4).str("a").uint(1).int(0).arr(0).b, t),
			mal("v1: seq 0", g, env(g, 1).arr(1).arr(5).str("a").uint(0).int(0).arr(1).arr(2).str("t1").int(5).arr(0).b, t),
		},
	}
}

// scenarioTxns lists the transaction ids a scenario names, sorted.
func scenarioTxns(sc *tScenario) []string {
	set := map[string]bool{}
	for _, st := range sc.Steps {
		if st.Txn != nil && validID(*st.Txn) {
			set[*st.Txn] = true
		}
	}
	return sortedKeys(set)
}

// tModel is SPEC.md section 6 written plainly, sharing nothing with the
// package: per half (credits, debits) and per actor an ordered list of the
// copies the actor holds, folds, or has forgotten, and the rules as the
// specification states them. Every copy that is not the owner's is dropped
// or unfolded by its holder; the oldest history items beyond history_length
// are folded; of the folded items older than the newest folded_length, those
// no other copy shares are forgotten (the others are deferred). The value
// counts each distinct transaction once, by its owner's copy: the smallest
// actor id among the holders that folded it, else among those holding it in
// a history; across halves the owners compare the same way, a credit
// winning a tie of one actor.
type tModel struct {
	h, f    int
	timed   bool
	half    [2]map[string]*tEnt // credits, debits (magnitudes)
	recount [2]int64            // amounts counted a second time: a retry after the window
}

// tEnt is one actor's entry in one half of the model.
type tEnt struct {
	seq   uint64
	items []tItem // oldest first: forgotten and folded items, then the history
}

type tItem struct {
	txn    string
	amt    int64 // magnitude
	folded bool
	gone   bool // forgotten: still counted by the actor's total, no longer held
}

// tHeld is one held copy of a transaction.
type tHeld struct {
	actor  string
	amt    int64 // magnitude
	folded bool
}

func newTModel(o tOptions) *tModel {
	h := o.HistoryLength
	if h == 0 {
		h = 10
	}
	f := o.FoldedLength
	if f == 0 {
		f = h
	}
	return &tModel{h: h, f: f, timed: o.TxnTime != "", half: [2]map[string]*tEnt{{}, {}}}
}

func (m *tModel) clone() *tModel {
	c := *m
	for s := range c.half {
		c.half[s] = map[string]*tEnt{}
		for a, e := range m.half[s] {
			c.half[s][a] = &tEnt{seq: e.seq, items: slices.Clone(e.items)}
		}
	}
	return &c
}

// held lists the copies of x held in half s, sorted by actor.
func (m *tModel) held(s int, x string) []tHeld {
	var out []tHeld
	for _, a := range sortedKeys(m.half[s]) {
		for _, it := range m.half[s][a].items {
			if it.txn == x && !it.gone {
				out = append(out, tHeld{a, it.amt, it.folded})
			}
		}
	}
	return out
}

// ownerOf is the owner rule: folded first, then the smallest actor id
// (Go compares strings by bytes).
func ownerOf(cs []tHeld) (tHeld, bool) {
	var o tHeld
	for i, c := range cs {
		if i == 0 || (c.folded && !o.folded) || (c.folded == o.folded && c.actor < o.actor) {
			o = c
		}
	}
	return o, len(cs) > 0
}

// counted returns the copy of x that counts and its half, if x is held.
func (m *tModel) counted(x string) (tHeld, int, bool) {
	po, pok := ownerOf(m.held(0, x))
	no, nok := ownerOf(m.held(1, x))
	switch {
	case !pok && !nok:
		return tHeld{}, 0, false
	case !nok:
		return po, 0, true
	case !pok:
		return no, 1, true
	case po.folded != no.folded:
		if no.folded {
			return no, 1, true
		}
		return po, 0, true
	case no.actor < po.actor:
		return no, 1, true
	default:
		return po, 0, true
	}
}

func signed(s int, a int64) int64 {
	if s == 1 {
		return -a
	}
	return a
}

// goneAmt is the amount of a forgotten copy of x in half s, if any.
func (m *tModel) goneAmt(s int, x string) (int64, bool) {
	for _, a := range sortedKeys(m.half[s]) {
		for _, it := range m.half[s][a].items {
			if it.txn == x && it.gone {
				return it.amt, true
			}
		}
	}
	return 0, false
}

// txnsOf lists every id half s holds or forgot, sorted.
func (m *tModel) txnsOf(s int) []string {
	set := map[string]bool{}
	for _, e := range m.half[s] {
		for _, it := range e.items {
			set[it.txn] = true
		}
	}
	return sortedKeys(set)
}

// halfValue is what half s counts on its own: each id once, by the half's
// owner copy or else by its forgotten copy, plus the second countings.
func (m *tModel) halfValue(s int) *big.Int {
	v := big.NewInt(m.recount[s])
	for _, x := range m.txnsOf(s) {
		if o, ok := ownerOf(m.held(s, x)); ok {
			v.Add(v, big.NewInt(o.amt))
		} else if a, ok := m.goneAmt(s, x); ok {
			v.Add(v, big.NewInt(a))
		}
	}
	return v
}

func (m *tModel) fits() bool { return m.halfValue(0).IsInt64() && m.halfValue(1).IsInt64() }

// value is P − N, an id held in both halves counting once, by its owner.
func (m *tModel) value() int64 {
	v := new(big.Int).Sub(m.halfValue(0), m.halfValue(1))
	for _, x := range m.txnsOf(0) {
		po, pok := ownerOf(m.held(0, x))
		no, nok := ownerOf(m.held(1, x))
		if !pok || !nok {
			continue
		}
		if _, s, _ := m.counted(x); s == 0 {
			v.Add(v, big.NewInt(no.amt)) // the debit's copy counts nothing
		} else {
			v.Sub(v, big.NewInt(po.amt))
		}
	}
	return v.Int64()
}

func (m *tModel) status(x string) string {
	st := "unknown"
	for s := range m.half {
		for _, c := range m.held(s, x) {
			if c.folded {
				return "folded"
			}
			st = "in_history"
		}
	}
	return st
}

// conflicts lists the ids held with two amounts or in both halves.
func (m *tModel) conflicts() []tConflictJSON {
	var out []tConflictJSON
	set := map[string]bool{}
	for s := range m.half {
		for _, x := range m.txnsOf(s) {
			set[x] = true
		}
	}
	for _, x := range sortedKeys(set) {
		var all []tCopyJSON
		amts := map[int64]bool{}
		for s := range m.half {
			for _, c := range m.held(s, x) {
				all = append(all, tCopyJSON{c.actor, I64(signed(s, c.amt)), c.folded})
				amts[signed(s, c.amt)] = true
			}
		}
		if len(amts) > 1 {
			o, s, _ := m.counted(x)
			out = append(out, tConflictJSON{x, tCopyJSON{o.actor, I64(signed(s, o.amt)), o.folded}, all})
		}
	}
	return out
}

// plan is actor a's housekeeping of its entry in half s, read from the
// state before any of it is done: the entry's items afterwards, and whether
// they changed.
func (m *tModel) plan(s int, a string) ([]tItem, bool) {
	e := m.half[s][a]
	if e == nil {
		return nil, false
	}
	var out []tItem
	changed := false
	for _, it := range e.items {
		if !it.gone {
			if o, os, _ := m.counted(it.txn); os != s || o.actor != a {
				changed = true // not the owner's copy: dropped or unfolded
				continue
			}
		}
		out = append(out, it)
	}
	hist := 0
	for _, it := range out {
		if !it.gone && !it.folded {
			hist++
		}
	}
	for i := range out {
		if hist <= m.h {
			break
		}
		if !out[i].gone && !out[i].folded {
			out[i].folded, changed = true, true
			hist--
		}
	}
	var folded []int
	for i, it := range out {
		if it.folded && !it.gone {
			folded = append(folded, i)
		}
	}
	for _, i := range folded[:max(0, len(folded)-m.f)] {
		if len(m.held(0, out[i].txn))+len(m.held(1, out[i].txn)) == 1 {
			out[i].gone, changed = true, true
		}
	}
	return out, changed
}

// step predicts st's error, and the outcome of an apply or whether a
// compaction changes anything; it updates the model.
func (m *tModel) step(t *testing.T, typ string, ms map[string]*tModel, st Step) (errKind, outcome string, changed bool) {
	halves := 1
	if typ == "tpncounter" {
		halves = 2
	}
	switch st.Op {
	case "compact":
		a := idOf(t, st.Actor, st.ActorHex)
		if !validID(a) {
			return "invalid_actor", "", false
		}
		var plans [2][]tItem
		var ch [2]bool
		for s := 0; s < halves; s++ {
			plans[s], ch[s] = m.plan(s, a)
		}
		for s := 0; s < halves; s++ {
			if ch[s] {
				e := m.half[s][a]
				e.items = plans[s]
				e.seq++
			}
		}
		return "", "", ch[0] || ch[1]
	case "merge":
		next := m.clone()
		for s := range next.half {
			for a, e := range ms[st.From].half[s] {
				if mine := next.half[s][a]; mine == nil || e.seq > mine.seq {
					next.half[s][a] = &tEnt{seq: e.seq, items: slices.Clone(e.items)}
				}
			}
		}
		if !next.fits() {
			return "overflow", "", false
		}
		*m = *next
		return "", "", false
	case "apply":
	default:
		t.Fatalf("unknown op %q", st.Op)
	}
	a, x, n := idOf(t, st.Actor, st.ActorHex), idOf(t, st.Txn, ""), int64(*st.Amount)
	if typ == "tpncounter" && (n == 0 || n == math.MinInt64) {
		return "invalid_amount", "", false
	}
	switch {
	case !validID(a):
		return "invalid_actor", "", false
	case !validID(x):
		return "invalid_txn", "", false
	case n <= 0 && typ == "tgcounter":
		return "invalid_amount", "", false
	case m.timed && !refTimeUUID(x).Valid:
		return "invalid_txn", "", false
	}
	s, mag := 0, n
	if n < 0 {
		s, mag = 1, -n
	}
	if _, _, known := m.counted(x); known {
		require.False(t, st.Beyond, "a beyond_window step retries %s, which is still known", x)
		o, os, _ := m.counted(x)
		switch {
		case signed(os, o.amt) == n && m.status(x) == "folded":
			return "", "duplicate_folded", false
		case signed(os, o.amt) == n:
			return "", "duplicate", false
		case slices.ContainsFunc(m.held(s, x), func(c tHeld) bool { return c.amt == mag }):
			return "", "superseded", false
		default:
			return "conflicting_transaction", "", false
		}
	}
	if m.timed && st.Beyond {
		// Unknown, and its time is not after the horizon: refused.
		return "outside_window", "", false
	}
	next := m.clone()
	if st.Beyond {
		// Forgotten and retried: the forgotten copy stays counted in its
		// holder's total, and the retry counts again.
		g, ok := next.goneAmt(s, x)
		require.True(t, ok, "a beyond_window step retries %s, which this half never forgot", x)
		next.recount[s] += g
	}
	e := next.half[s][a]
	if e == nil {
		e = &tEnt{}
		next.half[s][a] = e
	} else {
		e.items, _ = next.plan(s, a)
	}
	e.items = append(e.items, tItem{txn: x, amt: mag})
	e.seq++
	if !next.fits() {
		return "overflow", "", false
	}
	*m = *next
	return "", "applied", false
}

// entries is the model's half s as listed in a vector: held items, and
// total = every folded or forgotten amount (an unfolded copy leaves the
// list, and with it the total).
func (m *tModel) entries(s int) []tEntry {
	out := []tEntry{}
	for _, a := range sortedKeys(m.half[s]) {
		e := m.half[s][a]
		en := tEntry{Actor: a, Seq: U64(e.seq), History: []TxnJSON{}, Folded: []TxnJSON{}}
		for _, it := range e.items {
			switch {
			case it.gone:
				if tu := refTimeUUID(it.txn); m.timed && tu.Valid {
					en.Forgot = max(en.Forgot, tu.Nanos)
				}
			case it.folded:
				en.Folded = append(en.Folded, TxnJSON{it.txn, I64(it.amt)})
			default:
				en.History = append(en.History, TxnJSON{it.txn, I64(it.amt)})
			}
			if it.gone || it.folded {
				en.Total += I64(it.amt)
			}
		}
		out = append(out, en)
	}
	return out
}

// refTValue is the value SPEC.md gives a tgcounter (n nil) or tpncounter
// read from its listed entries alone: per half, the sum of the totals plus,
// for every id held, its owner's amount when the owner holds it in a
// history, or, when the owner folded it (its total counts it), minus the
// amount of every other folded copy; across halves, the losing half's owner
// copy counts nothing.
func refTValue(p, n []tEntry) int64 {
	half := func(es []tEntry) (*big.Int, map[string]tHeld) {
		v := new(big.Int)
		copies := map[string][]tHeld{}
		for _, e := range es {
			v.Add(v, big.NewInt(int64(e.Total)))
			for _, x := range e.History {
				copies[x.Txn] = append(copies[x.Txn], tHeld{e.Actor, int64(x.Amount), false})
			}
			for _, x := range e.Folded {
				copies[x.Txn] = append(copies[x.Txn], tHeld{e.Actor, int64(x.Amount), true})
			}
		}
		owners := map[string]tHeld{}
		for x, cs := range copies {
			o, _ := ownerOf(cs)
			owners[x] = o
			if !o.folded {
				v.Add(v, big.NewInt(o.amt))
				continue
			}
			for _, c := range cs {
				if c.folded && c.actor != o.actor {
					v.Sub(v, big.NewInt(c.amt))
				}
			}
		}
		return v, owners
	}
	pv, po := half(p)
	nv, no := half(n)
	v := new(big.Int).Sub(pv, nv)
	for x, a := range po {
		b, ok := no[x]
		if !ok {
			continue
		}
		if (b.folded && !a.folded) || (a.folded == b.folded && b.actor < a.actor) {
			v.Sub(v, big.NewInt(a.amt)) // the debit counts
		} else {
			v.Add(v, big.NewInt(b.amt))
		}
	}
	return v.Int64()
}

func refTBody(e refEnc, es []tEntry) refEnc { return refTBodyV(e, es, 2) }

// refTBodyV is a tgcounter body in format version v: entries of six fields
// in version 2, five (no forgot) in version 1.
func refTBodyV(e refEnc, es []tEntry, v int) refEnc {
	e = e.arr(len(es))
	for _, en := range es {
		if v == 1 {
			e = e.arr(5).str(en.Actor).uint(uint64(en.Seq)).int(int64(en.Total))
		} else {
			e = e.arr(6).str(en.Actor).uint(uint64(en.Seq)).int(int64(en.Total)).int(int64(en.Forgot))
		}
		for _, l := range [][]TxnJSON{en.History, en.Folded} {
			e = e.arr(len(l))
			for _, x := range l {
				e = e.arr(2).str(x.Txn).int(int64(x.Amount))
			}
		}
	}
	return e
}

func checkTPN(t *testing.T, raw []byte) {
	var f tFile
	require.NoError(t, json.Unmarshal(raw, &f))
	require.NotEmpty(t, f.Scenarios)
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		t.Run(sc.Name, func(t *testing.T) {
			rs := runT(t, sc, false)
			ms := map[string]*tModel{}
			for _, r := range sc.Replicas {
				ms[r] = newTModel(sc.Options)
			}
			for j, st := range sc.Steps {
				if st.Beyond && sc.Options.TxnTime == "" {
					require.Len(t, sc.Replicas, 1, "untimed beyond_window steps are only modelled on one replica")
				}
				if st.Error == "too_large" {
					// Size limits are not part of the model; the step
					// changed nothing (checked by runT).
					continue
				}
				wantErr, outcome, changed := ms[st.Replica].step(t, sc.Type, ms, st)
				require.Equal(t, wantErr, st.Error, "model disagrees with vector at step %d", j)
				if st.Error == "" {
					switch st.Op {
					case "apply":
						require.Equal(t, outcome, st.Outcome, "model disagrees with vector at step %d", j)
					case "compact":
						require.NotNil(t, st.Changed, "step %d", j)
						require.Equal(t, changed, *st.Changed, "model disagrees with vector at step %d", j)
					}
				}
			}
			require.Len(t, sc.Final, len(rs))
			for name, want := range sc.Final {
				r, m := rs[name], ms[name]
				require.Equal(t, want.Hex, hex.EncodeToString(r.bytes()), "%s encoding", name)
				var ref refEnc
				if sc.Type == "tgcounter" {
					require.NotNil(t, want.Entries)
					ref = refTBody(env("tgcounter", 2), *want.Entries)
					require.Equal(t, *want.Entries, m.entries(0), "%s: entries vs model", name)
					require.EqualValues(t, want.Value, refTValue(*want.Entries, nil), "%s: value of the listed entries", name)
				} else {
					require.NotNil(t, want.P)
					ref = refTBody(refTBody(env("tpncounter", 2).arr(2), *want.P), *want.N)
					require.Equal(t, *want.P, m.entries(0), "%s: credit entries vs model", name)
					require.Equal(t, *want.N, m.entries(1), "%s: debit entries vs model", name)
					require.EqualValues(t, want.Value, refTValue(*want.P, *want.N), "%s: value of the listed entries", name)
				}
				require.Equal(t, want.Hex, ref.hex(), "%s: reference encoding of the listed entries", name)
				got := r.state()
				got.Value, got.Hex, got.Status = want.Value, want.Hex, want.Status
				require.Equal(t, want, got, "%s structured state", name)
				require.Equal(t, want.Conflicts, m.conflicts(), "%s: conflicts vs model", name)
				require.EqualValues(t, m.value(), want.Value, "%s: value vs model", name)
				require.EqualValues(t, want.Value, r.value())
				require.True(t, r.decodeEqual(t, unhex(t, want.Hex)), "%s: decode(hex) != state", name)
				for x, s := range want.Status {
					require.Equal(t, s, statusNames[r.status(crdt.TxnID(x))], "%s status of %s", name, x)
					require.Equal(t, s, m.status(x), "%s status of %s vs model", name, x)
					if s != "unknown" {
						a, ok := r.amount(crdt.TxnID(x))
						require.True(t, ok)
						o, os, _ := m.counted(x)
						require.Equal(t, signed(os, o.amt), a, "%s amount of %s vs model", name, x)
					}
				}
			}
		})
	}
	require.NotEmpty(t, f.Version1)
	for _, c := range f.Version1 {
		t.Run("version 1/"+c.Name, func(t *testing.T) {
			require.Equal(t, c.Hex, refTBodyV(refTBodyV(env("tpncounter", 1).arr(2), c.P, 1), c.N, 1).hex(), "reference version 1 encoding")
			dec := must(tpncounter.New(tpncounter.Options{}))
			require.NoError(t, dec.UnmarshalBinary(unhex(t, c.Hex)))
			require.Equal(t, c.P, tEntries(dec.Positive()))
			require.Equal(t, c.N, tEntries(dec.Negative()))
			require.Equal(t, c.Reencoded, hex.EncodeToString(must(dec.MarshalBinary())))
			require.Equal(t, c.Reencoded, refTBody(refTBody(env("tpncounter", 2).arr(2), c.P), c.N).hex(), "reference version 2 encoding")
		})
	}
	require.NotEmpty(t, f.TimeUUIDs)
	for _, c := range f.TimeUUIDs {
		require.Equal(t, c, refTimeUUID(c.ID), "reference TimeUUID of %q", c.ID)
		at, ok := tpncounter.TimeUUID(crdt.TxnID(c.ID))
		require.Equal(t, c.Valid, ok, c.ID)
		if ok {
			require.EqualValues(t, c.Nanos, at.UnixNano(), c.ID)
		}
	}
	require.NotEmpty(t, f.Decoded)
	for _, d := range f.Decoded {
		t.Run("decoded/"+d.Name, func(t *testing.T) {
			r := decodeT(t, d.Type, unhex(t, d.Hex))
			var ref refEnc
			var m *tModel
			if d.Type == "tgcounter" {
				require.NotNil(t, d.Entries)
				ref, m = refTBody(env("tgcounter", 2), *d.Entries), modelOf(*d.Entries)
				require.EqualValues(t, d.Value, refTValue(*d.Entries, nil), "value of the listed entries")
			} else {
				require.NotNil(t, d.P)
				ref, m = refTBody(refTBody(env("tpncounter", 2).arr(2), *d.P), *d.N), modelOf(*d.P, *d.N)
				require.EqualValues(t, d.Value, refTValue(*d.P, *d.N), "value of the listed entries")
			}
			require.Equal(t, d.Hex, ref.hex(), "reference encoding of the listed entries")
			require.Equal(t, d.Hex, hex.EncodeToString(r.bytes()), "re-encoding")
			got := r.state()
			require.Equal(t, d.Entries, got.Entries)
			require.Equal(t, d.P, got.P)
			require.Equal(t, d.N, got.N)
			require.EqualValues(t, d.Value, r.value())
			require.NotEmpty(t, d.Conflicts)
			require.Equal(t, d.Conflicts, got.Conflicts)
			require.Equal(t, d.Conflicts, m.conflicts(), "conflicts vs model")
		})
	}
	checkMalformed(t, f.Malformed)
}

// refTimeUUID is SPEC.md 6.1's TimeUUID, written from the RFC 4122 layout:
// 36 characters 8-4-4-4-12 of hex digits, version nibble 1, variant 10xx;
// the time is the 60-bit count of 100 ns intervals since 1582-10-15.
func refTimeUUID(id string) tTimeUUID {
	out := tTimeUUID{ID: id}
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' {
		return out
	}
	b, err := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
	if err != nil || len(b) != 16 || b[6]>>4 != 1 || b[8]&0xc0 != 0x80 {
		return out
	}
	ticks := uint64(b[6]&0x0f)<<56 | uint64(b[7])<<48 | uint64(b[4])<<40 | uint64(b[5])<<32 |
		uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
	const gregorianToUnix = 122192928000000000 // 100 ns intervals from 1582-10-15 to 1970-01-01
	if ticks <= gregorianToUnix || ticks-gregorianToUnix > math.MaxInt64/100 {
		return out // before 1970 or after 2262: outside the Unix-nanosecond range
	}
	out.Valid, out.Nanos = true, I64((int64(ticks)-gregorianToUnix)*100)
	return out
}

// ---------------------------------------------------------------------------
// tally.json

// AggJSON is an aggregate state. Sum: sum. Min/Max: min or max, or empty.
// Stats: count, sum, min, max and sumsq (decimal, up to 2^128), or empty.
// Distinct: the non-zero registers as [index, value] pairs, or empty;
// estimate is informative (it depends on the estimator, not the format).
type AggJSON struct {
	Kind      string  `json:"kind"`
	Empty     bool    `json:"empty,omitempty"`
	Count     *I64    `json:"count,omitempty"`
	Sum       *I64    `json:"sum,omitempty"`
	Min       *I64    `json:"min,omitempty"`
	Max       *I64    `json:"max,omitempty"`
	SumSq     string  `json:"sumsq,omitempty"`
	Registers regList `json:"registers,omitempty"`
	Estimate  *U64    `json:"estimate,omitempty"`
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
	Malformed []Malformed `json:"malformed"`
}

// aggKind is one aggregate type, erased so that vectors can name it.
type aggKind struct {
	build       func(o Obs) (any, error)
	shard       func(mutator string, exp int64, st any) ([]byte, error)
	tally       func(ft int64, st any) ([]byte, error)
	decodeShard func([]byte) (string, int64, any, error)
	decodeTally func([]byte) (int64, any, error)
	json        func(st any) AggJSON
	readGC      func(store tally.Store, now time.Time, grace time.Duration) (any, error, tally.GCPlan, error, any, error)
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
		readGC: func(store tally.Store, now time.Time, grace time.Duration) (any, error, tally.GCPlan, error, any, error) {
			c := must(tally.New[A](store, "k", tally.Config{Clock: func() time.Time { return now }, Grace: grace, MaxSkew: grace / 3}))
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
		func(s *tally.Sum) AggJSON { return AggJSON{Kind: "sum", Sum: ip(s.Value())} }),
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
			return AggJSON{Kind: "stats", Count: ip(s.Count()), Sum: ip(s.Sum()), Min: ip(mn), Max: ip(mx), SumSq: s.SumOfSquares().String()}
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

func decodeAgg(t *testing.T, kind string, data []byte, shard bool) (any, error) {
	k, ok := aggKinds[kind]
	require.True(t, ok, "unknown aggregate kind %q", kind)
	if shard {
		_, _, st, err := k.decodeShard(data)
		return st, err
	}
	_, st, err := k.decodeTally(data)
	return st, err
}

// aggModel computes an aggregate from observations with plain arithmetic,
// independently of package tally. It returns "overflow" when the exact
// result does not fit the format.
func aggModel(kind string, o Obs) (AggJSON, string) {
	out := AggJSON{Kind: kind}
	switch kind {
	case "sum":
		s := new(big.Int)
		for _, v := range o.Values {
			s.Add(s, big.NewInt(int64(v)))
		}
		if !s.IsInt64() {
			return out, "overflow"
		}
		out.Sum = ip(s.Int64())
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
			if !s.IsInt64() || sq.BitLen() > 128 {
				return out, "overflow"
			}
			out.Count, out.Sum, out.Min, out.Max, out.SumSq = ip(int64(len(o.Values))), ip(s.Int64()), ip(mn), ip(mx), sq.String()
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
func refAggBody(t *testing.T, e refEnc, a AggJSON) refEnc {
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

func refShard(t *testing.T, kind, mutator string, exp int64, a AggJSON) string {
	return refAggBody(t, env("tally.shard", 1).arr(4).str(kind).str(mutator).int(exp), a).hex()
}

func refTally(t *testing.T, kind string, ft int64, a AggJSON) string {
	return refAggBody(t, env("tally.tally", 1).arr(3).str(kind).int(ft), a).hex()
}

// sameAgg compares states ignoring the informative estimate.
func sameAgg(t *testing.T, want, got AggJSON, msg string) {
	t.Helper()
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

func genTally(t *testing.T) any {
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
	shard("distinct empty", "distinct", "m1", Obs{})
	shard("distinct sparse", "distinct", "m1", Obs{Items: []string{"alice", "bob", "carol", "alice"}})
	shard("distinct sparse 200", "distinct", "m1", items(200, "user-"))
	shard("distinct dense", "distinct", "m1", items(6000, "u"))
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
	read("sum overflow is an error", "sum", nil, rs("a", old, ints(math.MaxInt64)), rs("b", live, ints(1)))
	read("empty counter", "min", nil)

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
		mal("distinct registers as str", "tally.shard:distinct", sh("distinct", refEnc{}.arr(2).uint(14).str("")), t),
	}
	return f
}

// runRead sets up a memory tally store from the vector's inputs, reads,
// runs one GC and reads again, recording the outputs.
func runRead(t *testing.T, rv readVec) readVec {
	k := aggKinds[rv.Kind]
	store := memory.NewTallyStore()
	ctx := context.Background()
	if rv.Tally != nil {
		st := must(k.build(rv.Tally.Obs))
		b := must(k.tally(int64(rv.Tally.FoldedThrough), st))
		require.NoError(t, store.ApplyGC(ctx, "k", tally.GCBatch{WriteTS: int64(rv.Tally.FoldedThrough), Tally: b}))
	}
	for _, s := range rv.Shards {
		st := must(k.build(s.Obs))
		b := must(k.shard(s.Mutator, int64(s.ExpiresAt), st))
		require.NoError(t, store.PutShard(ctx, "k", tally.EncodedShard{Mutator: crdt.ActorID(s.Mutator), Data: b}, int64(s.WriteTS)))
	}
	v, rerr, plan, gerr, after, aerr := k.readGC(store, time.UnixMicro(int64(rv.NowUS)), time.Duration(rv.GraceUS)*time.Microsecond)
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

func checkTally(t *testing.T, raw []byte) {
	var f tallyFile
	require.NoError(t, json.Unmarshal(raw, &f))
	require.NotEmpty(t, f.Shards)
	kindsSeen := map[string]bool{}
	for _, s := range f.Shards {
		kindsSeen[s.Kind] = true
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
		t.Run(rv.Name, func(t *testing.T) {
			got := runRead(t, rv)
			require.Equal(t, rv, got, "reference implementation vs vector")
			// Model: a read combines the tally with every shard whose
			// expires_at is above folded_through.
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
			for _, s := range rv.Shards {
				if int64(s.ExpiresAt) > ft {
					all = appendObs(all, s.Obs)
				}
				switch {
				case int64(s.ExpiresAt) <= ft:
					del = append(del, s.Mutator)
				case int64(s.ExpiresAt) < cutoff:
					folded = appendObs(folded, s.Obs)
					newT = max(newT, int64(s.ExpiresAt))
					del = append(del, s.Mutator)
					nFolded++
				default:
					nLive++
				}
			}
			model, merr := aggModel(rv.Kind, all)
			require.Equal(t, merr, rv.ReadError, "read error vs model")
			if merr == "" {
				sameAgg(t, model, *rv.Read, "read vs model")
			}
			foldedModel, ferr := aggModel(rv.Kind, folded)
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

func appendObs(a, b Obs) Obs {
	return Obs{Values: append(slices.Clone(a.Values), b.Values...), Items: append(a.allItems(), b.allItems()...)}
}

// ---------------------------------------------------------------------------
// deltalog.json

// t0 is the base time of every time-based id in the vectors.
var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// vid is the deterministic id sec seconds after t0 with the given clock
// sequence and node.
func vid(sec float64, seq uint16, node uint64) deltalog.ID {
	return deltalog.IDFromParts(t0.Add(time.Duration(sec*float64(time.Second))), seq, node)
}

type statsJSON struct {
	Count   I64 `json:"count"`
	Sum     I64 `json:"sum"`
	Min     I64 `json:"min"`
	Max     I64 `json:"max"`
	SumSqHi U64 `json:"sumsq_hi"`
	SumSqLo U64 `json:"sumsq_lo"`
}

type cellJSON struct {
	ID      string     `json:"id"`
	Kind    string     `json:"kind"`
	Delta   I64        `json:"delta"`
	Written I64        `json:"written"`
	Stats   *statsJSON `json:"stats,omitempty"`
	Hex     string     `json:"hex,omitempty"`
}

func toCellJSON(c deltalog.Cell, withHex bool) cellJSON {
	j := cellJSON{ID: c.ID.String(), Kind: c.Kind.String(), Delta: I64(c.Delta), Written: I64(c.Written)}
	if c.Kind == deltalog.KindMerge {
		s := c.Stats
		j.Stats = &statsJSON{I64(s.Count), I64(s.Sum), I64(s.Min), I64(s.Max), U64(s.SumSqHi), U64(s.SumSqLo)}
	}
	if withHex {
		j.Hex = hex.EncodeToString(must(c.MarshalBinary()))
	}
	return j
}

func fromCellJSON(t *testing.T, j cellJSON) deltalog.Cell {
	id, err := deltalog.ParseID(j.ID)
	require.NoError(t, err)
	c := deltalog.Cell{ID: id, Kind: deltalog.Kind(j.Kind[0]), Delta: int64(j.Delta), Written: int64(j.Written)}
	if j.Stats != nil {
		c.Stats = deltalog.Stats{Count: int64(j.Stats.Count), Sum: int64(j.Stats.Sum), Min: int64(j.Stats.Min), Max: int64(j.Stats.Max), SumSqHi: uint64(j.Stats.SumSqHi), SumSqLo: uint64(j.Stats.SumSqLo)}
	}
	return c
}

// refCell encodes a cell from its JSON form: [id bin16, kind uint, delta,
// written, nil | [count, sum, min, max, sumsq_hi, sumsq_lo]].
func refCell(t *testing.T, j cellJSON) string {
	id, err := deltalog.ParseID(j.ID)
	require.NoError(t, err)
	e := env("deltalog.cell", 1).arr(5).bin(id[:]).uint(uint64(j.Kind[0])).int(int64(j.Delta)).int(int64(j.Written))
	if j.Stats == nil {
		e = e.nil()
	} else {
		s := j.Stats
		e = e.arr(6).int(int64(s.Count)).int(int64(s.Sum)).int(int64(s.Min)).int(int64(s.Max)).uint(uint64(s.SumSqHi)).uint(uint64(s.SumSqLo))
	}
	return e.hex()
}

type idVec struct {
	Time     string `json:"time"`
	ClockSeq uint16 `json:"clock_seq"`
	Node     string `json:"node"`
	UUID     string `json:"uuid"`
}

type orderVec struct {
	A       string `json:"a"`
	AKind   string `json:"a_kind,omitempty"`
	B       string `json:"b"`
	BKind   string `json:"b_kind,omitempty"`
	Compare int    `json:"compare"`
}

type windowVec struct {
	Now        string `json:"now"`
	WindowNS   I64    `json:"window_ns"`
	FutureNS   I64    `json:"future_skew_ns"`
	ID         string `json:"id"`
	Delta      I64    `json:"delta"`
	Error      string `json:"error,omitempty"`
	IDTimeNote string `json:"id_time"`
}

type readingJSON struct {
	Value I64       `json:"value"`
	Stats statsJSON `json:"stats"`
	Cells int       `json:"cells"`
}

type dStep struct {
	Replica string    `json:"replica"`
	Op      string    `json:"op"`
	ID      string    `json:"id,omitempty"`
	Delta   *I64      `json:"delta,omitempty"`
	Cell    *cellJSON `json:"cell,omitempty"`
	Cutoff  string    `json:"cutoff,omitempty"`
	Written string    `json:"written,omitempty"`
	From    string    `json:"from,omitempty"`
	// Outputs.
	OK      *bool     `json:"ok,omitempty"`
	Merged  *cellJSON `json:"merge_cell,omitempty"`
	Dropped *int      `json:"dropped,omitempty"`
	Error   string    `json:"error,omitempty"`
}

type dState struct {
	Cells     []cellJSON   `json:"cells"`
	Read      *readingJSON `json:"read,omitempty"`
	ReadError string       `json:"read_error,omitempty"`
}

type dScenario struct {
	Name     string            `json:"name"`
	Note     string            `json:"note,omitempty"`
	Replicas []string          `json:"replicas"`
	Steps    []dStep           `json:"steps"`
	Final    map[string]dState `json:"final"`
}

type dFile struct {
	Comment   string      `json:"comment"`
	IDs       []idVec     `json:"ids"`
	Order     []orderVec  `json:"order"`
	Cells     []cellJSON  `json:"cells"`
	Windows   []windowVec `json:"windows"`
	Scenarios []dScenario `json:"scenarios"`
	Malformed []Malformed `json:"malformed"`
}

func runD(t *testing.T, sc *dScenario, fill bool) map[string]*deltalog.Log {
	rs := map[string]*deltalog.Log{}
	for _, r := range sc.Replicas {
		rs[r] = &deltalog.Log{}
	}
	parseT := func(s string) time.Time { return must(time.Parse(time.RFC3339Nano, s)) }
	for i := range sc.Steps {
		st := &sc.Steps[i]
		l := rs[st.Replica]
		before := l.Cells()
		var err error
		var ok *bool
		var merged *cellJSON
		var dropped *int
		switch st.Op {
		case "add":
			var id deltalog.ID
			if st.ID != "" {
				u := must(hex.DecodeString(strings.ReplaceAll(st.ID, "-", "")))
				copy(id[:], u)
			}
			err = l.Add(id, int64(*st.Delta))
		case "insert":
			err = l.Insert(fromCellJSON(t, *st.Cell))
		case "merge_before":
			var c deltalog.Cell
			var o bool
			c, o, err = l.MergeBefore(parseT(st.Cutoff), parseT(st.Written))
			if err == nil {
				ok = &o
				if o {
					j := toCellJSON(c, true)
					merged = &j
				}
			}
		case "compact":
			n := l.Compact()
			dropped = &n
		case "merge":
			err = l.Merge(rs[st.From])
		default:
			t.Fatalf("unknown op %q", st.Op)
		}
		if fill {
			st.Error, st.OK, st.Merged, st.Dropped = kindOf(t, err), ok, merged, dropped
		} else {
			requireKind(t, st.Error, err, "%s step %d", sc.Name, i)
			require.Equal(t, st.OK, ok, "%s step %d ok", sc.Name, i)
			require.Equal(t, st.Merged, merged, "%s step %d merge cell", sc.Name, i)
			require.Equal(t, st.Dropped, dropped, "%s step %d dropped", sc.Name, i)
		}
		if err != nil {
			require.Equal(t, before, l.Cells(), "%s step %d: failed op changed the log", sc.Name, i)
		}
	}
	return rs
}

func dStateOf(t *testing.T, l *deltalog.Log) dState {
	st := dState{Cells: []cellJSON{}}
	for _, c := range l.Cells() {
		st.Cells = append(st.Cells, toCellJSON(c, true))
	}
	r, err := l.Read()
	st.ReadError = kindOf(t, err)
	if err == nil {
		s := r.Stats
		st.Read = &readingJSON{Value: I64(r.Value), Cells: r.Cells, Stats: statsJSON{I64(s.Count), I64(s.Sum), I64(s.Min), I64(s.Max), U64(s.SumSqHi), U64(s.SumSqLo)}}
	}
	return st
}

func genDeltalog(t *testing.T) any {
	var f dFile
	f.Comment = "Delta log (SPEC.md section 8). Ids are RFC 4122 version 1 UUIDs; times are RFC 3339; written is Unix nanoseconds."
	for _, c := range []struct {
		at   time.Time
		seq  uint16
		node uint64
	}{
		{t0, 0, 0}, {t0, 0x3fff, 0xffffffffffff}, {t0.Add(123456789 * time.Nanosecond), 0x1234, 0x0a0b0c0d0e0f},
		{time.Date(1582, 10, 15, 0, 0, 0, 0, time.UTC), 1, 1}, {time.Date(2100, 6, 1, 12, 0, 0, 500, time.UTC), 7, 42},
	} {
		id := deltalog.IDFromParts(c.at, c.seq, c.node)
		f.IDs = append(f.IDs, idVec{Time: c.at.Format(time.RFC3339Nano), ClockSeq: c.seq, Node: fmt.Sprintf("%012x", c.node), UUID: id.String()})
	}
	ord := func(a, b deltalog.ID) {
		f.Order = append(f.Order, orderVec{A: a.String(), B: b.String(), Compare: a.Compare(b)})
	}
	ord(vid(0, 1, 1), vid(1, 1, 1))
	ord(vid(1, 0, 0), vid(0, 0x3fff, 0xffffffffffff))
	ord(vid(0, 1, 1), vid(0, 1, 1))
	ord(vid(0, 1, 0x7f0000000000), vid(0, 1, 0x800000000000))
	ord(vid(0, 0x0001, 0), vid(0, 0x0100, 0))
	ord(vid(0, 0x2000, 0), vid(0, 0x0000, 0))
	ord(vid(0.0000001, 0, 0), vid(0, 0x3fff, 0xffffffffffff))
	cord := func(a deltalog.ID, ak deltalog.Kind, b deltalog.ID, bk deltalog.Kind) {
		f.Order = append(f.Order, orderVec{A: a.String(), AKind: ak.String(), B: b.String(), BKind: bk.String(),
			Compare: deltalog.CompareCells(deltalog.Cell{ID: a, Kind: ak}, deltalog.Cell{ID: b, Kind: bk})})
	}
	cord(vid(0, 1, 1), deltalog.KindRegular, vid(1, 1, 1), deltalog.KindRegular)
	cord(vid(1, 1, 1), deltalog.KindMerge, vid(1, 1, 1), deltalog.KindRegular)
	cord(vid(1, 1, 1), deltalog.KindRegular, vid(1, 1, 1), deltalog.KindMerge)
	cord(vid(1, 1, 0x7f0000000000), deltalog.KindRegular, vid(1, 1, 0x800000000000), deltalog.KindMerge)

	cell := func(c deltalog.Cell) { f.Cells = append(f.Cells, toCellJSON(c, true)) }
	cell(deltalog.Cell{ID: vid(0, 1, 1), Kind: deltalog.KindRegular, Delta: 5})
	cell(deltalog.Cell{ID: vid(0, 1, 2), Kind: deltalog.KindRegular, Delta: -1})
	cell(deltalog.Cell{ID: vid(0, 1, 3), Kind: deltalog.KindRegular, Delta: math.MinInt64})
	cell(deltalog.Cell{ID: vid(0, 1, 4), Kind: deltalog.KindRegular, Delta: math.MaxInt64})
	cell(deltalog.Cell{ID: vid(60, 2, 5), Kind: deltalog.KindMerge, Delta: 4, Written: t0.Add(time.Hour).UnixNano(),
		Stats: deltalog.Stats{Count: 2, Sum: 4, Min: -1, Max: 5, SumSqLo: 26}})
	cell(deltalog.Cell{ID: vid(60, 2, 6), Kind: deltalog.KindMerge, Delta: -1, Written: 0,
		// The deltas -2^63, 2^63-1 and 0: the sum of squares is 2^127 - 2^64 + 1.
		Stats: deltalog.Stats{Count: 3, Sum: -1, Min: math.MinInt64, Max: math.MaxInt64, SumSqHi: 1<<63 - 1, SumSqLo: 1}})

	// Windows, checked by Counters.Add against a fixed clock.
	now := t0.Add(time.Hour)
	win := func(at time.Time, delta int64) {
		id := deltalog.IDFromParts(at, 9, 9)
		c := must(deltalog.New(memory.NewDeltaLogStore(16), deltalog.Options{Clock: func() time.Time { return now }}))
		err := c.Add(context.Background(), "counter", id, delta)
		o := c.Options()
		f.Windows = append(f.Windows, windowVec{Now: now.Format(time.RFC3339Nano), WindowNS: I64(o.Window), FutureNS: I64(o.FutureSkew),
			ID: id.String(), Delta: I64(delta), Error: kindOf(t, err), IDTimeNote: at.Format(time.RFC3339Nano)})
	}
	win(now, 1)
	win(now.Add(-10*time.Minute), 1)
	win(now.Add(-10*time.Minute-100*time.Nanosecond), 1)
	win(now.Add(5*time.Second), 1)
	win(now.Add(5*time.Second+100*time.Nanosecond), 1)
	win(now, 0)

	add := func(r string, id deltalog.ID, d int64) dStep {
		return dStep{Replica: r, Op: "add", ID: id.String(), Delta: ip(d)}
	}
	mb := func(r string, cutoffSec, writtenSec float64) dStep {
		return dStep{Replica: r, Op: "merge_before", Cutoff: t0.Add(time.Duration(cutoffSec * float64(time.Second))).Format(time.RFC3339Nano),
			Written: t0.Add(time.Duration(writtenSec * float64(time.Second))).Format(time.RFC3339Nano)}
	}
	cp := func(r string) dStep { return dStep{Replica: r, Op: "compact"} }
	mg := func(r, from string) dStep { return dStep{Replica: r, Op: "merge", From: from} }
	badID := dStep{Replica: "r", Op: "add", ID: "00000000-0000-4000-8000-000000000000", Delta: ip(1)}
	zeroID := dStep{Replica: "r", Op: "add", ID: "00000000-0000-0000-0000-000000000000", Delta: ip(1)}
	conflictMerge := toCellJSON(deltalog.Cell{ID: vid(20, 1, 1), Kind: deltalog.KindMerge, Delta: 999, Written: 1,
		Stats: deltalog.Stats{Count: 1, Sum: 999, Min: 999, Max: 999, SumSqLo: 998001}}, false)
	scs := []dScenario{
		{Name: "adds, retries and rejections", Replicas: []string{"r"}, Steps: []dStep{
			add("r", vid(0, 1, 1), 5), add("r", vid(1, 1, 1), -3), add("r", vid(0, 1, 1), 5), add("r", vid(0, 1, 1), 6),
			add("r", vid(2, 1, 1), 0), badID, zeroID}},
		{Name: "merge before a cutoff, then compact", Replicas: []string{"r"}, Steps: []dStep{
			add("r", vid(0, 1, 1), 1), add("r", vid(10, 1, 1), 2), add("r", vid(20, 1, 1), 4), add("r", vid(30, 1, 1), 8),
			mb("r", 25, 100), mb("r", 25, 200), mb("r", 0, 100), cp("r"), cp("r")},
			Note: "the merge cell takes the id of the newest cell strictly older than the cutoff; a second merge at the same cutoff finds a merge cell there and does nothing"},
		{Name: "chained merges read down to the first merge cell", Replicas: []string{"r"}, Steps: []dStep{
			add("r", vid(0, 1, 1), 1), add("r", vid(10, 1, 1), -2), mb("r", 15, 100), add("r", vid(20, 1, 1), 30), add("r", vid(30, 1, 1), -40),
			mb("r", 25, 200), add("r", vid(40, 1, 1), 500)}},
		{Name: "merge is cell-set union; racing merges at one cutoff agree", Replicas: []string{"r1", "r2"}, Steps: []dStep{
			add("r1", vid(0, 1, 1), 3), add("r1", vid(10, 1, 1), 4), add("r2", vid(10, 1, 1), 4), add("r2", vid(5, 1, 1), 10),
			mg("r1", "r2"), mg("r2", "r1"), mb("r1", 20, 100), mb("r2", 20, 300), mg("r1", "r2"), cp("r2"), mg("r2", "r1"), mg("r1", "r2")}},
		{Name: "conflicting cells are refused", Replicas: []string{"r1", "r2"}, Steps: []dStep{
			add("r1", vid(20, 1, 1), 5), add("r2", vid(20, 1, 1), 6), mg("r1", "r2"), mb("r1", 30, 100),
			{Replica: "r1", Op: "insert", Cell: &conflictMerge}}},
		{Name: "ids with one timestamp order by signed tail bytes", Replicas: []string{"r"}, Steps: []dStep{
			add("r", vid(0, 1, 0x7f0000000000), 1), add("r", vid(0, 1, 0x800000000000), 2), add("r", vid(0, 0x2000, 0), 4)}},
		{Name: "exact sums: overflow only when the total does not fit", Replicas: []string{"r1", "r2"}, Steps: []dStep{
			add("r1", vid(0, 1, 1), math.MaxInt64), add("r1", vid(1, 1, 1), 1), add("r1", vid(2, 1, 1), -1),
			add("r2", vid(0, 1, 1), math.MaxInt64), add("r2", vid(1, 1, 1), 1), mb("r2", 5, 100)}},
		{Name: "empty log", Replicas: []string{"r"}},
	}
	for i := range scs {
		rs := runD(t, &scs[i], true)
		scs[i].Final = map[string]dState{}
		for name, l := range rs {
			scs[i].Final[name] = dStateOf(t, l)
		}
	}
	f.Scenarios = scs

	d := "deltalog.cell"
	id := vid(0, 1, 1)
	c := func(fields func(e refEnc) refEnc) []byte { return fields(env(d, 1).arr(5)).b }
	reg := func(e refEnc) refEnc { return e.bin(id[:]).uint('r') }
	v4 := id
	v4[6] = v4[6]&0x0f | 0x40
	f.Malformed = []Malformed{
		mal("unknown kind", d, c(func(e refEnc) refEnc { return e.bin(id[:]).uint('x').int(1).int(0).nil() }), t),
		mal("kind above 255", d, c(func(e refEnc) refEnc { return e.bin(id[:]).uint(0x172).int(1).int(0).nil() }), t),
		mal("regular cell with stats", d, c(func(e refEnc) refEnc { return reg(e).int(1).int(0).arr(6).int(1).int(1).int(1).int(1).uint(0).uint(1) }), t),
		mal("regular cell with zero delta", d, c(func(e refEnc) refEnc { return reg(e).int(0).int(0).nil() }), t),
		mal("regular cell with a write time", d, c(func(e refEnc) refEnc { return reg(e).int(1).int(5).nil() }), t),
		mal("merge cell without stats", d, c(func(e refEnc) refEnc { return e.bin(id[:]).uint('m').int(1).int(0).nil() }), t),
		mal("merge cell sum differs from delta", d, c(func(e refEnc) refEnc {
			return e.bin(id[:]).uint('m').int(2).int(0).arr(6).int(1).int(1).int(1).int(1).uint(0).uint(1)
		}), t),
		mal("merge cell count 0", d, c(func(e refEnc) refEnc {
			return e.bin(id[:]).uint('m').int(0).int(0).arr(6).int(0).int(0).int(0).int(0).uint(0).uint(0)
		}), t),
		mal("merge cell sum outside [min·count, max·count]", d, c(func(e refEnc) refEnc {
			return e.bin(id[:]).uint('m').int(100).int(0).arr(6).int(2).int(100).int(1).int(2).uint(0).uint(5)
		}), t),
		mal("merge cell single observation with a wrong sum of squares", d, c(func(e refEnc) refEnc {
			return e.bin(id[:]).uint('m').int(3).int(0).arr(6).int(1).int(3).int(3).int(3).uint(0).uint(10)
		}), t),
		mal("merge cell negative written", d, c(func(e refEnc) refEnc {
			return e.bin(id[:]).uint('m').int(1).int(-1).arr(6).int(1).int(1).int(1).int(1).uint(0).uint(1)
		}), t),
		mal("id of 15 bytes", d, c(func(e refEnc) refEnc { return e.bin(id[:15]).uint('r').int(1).int(0).nil() }), t),
		mal("id of 17 bytes", d, c(func(e refEnc) refEnc { return e.bin(append(id[:], 0)).uint('r').int(1).int(0).nil() }), t),
		mal("id not version 1", d, c(func(e refEnc) refEnc { return e.bin(v4[:]).uint('r').int(1).int(0).nil() }), t),
		mal("id as str", d, c(func(e refEnc) refEnc { return e.str(string(id[:])).uint('r').int(1).int(0).nil() }), t),
		mal("delta not in smallest form", d, c(func(e refEnc) refEnc { return reg(e).raw(0xd0, 5).int(0).nil() }), t),
		mal("cell of four fields", d, env(d, 1).arr(4).bin(id[:]).uint('r').int(1).int(0).b, t),
		mal("trailing bytes", d, append(c(func(e refEnc) refEnc { return reg(e).int(1).int(0).nil() }), 0), t),
		mal("input above 256 bytes", d, append(c(func(e refEnc) refEnc { return reg(e).int(1).int(0).nil() }), make([]byte, 220)...), t),
		mal("balance row envelope", d, env("balance.row", 1).arr(0).b, t),
		mal("id of 17 bytes as bin16", d, c(func(e refEnc) refEnc { return e.raw(0xc5, 0, 17).raw(append(id[:], 0)...).uint('r').int(1).int(0).nil() }), t,
			"a bin header is checked for its smallest form before its cap (SPEC.md 3.2): corrupt, where the bin8 form is too_large"),
		mal("cell body header above 65536 fields", d, append(env(d, 1).b, 0xdd, 0, 1, 0, 1, 0xc4), t,
			"above the nominal cap of fixed-shape arrays: too_large (SPEC.md 3.2, section 12 item 7)"),
	}
	// Non-canonical cells: every field is valid but one header or integer is
	// not in its smallest form, so the input differs from the re-encoding of
	// the cell it holds (SPEC.md 8.2: the decoder rejects any input that is
	// not the canonical re-encoding).
	nonCanon := func(name string, body func(e refEnc) refEnc) {
		f.Malformed = append(f.Malformed, mal(name, d, c(body), t, "non-canonical: differs from the re-encoding of the cell it holds"))
	}
	nonCanon("non-canonical id header (bin16)", func(e refEnc) refEnc { return e.raw(0xc5, 0, 16).raw(id[:]...).uint('r').int(1).int(0).nil() })
	nonCanon("non-canonical kind (uint8 r)", func(e refEnc) refEnc { return e.bin(id[:]).raw(0xcc, 'r').int(1).int(0).nil() })
	nonCanon("non-canonical written (uint64 0)", func(e refEnc) refEnc {
		return e.bin(id[:]).uint('m').int(1).raw(0xcf, 0, 0, 0, 0, 0, 0, 0, 0).arr(6).int(1).int(1).int(1).int(1).uint(0).uint(1)
	})
	nonCanon("non-canonical stats header (array16)", func(e refEnc) refEnc {
		return e.bin(id[:]).uint('m').int(1).int(0).raw(0xdc, 0, 6).int(1).int(1).int(1).int(1).uint(0).uint(1)
	})
	nonCanon("non-canonical sumsq_lo (uint32 1)", func(e refEnc) refEnc {
		return e.bin(id[:]).uint('m').int(1).int(0).arr(6).int(1).int(1).int(1).int(1).uint(0).raw(0xce, 0, 0, 0, 1)
	})
	nonCanon("non-canonical negative delta (int16 -1)", func(e refEnc) refEnc { return e.bin(id[:]).uint('r').raw(0xd1, 0xff, 0xff).int(0).nil() })
	f.Malformed = append(f.Malformed, mal("non-canonical body header (array16)", d, append(env(d, 1).raw(0xdc, 0, 5).bin(id[:]).uint('r').int(1).int(0).nil().b), t,
		"non-canonical: differs from the re-encoding of the cell it holds"))
	return f
}

// dModel is a log's regular cells by id.
type dModel map[string]int64

func checkDeltalog(t *testing.T, raw []byte) {
	var f dFile
	require.NoError(t, json.Unmarshal(raw, &f))
	require.NotEmpty(t, f.IDs)
	for _, v := range f.IDs {
		at := must(time.Parse(time.RFC3339Nano, v.Time))
		node := must(strconv.ParseUint(v.Node, 16, 64))
		require.Equal(t, v.UUID, deltalog.IDFromParts(at, v.ClockSeq, node).String())
		// Independently: 60-bit count of 100 ns ticks since 1582-10-15,
		// version 1, RFC 4122 variant, clock sequence, node.
		ticks := new(big.Int).Sub(big.NewInt(at.Unix()), big.NewInt(time.Date(1582, 10, 15, 0, 0, 0, 0, time.UTC).Unix()))
		ticks.Mul(ticks, big.NewInt(10_000_000)).Add(ticks, big.NewInt(int64(at.Nanosecond()/100)))
		tk := ticks.Uint64()
		var u [16]byte
		binary.BigEndian.PutUint32(u[0:], uint32(tk))
		binary.BigEndian.PutUint16(u[4:], uint16(tk>>32))
		binary.BigEndian.PutUint16(u[6:], uint16(tk>>48)&0x0fff|0x1000)
		binary.BigEndian.PutUint16(u[8:], v.ClockSeq&0x3fff|0x8000)
		copy(u[10:], binary.BigEndian.AppendUint64(nil, node)[2:])
		id := must(deltalog.ParseID(v.UUID))
		require.Equal(t, u[:], id[:], "uuid layout of %s", v.UUID)
		require.True(t, id.Time().Equal(at.Truncate(100*time.Nanosecond)))
	}
	require.NotEmpty(t, f.Order)
	for _, o := range f.Order {
		a, b := must(deltalog.ParseID(o.A)), must(deltalog.ParseID(o.B))
		if o.AKind == "" {
			require.Equal(t, o.Compare, a.Compare(b), "%s vs %s", o.A, o.B)
			require.Equal(t, o.Compare, refCompareID(a, b), "reference order %s vs %s", o.A, o.B)
		} else {
			ca, cb := deltalog.Cell{ID: a, Kind: deltalog.Kind(o.AKind[0])}, deltalog.Cell{ID: b, Kind: deltalog.Kind(o.BKind[0])}
			require.Equal(t, o.Compare, deltalog.CompareCells(ca, cb))
			ref := -refCompareID(a, b)
			if ref == 0 {
				ref = cmpInt(int(o.AKind[0]), int(o.BKind[0]))
			}
			require.Equal(t, o.Compare, ref, "reference cell order")
		}
	}
	require.NotEmpty(t, f.Cells)
	for _, j := range f.Cells {
		c := fromCellJSON(t, j)
		if s := j.Stats; s != nil && s.Count > 0 {
			// Stats some observations have: x² ≡ x (mod 2), so the sum
			// of squares has the sum's parity.
			require.Equal(t, uint64(s.Sum)&1, uint64(s.SumSqLo)&1, "cell %s: sumsq and sum differ in parity", j.ID)
		}
		require.Equal(t, j.Hex, hex.EncodeToString(must(c.MarshalBinary())))
		require.Equal(t, j.Hex, refCell(t, j))
		var dec deltalog.Cell
		require.NoError(t, dec.UnmarshalBinary(unhex(t, j.Hex)))
		require.Equal(t, c, dec)
	}
	require.NotEmpty(t, f.Windows)
	for _, w := range f.Windows {
		now := must(time.Parse(time.RFC3339Nano, w.Now))
		c := must(deltalog.New(memory.NewDeltaLogStore(16), deltalog.Options{Window: time.Duration(w.WindowNS), FutureSkew: time.Duration(w.FutureNS), Clock: func() time.Time { return now }}))
		id := must(deltalog.ParseID(w.ID))
		requireKind(t, w.Error, c.Add(context.Background(), "counter", id, int64(w.Delta)), w.ID)
		// Model: accepted iff now-window <= id time <= now+skew, delta != 0.
		at := id.Time()
		want := ""
		switch {
		case w.Delta == 0:
			want = "invalid_amount"
		case at.Before(now.Add(-time.Duration(w.WindowNS))) || at.After(now.Add(time.Duration(w.FutureNS))):
			want = "outside_window"
		}
		require.Equal(t, want, w.Error, "window model for %s", w.IDTimeNote)
	}
	require.NotEmpty(t, f.Scenarios)
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		t.Run(sc.Name, func(t *testing.T) {
			rs := runD(t, sc, false)
			ms := map[string]dModel{}
			for _, r := range sc.Replicas {
				ms[r] = dModel{}
			}
			for j, st := range sc.Steps {
				m := ms[st.Replica]
				want := ""
				switch st.Op {
				case "add":
					id, err := deltalog.ParseID(st.ID)
					switch {
					case err != nil:
						want = "invalid_txn"
					case *st.Delta == 0:
						want = "invalid_amount"
					default:
						if old, ok := m[id.String()]; ok && old != int64(*st.Delta) {
							want = "conflicting_transaction"
						} else {
							m[id.String()] = int64(*st.Delta)
						}
					}
				case "merge":
					next := dModel{}
					for k, v := range m {
						next[k] = v
					}
					for k, v := range ms[st.From] {
						if old, ok := next[k]; ok && old != v {
							want = "conflicting_transaction"
						}
						next[k] = v
					}
					if want == "" {
						ms[st.Replica] = next
					}
				case "merge_before":
					if st.Merged != nil {
						// The merge cell holds exactly the regular cells at
						// or below its id.
						mid := must(deltalog.ParseID(st.Merged.ID))
						var below []int64
						for k, v := range m {
							if must(deltalog.ParseID(k)).Compare(mid) <= 0 {
								below = append(below, v)
							}
						}
						require.Equal(t, statsModel(below), *st.Merged.Stats, "step %d merge cell vs model", j)
						require.Equal(t, st.Merged.Hex, refCell(t, *st.Merged))
					}
					continue
				default:
					continue
				}
				if st.Error == "conflicting_transaction" && st.Op == "insert" {
					continue
				}
				require.Equal(t, want, st.Error, "model disagrees at step %d", j)
			}
			require.Len(t, sc.Final, len(rs))
			for name, want := range sc.Final {
				got := dStateOf(t, rs[name])
				require.Equal(t, want, got, "%s final state", name)
				for _, cj := range want.Cells {
					require.Equal(t, cj.Hex, refCell(t, cj))
				}
				var vals []int64
				for _, v := range ms[name] {
					vals = append(vals, v)
				}
				sm := statsModel(vals)
				if sm.Count == 0 || fitsInt64(vals) {
					require.NotNil(t, want.Read, "%s read", name)
					require.Equal(t, sm, want.Read.Stats, "%s: read stats vs model (sum of every regular cell ever added)", name)
					require.Equal(t, sm.Sum, want.Read.Value)
				} else {
					require.Equal(t, "overflow", want.ReadError)
				}
				// decode(hex) of every cell rebuilds the log.
				var l deltalog.Log
				for _, cj := range want.Cells {
					var c deltalog.Cell
					require.NoError(t, c.UnmarshalBinary(unhex(t, cj.Hex)))
					require.NoError(t, l.Insert(c))
				}
				require.True(t, l.Equal(rs[name]))
			}
		})
	}
	checkMalformed(t, f.Malformed)
}

func fitsInt64(vs []int64) bool {
	s := new(big.Int)
	for _, v := range vs {
		s.Add(s, big.NewInt(v))
	}
	return s.IsInt64()
}

// statsModel computes SPEC.md's merge statistics of a set of deltas.
func statsModel(vs []int64) statsJSON {
	if len(vs) == 0 {
		return statsJSON{}
	}
	s, sq := new(big.Int), new(big.Int)
	mn, mx := vs[0], vs[0]
	for _, v := range vs {
		b := big.NewInt(v)
		s.Add(s, b)
		sq.Add(sq, new(big.Int).Mul(b, b))
		mn, mx = min(mn, v), max(mx, v)
	}
	lo := new(big.Int).And(sq, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	hi := new(big.Int).Rsh(sq, 64).Uint64()
	return statsJSON{I64(len(vs)), I64(s.Int64()), I64(mn), I64(mx), U64(hi), U64(lo)}
}

// refCompareID is SPEC.md's timeuuid order: the 60-bit timestamp, then
// bytes 0..7 unsigned, then bytes 8..15 as signed bytes.
func refCompareID(a, b deltalog.ID) int {
	ts := func(id deltalog.ID) uint64 {
		return uint64(binary.BigEndian.Uint16(id[6:])&0x0fff)<<48 | uint64(binary.BigEndian.Uint16(id[4:]))<<32 | uint64(binary.BigEndian.Uint32(id[0:]))
	}
	if c := cmpInt64(int64(ts(a)), int64(ts(b))); c != 0 {
		return c
	}
	if c := bytes.Compare(a[:8], b[:8]); c != 0 {
		return c
	}
	for i := 8; i < 16; i++ {
		if c := cmpInt(int(int8(a[i])), int(int8(b[i]))); c != 0 {
			return c
		}
	}
	return 0
}

func cmpInt(a, b int) int { return cmpInt64(int64(a), int64(b)) }
func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ---------------------------------------------------------------------------
// balance.json

type rowJSON struct {
	UpdateID string `json:"update_id"`
	Kind     string `json:"kind"`
	Version  string `json:"version,omitempty"`
	Amount   I64    `json:"amount"`
	Covers   I64    `json:"covers,omitempty"`
	Settled  bool   `json:"settled,omitempty"`
	Target   string `json:"target,omitempty"`
	Hex      string `json:"hex,omitempty"`
}

func toRowJSON(r balance.Row, withHex bool) rowJSON {
	j := rowJSON{UpdateID: r.UpdateID.String(), Kind: r.Kind.String(), Amount: I64(r.Amount), Covers: I64(r.Covers), Settled: r.Settled}
	if r.Kind != balance.KindNormal || !r.Version.IsZero() {
		j.Version = r.Version.String()
	}
	if r.Target != 0 {
		j.Target = r.Target.String()
	}
	if withHex {
		j.Hex = hex.EncodeToString(must(r.MarshalBinary()))
	}
	return j
}

func fromRowJSON(t *testing.T, j rowJSON) balance.Row {
	r := balance.Row{UpdateID: must(deltalog.ParseID(j.UpdateID)), Kind: balance.Kind(j.Kind[0]), Amount: int64(j.Amount), Covers: int64(j.Covers), Settled: j.Settled}
	if j.Version != "" {
		r.Version = rowVersion(t, j)
	}
	if j.Target != "" {
		r.Target = balance.Kind(j.Target[0])
	}
	return r
}

// rowVersion is a row's version column. An S or T row's is a version 1
// UUID; an N row's (format version 2) is its amount's key, 8 zero bytes and
// the amount as a big-endian two's-complement int64, written in UUID form.
func rowVersion(t *testing.T, j rowJSON) deltalog.ID {
	if j.Kind != "N" {
		return must(deltalog.ParseID(j.Version))
	}
	b := unhex(t, strings.ReplaceAll(j.Version, "-", ""))
	require.Len(t, b, 16)
	var k deltalog.ID
	binary.BigEndian.PutUint64(k[8:], uint64(j.Amount))
	require.Equal(t, k[:], b, "an N row's version is its amount's key")
	return deltalog.ID(b)
}

// refRow is j's encoding in row format version v.
func refRow(t *testing.T, j rowJSON) string { return refRowV(t, j, 2) }

func refRowV(t *testing.T, j rowJSON, v uint64) string {
	uid := must(deltalog.ParseID(j.UpdateID))
	e := env("balance.row", v).arr(7).bin(uid[:]).uint(uint64(j.Kind[0]))
	if j.Version == "" {
		e = e.nil()
	} else {
		ver := rowVersion(t, j)
		e = e.bin(ver[:])
	}
	var target uint64
	if j.Target != "" {
		target = uint64(j.Target[0])
	}
	return e.int(int64(j.Amount)).int(int64(j.Covers)).bool(j.Settled).uint(target).hex()
}

type keyJSON struct {
	UpdateID string `json:"update_id"`
	Kind     string `json:"kind"`
	Version  string `json:"version,omitempty"`
}

func keyOf(r balance.Row) keyJSON {
	k := keyJSON{UpdateID: r.UpdateID.String(), Kind: r.Kind.String()}
	if r.Kind != balance.KindNormal || !r.Version.IsZero() {
		k.Version = r.Version.String()
	}
	return k
}

type evalVec struct {
	Name  string    `json:"name"`
	Note  string    `json:"note,omitempty"`
	Rows  []rowJSON `json:"rows"`
	Added []I64     `json:"added"`
	// Outputs.
	Value             *I64            `json:"value,omitempty"`
	Error             string          `json:"error,omitempty"`
	Live              []keyJSON       `json:"live,omitempty"`
	Valid             []string        `json:"valid_sums,omitempty"`
	InvalidSums       []string        `json:"invalid_sums,omitempty"`
	InvalidTombstones []keyJSON       `json:"invalid_tombstones,omitempty"`
	Conflicts         []bConflictJSON `json:"conflicts,omitempty"`
}

// bConflictJSON is an update id whose N rows carry more than one amount, or
// an amount other than the one a merge counted: the amount that counts and
// the others (ascending).
type bConflictJSON struct {
	UpdateID string `json:"update_id"`
	Counted  I64    `json:"counted"`
	Refused  []I64  `json:"refused"`
}

// rowV1 is a row in format version 1 (N rows carry no version), which
// decoders still read, and its version 2 re-encoding.
type rowV1 struct {
	Row       rowJSON `json:"row"`
	Hex       string  `json:"hex"`
	Reencoded string  `json:"reencoded"`
}

type bFile struct {
	Comment     string      `json:"comment"`
	Rows        []rowJSON   `json:"rows"`
	Version1    []rowV1     `json:"version1"`
	Evaluations []evalVec   `json:"evaluations"`
	Windows     []windowVec `json:"windows"`
	Malformed   []Malformed `json:"malformed"`
}

func evaluate(t *testing.T, ev evalVec) evalVec {
	rows := make([]balance.Row, len(ev.Rows))
	for i, j := range ev.Rows {
		rows[i] = fromRowJSON(t, j)
	}
	v, err := balance.Evaluate(rows)
	out := evalVec{Name: ev.Name, Note: ev.Note, Rows: ev.Rows, Added: ev.Added, Error: kindOf(t, err)}
	if err == nil {
		out.Value = ip(v.Value)
		for _, r := range v.Live {
			out.Live = append(out.Live, keyOf(r))
		}
		for _, r := range v.Valid {
			out.Valid = append(out.Valid, r.Version.String())
		}
		for _, r := range v.InvalidSums {
			out.InvalidSums = append(out.InvalidSums, r.Version.String())
		}
		for _, r := range v.InvalidTombstones {
			out.InvalidTombstones = append(out.InvalidTombstones, keyOf(r))
		}
		for _, c := range v.Conflicts {
			j := bConflictJSON{UpdateID: c.UpdateID.String(), Counted: I64(c.Counted), Refused: []I64{}}
			for _, a := range c.Refused {
				j.Refused = append(j.Refused, I64(a))
			}
			out.Conflicts = append(out.Conflicts, j)
		}
	}
	return out
}

func genBalance(t *testing.T) any {
	var f bFile
	f.Comment = "Balance rows (SPEC.md section 9): N/S/T rows (row format version 2: an N row's version is its amount's key; version1 lists version 1 rows decoders still read) and the validity rules of Evaluate, including update ids reused with another amount."
	N := func(sec float64, amt int64) balance.Row {
		return balance.Row{UpdateID: vid(sec, 1, 1), Kind: balance.KindNormal, Amount: amt}
	}
	S := func(ver deltalog.ID, amt, covers int64, settled bool) balance.Row {
		return balance.Row{UpdateID: ver, Kind: balance.KindSum, Version: ver, Amount: amt, Covers: covers, Settled: settled}
	}
	T := func(target balance.Row, ver deltalog.ID) balance.Row {
		return balance.Row{UpdateID: target.UpdateID, Kind: balance.KindTombstone, Version: ver, Amount: target.Amount, Target: target.Kind}
	}
	for _, r := range []balance.Row{balance.NormalRow(vid(0, 1, 1), 100), balance.NormalRow(vid(1, 1, 1), -30), balance.NormalRow(vid(2, 1, 1), math.MinInt64),
		N(0, 100), N(1, -30), N(2, math.MinInt64), S(vid(100, 2, 2), 70, 2, false), S(vid(100, 2, 2), 70, 2, true), T(N(0, 100), vid(100, 2, 2)), T(S(vid(100, 2, 2), 70, 2, false), vid(200, 3, 3))} {
		f.Rows = append(f.Rows, toRowJSON(r, true))
	}
	for _, r := range []balance.Row{N(0, 100), S(vid(100, 2, 2), 70, 2, false), T(N(0, 100), vid(100, 2, 2))} {
		j := toRowJSON(r, false)
		v1 := refRowV(t, j, 1)
		var dec balance.Row
		require.NoError(t, dec.UnmarshalBinary(unhex(t, v1)))
		f.Version1 = append(f.Version1, rowV1{Row: j, Hex: v1, Reencoded: hex.EncodeToString(must(dec.MarshalBinary()))})
	}
	a, b, c, d := N(0, 100), N(1, 50), N(2, -30), N(3, 7)
	v1, v2, v3 := vid(10, 2, 2), vid(20, 3, 3), vid(30, 4, 4)
	s1 := S(v1, 150, 2, false)
	ev := func(name, note string, added []int64, rows ...balance.Row) {
		e := evalVec{Name: name, Note: note, Added: []I64{}}
		for _, x := range added {
			e.Added = append(e.Added, I64(x))
		}
		for _, r := range rows {
			e.Rows = append(e.Rows, toRowJSON(r, false))
		}
		f.Evaluations = append(f.Evaluations, evaluate(t, e))
	}
	ev("normal rows only", "", []int64{100, 50, -30}, a, b, c)
	ev("empty partition", "", nil)
	ev("one valid merge", "tombstones of version v1 name live rows and add up to the S row", []int64{100, 50, -30}, a, b, c, T(a, v1), T(b, v1), s1)
	ev("crash after tombstones", "no S row: the tombstones are invalid and cancel nothing", []int64{100, 50}, a, b, T(a, v1), T(b, v1))
	ev("sum row without all its tombstones", "covers 2 but one tombstone is present: invalid", []int64{100, 50}, a, b, T(a, v1), s1)
	ev("racing merges", "v1 is validated first and takes a and b; v2's tombstones then name rows no longer live, so v2 is invalid", []int64{100, 50, -30},
		a, b, c, T(a, v1), T(b, v1), s1, T(a, v2), T(b, v2), T(c, v2), S(v2, 120, 3, false))
	ev("racing merges, later one only", "the earlier merge crashed before its S row; the later one is valid", []int64{100, 50, -30},
		a, b, c, T(a, v1), T(b, v1), T(a, v2), T(b, v2), T(c, v2), S(v2, 120, 3, false))
	ev("chain of merges", "v2 covers v1's S row and a new row", []int64{100, 50, 7},
		a, b, T(a, v1), T(b, v1), s1, d, T(s1, v2), T(d, v2), S(v2, 157, 2, false))
	ev("settled merge cancels a retried row", "v1 is settled, its covered rows were deleted; a retry of a came back and is cancelled", []int64{100, 50},
		a, T(a, v1), T(b, v1), S(v1, 150, 2, true))
	ev("settled merge alone", "", []int64{100, 50}, S(v1, 150, 2, true))
	ev("settled chain keeps the inner S row", "step 7 keeps a covered S row that still has tombstones", []int64{100, 50, 7},
		T(a, v1), T(b, v1), S(v1, 150, 2, true), T(s1, v2), T(d, v2), S(v2, 157, 2, true))
	ev("tombstone amount differs from the row", "a tombstone only cancels the row it read", []int64{100},
		a, balance.Row{UpdateID: a.UpdateID, Kind: balance.KindTombstone, Version: v1, Amount: 101, Target: balance.KindNormal}, S(v1, 101, 1, false))
	ev("sum amount differs from its tombstones", "", []int64{100, 50}, a, b, T(a, v1), T(b, v1), S(v1, 151, 2, false))
	ev("three-level chain", "", []int64{100, 50, -30, 7},
		a, b, T(a, v1), T(b, v1), s1, c, T(s1, v2), T(c, v2), S(v2, 120, 2, false), d, T(S(v2, 120, 2, false), v3), T(d, v3), S(v3, 127, 2, false))
	ev("partial sums leave int64 but the total fits", "", []int64{math.MaxInt64, 1, -1}, N(0, math.MaxInt64), N(1, 1), N(2, -1))
	ev("balance overflow", "", []int64{math.MaxInt64, 1}, N(0, math.MaxInt64), N(1, 1))
	ev("two rows with one key", "", []int64{100}, a, a)
	ev("invalid row", "", []int64{0}, balance.Row{UpdateID: vid(0, 1, 1), Kind: balance.KindNormal})
	// Format version 2: an N row's version is its amount's key, so an
	// update id reused with another amount is a second row.
	u100, u70 := balance.NormalRow(vid(5, 1, 1), 100), balance.NormalRow(vid(5, 1, 1), 70)
	ev("version 2 rows", "N rows keyed by amount; the balance is unchanged", []int64{100, 50, -30},
		balance.NormalRow(vid(0, 1, 1), 100), balance.NormalRow(vid(1, 1, 1), 50), balance.NormalRow(vid(2, 1, 1), -30))
	ev("a version 1 and a version 2 row of one update", "a retry written by a newer writer: two keys, one amount, counted once", []int64{100}, a, balance.NormalRow(a.UpdateID, 100))
	ev("an update id reused with another amount counts once", "no merge has counted it: the smallest amount counts, the other is a conflict", []int64{70}, u100, u70)
	ev("a reused id's smaller amount voids an unsettled merge", "the merge read 100; 70 arrived after it, counts, and the merge is invalid", []int64{70, 50},
		u100, b, T(u100, v1), T(b, v1), S(v1, 150, 2, false), u70)
	ev("a settled merge fixes a reused id's amount", "the settled merge counted 100 (its rows are deleted); 70 arriving later counts nothing", []int64{100, 50},
		T(u100, v1), T(b, v1), S(v1, 150, 2, true), u70)

	now := t0.Add(time.Hour)
	win := func(at time.Time, amt int64) {
		id := deltalog.IDFromParts(at, 9, 9)
		l := must(balance.New(memory.NewBalanceStore(), balance.Options{Clock: func() time.Time { return now }}))
		err := l.Add(context.Background(), "acct", id, amt)
		o := l.Options()
		f.Windows = append(f.Windows, windowVec{Now: now.Format(time.RFC3339Nano), WindowNS: I64(o.Window), FutureNS: I64(o.FutureSkew),
			ID: id.String(), Delta: I64(amt), Error: kindOf(t, err), IDTimeNote: at.Format(time.RFC3339Nano)})
	}
	win(now, 5)
	win(now.Add(-5*time.Minute), -5)
	win(now.Add(-5*time.Minute-100*time.Nanosecond), 5)
	win(now.Add(5*time.Second), 5)
	win(now.Add(5*time.Second+100*time.Nanosecond), 5)
	win(now, 0)

	r := "balance.row"
	id := vid(0, 1, 1)
	row := func(fn func(e refEnc) refEnc) []byte { return fn(env(r, 1).arr(7)).b }
	nrow := func(e refEnc) refEnc { return e.bin(id[:]).uint('N').nil() }
	f.Malformed = []Malformed{
		mal("N row with a version", r, row(func(e refEnc) refEnc { return e.bin(id[:]).uint('N').bin(id[:]).int(1).int(0).bool(false).uint(0) }), t),
		mal("N row with zero amount", r, row(func(e refEnc) refEnc { return nrow(e).int(0).int(0).bool(false).uint(0) }), t),
		mal("N row with covers", r, row(func(e refEnc) refEnc { return nrow(e).int(1).int(1).bool(false).uint(0) }), t),
		mal("N row settled", r, row(func(e refEnc) refEnc { return nrow(e).int(1).int(0).bool(true).uint(0) }), t),
		mal("S row without a version", r, row(func(e refEnc) refEnc { return e.bin(id[:]).uint('S').nil().int(1).int(1).bool(false).uint(0) }), t),
		mal("S row whose update id differs from its version", r, row(func(e refEnc) refEnc {
			v := vid(5, 1, 1)
			return e.bin(id[:]).uint('S').bin(v[:]).int(1).int(1).bool(false).uint(0)
		}), t),
		mal("S row covering nothing", r, row(func(e refEnc) refEnc { return e.bin(id[:]).uint('S').bin(id[:]).int(1).int(0).bool(false).uint(0) }), t),
		mal("T row without target", r, row(func(e refEnc) refEnc { return e.bin(id[:]).uint('T').bin(id[:]).int(1).int(0).bool(false).uint(0) }), t),
		mal("T row targeting T", r, row(func(e refEnc) refEnc { return e.bin(id[:]).uint('T').bin(id[:]).int(1).int(0).bool(false).uint('T') }), t),
		mal("unknown kind", r, row(func(e refEnc) refEnc { return e.bin(id[:]).uint('X').nil().int(1).int(0).bool(false).uint(0) }), t),
		mal("settled as int", r, row(func(e refEnc) refEnc { return nrow(e).int(1).int(0).int(0).uint(0) }), t),
		mal("target above 255", r, row(func(e refEnc) refEnc { return nrow(e).int(1).int(0).bool(false).uint(256) }), t),
		mal("amount not in smallest form", r, row(func(e refEnc) refEnc { return nrow(e).raw(0xd1, 0, 1).int(0).bool(false).uint(0) }), t),
		mal("row of six fields", r, env(r, 1).arr(6).bin(id[:]).uint('N').nil().int(1).int(0).bool(false).b, t),
		mal("trailing bytes", r, append(row(func(e refEnc) refEnc { return nrow(e).int(1).int(0).bool(false).uint(0) }), 0), t),
		mal("input above 256 bytes", r, append(row(func(e refEnc) refEnc { return nrow(e).int(1).int(0).bool(false).uint(0) }), make([]byte, 220)...), t),
		mal("version 3", r, env(r, 3).arr(0).b, t),
		mal("N row whose version is another amount's key", r, func() []byte {
			k := [16]byte{15: 2}
			return env(r, 2).arr(7).bin(id[:]).uint('N').bin(k[:]).int(1).int(0).bool(false).uint(0).b
		}(), t, "format version 2: amount 1 under the key of amount 2"),
	}
	return f
}

func checkBalance(t *testing.T, raw []byte) {
	var f bFile
	require.NoError(t, json.Unmarshal(raw, &f))
	require.NotEmpty(t, f.Rows)
	for _, j := range f.Rows {
		r := fromRowJSON(t, j)
		require.Equal(t, j.Hex, hex.EncodeToString(must(r.MarshalBinary())))
		require.Equal(t, j.Hex, refRow(t, j))
		var dec balance.Row
		require.NoError(t, dec.UnmarshalBinary(unhex(t, j.Hex)))
		require.Equal(t, r, dec)
	}
	require.NotEmpty(t, f.Version1)
	for _, v := range f.Version1 {
		require.Equal(t, v.Hex, refRowV(t, v.Row, 1), "reference version 1 encoding")
		require.Equal(t, v.Reencoded, refRow(t, v.Row), "reference version 2 encoding")
		var dec balance.Row
		require.NoError(t, dec.UnmarshalBinary(unhex(t, v.Hex)))
		require.Equal(t, fromRowJSON(t, v.Row), dec)
		require.Equal(t, v.Reencoded, hex.EncodeToString(must(dec.MarshalBinary())))
	}
	require.NotEmpty(t, f.Evaluations)
	for _, ev := range f.Evaluations {
		t.Run(ev.Name, func(t *testing.T) {
			require.Equal(t, ev, evaluate(t, ev), "reference implementation vs vector")
			// Order does not matter.
			rev := ev
			rev.Rows = slices.Clone(ev.Rows)
			slices.Reverse(rev.Rows)
			got := evaluate(t, rev)
			got.Rows = ev.Rows
			require.Equal(t, ev, got, "Evaluate depends on row order")
			// Model: the balance is the sum of every N row ever added,
			// whatever merges ran, crashed, raced or settled.
			if ev.Error != "" {
				if ev.Error == "overflow" {
					require.False(t, fitsInt64(i64s(ev.Added)))
				}
				return
			}
			s := new(big.Int)
			for _, x := range ev.Added {
				s.Add(s, big.NewInt(int64(x)))
			}
			require.True(t, s.IsInt64())
			require.EqualValues(t, s.Int64(), *ev.Value, "balance vs the sum of the added rows")
			// Conflicts: every update id whose N rows carry two amounts
			// is listed, and what it lists are those amounts.
			amounts := map[string]map[int64]bool{}
			for _, r := range ev.Rows {
				if r.Kind == "N" {
					if amounts[r.UpdateID] == nil {
						amounts[r.UpdateID] = map[int64]bool{}
					}
					amounts[r.UpdateID][int64(r.Amount)] = true
				}
			}
			listed := map[string]bool{}
			for _, c := range ev.Conflicts {
				listed[c.UpdateID] = true
				require.NotEmpty(t, c.Refused)
				for _, a := range c.Refused {
					require.True(t, amounts[c.UpdateID][int64(a)], "refused amount %d of %s is no N row's", a, c.UpdateID)
					require.NotEqual(t, c.Counted, a)
				}
				require.Len(t, c.Refused, len(amounts[c.UpdateID])-map[bool]int{true: 1}[amounts[c.UpdateID][int64(c.Counted)]])
			}
			for u, as := range amounts {
				if len(as) > 1 {
					require.True(t, listed[u], "update id %s has %d amounts but is not a conflict", u, len(as))
				}
			}
		})
	}
	require.NotEmpty(t, f.Windows)
	for _, w := range f.Windows {
		now := must(time.Parse(time.RFC3339Nano, w.Now))
		l := must(balance.New(memory.NewBalanceStore(), balance.Options{Window: time.Duration(w.WindowNS), FutureSkew: time.Duration(w.FutureNS), Clock: func() time.Time { return now }}))
		id := must(deltalog.ParseID(w.ID))
		requireKind(t, w.Error, l.Add(context.Background(), "acct", id, int64(w.Delta)), w.ID)
		at := id.Time()
		want := ""
		switch {
		case w.Delta == 0:
			want = "invalid_amount"
		case at.Before(now.Add(-time.Duration(w.WindowNS))) || at.After(now.Add(time.Duration(w.FutureNS))):
			want = "outside_window"
		}
		require.Equal(t, want, w.Error, "window model for %s", w.IDTimeNote)
	}
	checkMalformed(t, f.Malformed)
}

func i64s(vs []I64) []int64 {
	out := make([]int64, len(vs))
	for i, v := range vs {
		out[i] = int64(v)
	}
	return out
}

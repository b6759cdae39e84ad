package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/rand"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
)

func TestUUIDText(t *testing.T) {
	const id = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
	u, ok := ParseUUIDText(id)
	if !ok {
		t.Fatal("canonical UUID not recognised")
	}
	if got := string(AppendUUIDText(nil, u[:])); got != id {
		t.Fatalf("round trip %q, want %q", got, id)
	}
	for _, s := range []string{
		"6BA7B810-9DAD-11D1-80B4-00C04FD430C8", // uppercase: kept as text
		"6ba7b8109dad11d180b400c04fd430c8",     // no dashes
		"6ba7b810-9dad-11d1-80b4-00c04fd430c",  // short
		"6ba7b810-9dad-11d1-80b4-00c04fd430cg", // not hex
		"6ba7b810_9dad-11d1-80b4-00c04fd430c8", // wrong separator
	} {
		if _, ok := ParseUUIDText(s); ok {
			t.Errorf("%q taken for a canonical UUID", s)
		}
	}
}

func TestTxnIDEncoding(t *testing.T) {
	for _, tc := range []struct {
		id      string
		uuidBin bool
		size    int
	}{
		{"6ba7b810-9dad-11d1-80b4-00c04fd430c8", true, 18},
		{"6ba7b810-9dad-11d1-80b4-00c04fd430c8", false, 38},
		{"txn-1", true, 6},
	} {
		e := NewValueEncoder()
		e.TxnID(tc.id, tc.uuidBin)
		b, err := e.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != tc.size {
			t.Errorf("%q (bin %v): %d bytes, want %d", tc.id, tc.uuidBin, len(b), tc.size)
		}
		d := valueDecoder(b)
		got, isUUID, err := d.TxnIDBytes(nil, tc.uuidBin)
		if err != nil || string(got) != tc.id {
			t.Errorf("%q (bin %v): decoded %q, %v", tc.id, tc.uuidBin, got, err)
		}
		if wantUUID := b[0] == 0xc4; isUUID != wantUUID { // bin 8
			t.Errorf("%q (bin %v): isUUID %v, want %v", tc.id, tc.uuidBin, isUUID, wantUUID)
		}
	}
	// With bins, a UUID written as text is not canonical; a bin of another
	// length is not an id.
	for name, build := range map[string]func(e *Encoder){
		"uuid as text": func(e *Encoder) { e.String("6ba7b810-9dad-11d1-80b4-00c04fd430c8") },
		"bin of 15":    func(e *Encoder) { e.Bin(make([]byte, 15)) },
	} {
		e := NewValueEncoder()
		build(e)
		b, _ := e.Bytes()
		d := valueDecoder(b)
		if _, _, err := d.TxnIDBytes(nil, true); !errors.Is(err, crdt.ErrCorruptEncoding) {
			t.Errorf("%s: %v, want ErrCorruptEncoding", name, err)
		}
	}
}

func valueDecoder(b []byte) *Decoder {
	d := &Decoder{data: b, r: bytes.NewReader(b)}
	d.dec = msgpack.NewDecoder(d.r)
	return d
}

// refParseUUIDText and refAppendUUIDText are the byte-by-byte parser and
// formatter that ParseUUIDText and AppendUUIDText are compared against:
// SPEC.md 6.7's rule written out, one character at a time.
func refParseUUIDText(s string) (u [16]byte, ok bool) {
	if len(s) != UUIDTextLen {
		return u, false
	}
	j := 0
	for i := 0; i < UUIDTextLen; i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return u, false
			}
			continue
		}
		var v byte
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		default:
			return u, false
		}
		if j%2 == 0 {
			u[j/2] = v << 4
		} else {
			u[j/2] |= v
		}
		j++
	}
	return u, true
}

func refAppendUUIDText(dst []byte, u []byte) []byte {
	var t [UUIDTextLen]byte
	hex.Encode(t[0:8], u[0:4])
	hex.Encode(t[9:13], u[4:6])
	hex.Encode(t[14:18], u[6:8])
	hex.Encode(t[19:23], u[8:10])
	hex.Encode(t[24:36], u[10:16])
	t[8], t[13], t[18], t[23] = '-', '-', '-', '-'
	return append(dst, t[:]...)
}

type uuidParser func(string) ([16]byte, bool)

// uuidTextInputs returns the inputs the parsers are compared on: every
// single-byte change of a canonical UUID (all 256 values at each of the 36
// positions), its other spellings (uppercase, mixed case, braced,
// "urn:uuid:", undashed, moved dashes), every prefix and one-byte
// extension, and n random strings over an alphabet of hex digits of both
// cases, separators and brace, urn and letter characters, of lengths
// around 32, 36, 38 and 45.
func uuidTextInputs(rng *rand.Rand, n int) []string {
	const canon = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
	in := []string{canon, strings.ToUpper(canon), "6ba7B810-9dad-11d1-80b4-00c04fd430c8",
		"{" + canon + "}", "urn:uuid:" + canon, "URN:UUID:" + canon, strings.ReplaceAll(canon, "-", ""),
		"6ba7b8109-dad-11d1-80b4-00c04fd430c8", "00000000-0000-0000-0000-000000000000",
		"ffffffff-ffff-ffff-ffff-ffffffffffff", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", ""}
	for i := 0; i < len(canon); i++ {
		for c := 0; c < 256; c++ {
			b := []byte(canon)
			b[i] = byte(c)
			in = append(in, string(b))
		}
	}
	for i := 0; i <= len(canon); i++ {
		in = append(in, canon[:i], canon+canon[:1], canon[:i]+"0"+canon[i:])
	}
	const alphabet = "0123456789abcdefABCDEF-{}:urnidURNID gxGX\x00\xff"
	lengths := []int{32, 35, 36, 36, 36, 37, 38, 45}
	for i := 0; i < n; i++ {
		b := make([]byte, lengths[rng.Intn(len(lengths))])
		for j := range b {
			b[j] = alphabet[rng.Intn(len(alphabet))]
		}
		if len(b) >= 36 && rng.Intn(2) == 0 { // mostly well placed dashes
			for _, j := range []int{8, 13, 18, 23} {
				b[len(b)-36+j] = '-'
			}
		}
		in = append(in, string(b))
	}
	return in
}

// uuidParsersDiffer returns the first input on which p and q disagree: one
// takes it and the other does not, or both take it and read different
// bytes (the bytes of a refused input mean nothing).
func uuidParsersDiffer(p, q uuidParser, inputs []string) (string, bool) {
	for _, s := range inputs {
		pu, pok := p(s)
		qu, qok := q(s)
		if pok != qok || pok && pu != qu {
			return s, true
		}
	}
	return "", false
}

// TestUUIDTextMatchesReference: ParseUUIDText takes exactly the inputs the
// byte-by-byte reference takes, with the same bytes, and each one it takes
// is given back unchanged by AppendUUIDText; AppendUUIDText matches the
// reference on every 16-byte value tried. Broken parsers (uuid.Parse alone,
// and without the uppercase guard) are caught by the same comparison.
func TestUUIDTextMatchesReference(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewSource(seed))
	inputs := uuidTextInputs(rng, proptest.Scale(20000))
	if s, differ := uuidParsersDiffer(ParseUUIDText, refParseUUIDText, inputs); differ {
		pu, pok := ParseUUIDText(s)
		ru, rok := refParseUUIDText(s)
		t.Fatalf("%q: ParseUUIDText %x %v, reference %x %v", s, pu, pok, ru, rok)
	}
	taken := 0
	for _, s := range inputs {
		if u, ok := ParseUUIDText(s); ok {
			taken++
			if got := string(AppendUUIDText(nil, u[:])); got != s {
				t.Fatalf("%q read as %x, written back as %q", s, u, got)
			}
		}
	}
	var u [16]byte
	for i := 0; i < proptest.Scale(20000); i++ {
		rng.Read(u[:])
		got, want := AppendUUIDText([]byte("x"), u[:]), refAppendUUIDText([]byte("x"), u[:])
		if !bytes.Equal(got, want) {
			t.Fatalf("%x: AppendUUIDText %q, reference %q", u, got, want)
		}
	}
	t.Logf("%d inputs, %d taken as canonical UUID text", len(inputs), taken)
	if taken < 100 || taken == len(inputs) {
		t.Fatalf("%d of %d inputs taken: the inputs do not exercise both answers", taken, len(inputs))
	}

	broken := map[string]uuidParser{
		"uuid.Parse alone": func(s string) ([16]byte, bool) {
			u, err := uuid.Parse(s)
			return u, err == nil
		},
		"no uppercase guard": func(s string) ([16]byte, bool) {
			if len(s) != UUIDTextLen {
				return [16]byte{}, false
			}
			u, err := uuid.Parse(s)
			return u, err == nil
		},
		"no length guard": func(s string) ([16]byte, bool) {
			if strings.ContainsAny(s, "ABCDEF") {
				return [16]byte{}, false
			}
			u, err := uuid.Parse(s)
			return u, err == nil
		},
	}
	for name, p := range broken {
		s, differ := uuidParsersDiffer(p, refParseUUIDText, inputs)
		if !differ {
			t.Errorf("%s: not told apart from the reference", name)
			continue
		}
		t.Logf("%s: caught on %q", name, s)
	}
}

// TestUUIDTextAllocs: reading a canonical UUID, refusing an id of another
// length, an uppercase UUID or 36 characters without the UUID's dashes, and
// writing the text, allocate nothing (a state's encoding checks every id).
func TestUUIDTextAllocs(t *testing.T) {
	buf := make([]byte, 0, UUIDTextLen)
	for _, s := range []string{"6ba7b810-9dad-11d1-80b4-00c04fd430c8", "txn-1",
		"6BA7B810-9DAD-11D1-80B4-00C04FD430C8", "order-2026-11-28-0000000000000000001"} {
		if n := testing.AllocsPerRun(100, func() {
			u, _ := ParseUUIDText(s)
			buf = AppendUUIDText(buf[:0], u[:])
		}); n != 0 {
			t.Errorf("%q: %v allocations", s, n)
		}
	}
}

// FuzzUUIDText: on any string ParseUUIDText agrees with the reference, a
// taken string is written back unchanged, and a transaction id written
// with uuidBin is a 16-byte bin exactly when it is taken and decodes to
// itself. Run it with
//
//	go test ./internal/wire -run '^$' -fuzz FuzzUUIDText -fuzztime 60s
func FuzzUUIDText(f *testing.F) {
	for _, s := range uuidTextInputs(rand.New(rand.NewSource(1)), 0)[:12] {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, ok := ParseUUIDText(s)
		ru, rok := refParseUUIDText(s)
		if ok != rok || ok && u != ru {
			t.Fatalf("%q: ParseUUIDText %x %v, reference %x %v", s, u, ok, ru, rok)
		}
		if ok {
			if got := string(AppendUUIDText(nil, u[:])); got != s {
				t.Fatalf("%q written back as %q", s, got)
			}
		}
		if len(s) > crdt.MaxIDLen {
			return
		}
		e := NewValueEncoder()
		wroteBin := e.TxnID(s, true)
		b, err := e.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if wroteBin != ok {
			t.Fatalf("%q: wrote a bin %v, canonical UUID text %v", s, wroteBin, ok)
		}
		got, isUUID, err := valueDecoder(b).TxnIDBytes(nil, true)
		if err != nil || string(got) != s || isUUID != ok {
			t.Fatalf("%q: decoded %q, UUID %v, %v", s, got, isUUID, err)
		}
	})
}

// BenchmarkUUIDText compares, in one run, ParseUUIDText and AppendUUIDText
// ("lib": uuid.Parse behind the guards; uuid.UUID.String for the text)
// with the byte-by-byte reference ("hand"), alone and inside a transaction
// id's encoding (Encoder.TxnID's steps) and decoding (Decoder.txnID, then
// the text). Compare each lib row with its hand row:
//
//	taskset -c 1 go test ./internal/wire -run '^$' -bench BenchmarkUUIDText -count 5
func BenchmarkUUIDText(b *testing.B) {
	const canon = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
	var sink [16]byte
	var ok bool
	for _, in := range []struct{ name, s string }{
		{"canonical", canon},
		{"uppercase", strings.ToUpper(canon)},
		{"text36", "order-2026-11-28-0000000000000000001"},
		{"text36-dashed", "6ba7b810-9dad-11d1-80b4-00c04fd430cg"},
		{"short", "txn-1"},
	} {
		b.Run("parse="+in.name+"/hand", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				sink, ok = refParseUUIDText(in.s)
			}
		})
		b.Run("parse="+in.name+"/lib", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				sink, ok = ParseUUIDText(in.s)
			}
		})
	}
	u, _ := refParseUUIDText(canon)
	buf := make([]byte, 0, 64)
	b.Run("format/hand", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			buf = refAppendUUIDText(buf[:0], u[:])
		}
	})
	b.Run("format/lib", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			buf = append(buf[:0], uuid.UUID(u).String()...)
		}
	})

	// encodeTxnID is Encoder.TxnID with the parser as a parameter.
	encodeTxnID := func(e *Encoder, id string, parse uuidParser) {
		if u, ok := parse(id); ok {
			e.buf.WriteByte(msgpcode.Bin8)
			e.buf.WriteByte(16)
			e.buf.Write(u[:])
			return
		}
		e.String(id)
	}
	for _, p := range []struct {
		name  string
		parse uuidParser
	}{{"hand", refParseUUIDText}, {"lib", ParseUUIDText}} {
		b.Run("encode/"+p.name, func(b *testing.B) {
			e := NewValueEncoder()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				e.buf.Reset()
				encodeTxnID(e, canon, p.parse)
			}
		})
	}
	e := NewValueEncoder()
	e.TxnID(canon, true)
	enc, err := e.Bytes()
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []struct {
		name   string
		format func(dst, u []byte) []byte
	}{{"hand", refAppendUUIDText}, {"lib", func(dst, u []byte) []byte { return append(dst, uuid.UUID(u).String()...) }}} {
		b.Run("decode/"+f.name, func(b *testing.B) {
			d := valueDecoder(enc)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				d.SkipTo(0)
				raw, _, err := d.txnID(true)
				if err != nil {
					b.Fatal(err)
				}
				buf = f.format(buf[:0], raw)
			}
		})
	}
	_, _ = sink, ok
}

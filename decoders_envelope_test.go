package counterkit_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/tally"
	"github.com/counterkit/counterkit/tpncounter"
)

// wireDecoder is one decoder of the wire format (SPEC.md 3).
type wireDecoder struct {
	name    string
	tag     string
	newest  uint64
	maxSize int
	valid   string // hex of a valid encoding
	decode  func([]byte) error
	encode  func([]byte) ([]byte, error) // decode then re-encode
}

func wireDecoders(t *testing.T) []wireDecoder {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	rec, err := ledger.Record{Txn: "t1", Amount: -5, Writer: "w", At: at, Version: 3, Key: "k/1"}.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	type codec interface {
		UnmarshalBinary([]byte) error
		MarshalBinary() ([]byte, error)
	}
	rt := func(mk func() codec) (func([]byte) error, func([]byte) ([]byte, error)) {
		return func(b []byte) error { return mk().UnmarshalBinary(b) },
			func(b []byte) ([]byte, error) {
				c := mk()
				if err := c.UnmarshalBinary(b); err != nil {
					return nil, err
				}
				return c.MarshalBinary()
			}
	}
	var ds []wireDecoder
	add := func(name, tag string, newest uint64, max int, valid string, mk func() codec) {
		d, e := rt(mk)
		ds = append(ds, wireDecoder{name, tag, newest, max, valid, d, e})
	}
	const mib16 = 16 << 20
	add("gcounter", "gcounter", 2, mib16, "93a867636f756e7465720292"+"9300a16105"+"9300a16201", func() codec { return new(gcounter.Counter) })
	add("pncounter", "pncounter", 2, mib16, "93a9706e636f756e7465720293"+"9400a66e6f64652d310101"+"9406a1300004"+"9405a1320300", func() codec { return new(pncounter.Counter) })
	add("tgcounter", "tgcounter", 4, mib16, "93a97467636f756e74657202"+"9196a161020000"+"9292a1780292a17901"+"90", func() codec { return new(tpncounter.GCounter) })
	add("tpncounter", "tpncounter", 4, mib16, "93aa74706e636f756e7465720292"+"9196a161020000"+"9292a17802"+"92a17901"+"90"+"9196a162010000"+"9192a17a03"+"90", func() codec { return new(tpncounter.Counter) })
	add("bounded", "bounded", 1, mib16, "93a7626f756e646564019300a09197a161020a0a00909292a263310a92a26431f6", func() codec { return new(bounded.Counter) })
	add("deltalog.cell", "deltalog.cell", 1, 256, "93ad64656c74616c6f672e63656c6c0195c410b4cc8000a83811ee8001000000000001720500c0", func() codec { return new(deltalog.Cell) })
	add("balance.row", "balance.row", 2, 256, "93ab62616c616e63652e726f770297c410b4cc8000a83811ee80010000000000014ec06400c200", func() codec { return new(balance.Row) })
	add("ledger.txn", "ledger.txn", 2, 829, hex.EncodeToString(rec), func() codec { return new(ledger.Record) })
	shardDec := func(b []byte) error { _, err := tally.DecodeShard[*tally.Sum](b); return err }
	shardEnc := func(b []byte) ([]byte, error) {
		s, err := tally.DecodeShard[*tally.Sum](b)
		if err != nil {
			return nil, err
		}
		return s.MarshalBinary()
	}
	ds = append(ds, wireDecoder{"tally.shard", "tally.shard", 1, mib16, "93ab74616c6c792e73686172640194a373756da26d31cf00060a24181e40000a", shardDec, shardEnc})
	return ds
}

func isSentinel(err error) bool {
	for _, s := range []error{crdt.ErrCorruptEncoding, crdt.ErrTooLarge, crdt.ErrTypeMismatch, crdt.ErrUnsupportedVersion} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

func strHeader(s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		return append([]byte{0xa0 | byte(n)}, s...)
	case n < 256:
		return append([]byte{0xd9, byte(n)}, s...)
	}
	return append([]byte{0xda, byte(n >> 8), byte(n)}, s...)
}

// TestEnvelopeAcrossDecoders checks SPEC.md 3.3's envelope steps,
// the size caps at and one past the limit, trailing bytes, every
// truncation and every one-byte change of a valid encoding, for every
// decoder: each refusal wraps the kind SPEC.md names (a decoder's
// sentinel at least), and what decodes re-encodes to its input. It runs
// on one goroutine: the race pass (-short) leaves it to the full pass.
func TestEnvelopeAcrossDecoders(t *testing.T) {
	testsize.SkipSequential(t)
	for _, d := range wireDecoders(t) {
		t.Run(d.name, func(t *testing.T) {
			valid, _ := hex.DecodeString(d.valid)
			if got, err := d.encode(valid); err != nil || !bytes.Equal(got, valid) {
				t.Fatalf("valid %x: %v, re-encodes %x", valid, err, got)
			}
			env := func(tag string, version []byte, body ...byte) []byte {
				b := append([]byte{0x93}, strHeader(tag)...)
				b = append(b, version...)
				return append(b, body...)
			}
			body := valid[len(env(d.tag, []byte{byte(d.newest)})):]
			vpos := len(env(d.tag, nil))
			for _, c := range []struct {
				name string
				in   []byte
				want error
			}{
				{"one byte past the cap", bytes.Repeat([]byte{0xc0}, d.maxSize+1), crdt.ErrTooLarge},
				{"at the cap", append(bytes.Clone(valid), make([]byte, d.maxSize-len(valid))...), crdt.ErrCorruptEncoding},
				{"trailing byte", append(bytes.Clone(valid), 0xc0), crdt.ErrCorruptEncoding},
				{"trailing zero", append(bytes.Clone(valid), 0x00), crdt.ErrCorruptEncoding},
				{"empty", nil, crdt.ErrCorruptEncoding},
				{"a map", []byte{0x83, 0xa1, 'a', 0x01}, crdt.ErrCorruptEncoding},
				{"nil", []byte{0xc0}, crdt.ErrCorruptEncoding},
				{"envelope of 4", append([]byte{0x94}, valid[1:]...), crdt.ErrCorruptEncoding},
				{"envelope as array16", append([]byte{0xdc, 0, 3}, valid[1:]...), crdt.ErrCorruptEncoding},
				{"envelope claims 2^31", append([]byte{0xdd, 0x80, 0, 0, 0}, valid[1:]...), crdt.ErrTooLarge},
				{"envelope claims 2^31-1", append([]byte{0xdd, 0x7f, 0xff, 0xff, 0xff}, valid[1:]...), crdt.ErrCorruptEncoding},
				{"tag as str8", append(append([]byte{0x93, 0xd9, byte(len(d.tag))}, d.tag...), valid[1+1+len(d.tag):]...), crdt.ErrCorruptEncoding},
				{"tag as bin", append(append([]byte{0x93, 0xc4, byte(len(d.tag))}, d.tag...), valid[1+1+len(d.tag):]...), crdt.ErrCorruptEncoding},
				{"tag of 65 bytes", env(strings.Repeat("x", 65), []byte{1}, body...), crdt.ErrCorruptEncoding},
				{"tag of 64 bytes", env(strings.Repeat("x", 64), []byte{1}, body...), crdt.ErrTypeMismatch},
				{"tag upper case, version 0", env(strings.ToUpper(d.tag), []byte{0}, body...), crdt.ErrTypeMismatch},
				{"version 0", env(d.tag, []byte{0}, body...), crdt.ErrUnsupportedVersion},
				{"version newest+1", env(d.tag, []byte{byte(d.newest + 1)}, body...), crdt.ErrUnsupportedVersion},
				{"version 2^32", env(d.tag, []byte{0xcf, 0, 0, 0, 1, 0, 0, 0, 0}, body...), crdt.ErrUnsupportedVersion},
				{"version as uint8", env(d.tag, []byte{0xcc, byte(d.newest)}, body...), crdt.ErrCorruptEncoding},
				{"version as uint64", env(d.tag, []byte{0xcf, 0, 0, 0, 0, 0, 0, 0, byte(d.newest)}, body...), crdt.ErrCorruptEncoding},
				{"version as int8", env(d.tag, []byte{0xd0, byte(d.newest)}, body...), crdt.ErrCorruptEncoding},
				{"version -1", env(d.tag, []byte{0xff}, body...), crdt.ErrCorruptEncoding},
				{"version nil", env(d.tag, []byte{0xc0}, body...), crdt.ErrCorruptEncoding},
			} {
				if err := d.decode(c.in); !errors.Is(err, c.want) {
					t.Errorf("%s: %v, want %v", c.name, err, c.want)
				}
			}
			for n := range len(valid) {
				if err := d.decode(valid[:n]); !errors.Is(err, crdt.ErrCorruptEncoding) && !errors.Is(err, crdt.ErrTypeMismatch) && !errors.Is(err, crdt.ErrUnsupportedVersion) {
					t.Errorf("truncated to %d bytes: %v", n, err)
				}
			}
			for i := range valid {
				for v := range 256 {
					in := bytes.Clone(valid)
					in[i] = byte(v)
					got, err := d.encode(in)
					switch {
					case err == nil && !bytes.Equal(got, in) && i != vpos: // an older version re-encodes as the newest
						t.Errorf("%x decodes and re-encodes as %x", in, got)
					case err != nil && !isSentinel(err):
						if d.decode(in) != nil && !isSentinel(d.decode(in)) {
							t.Errorf("%x: %v wraps no decoder sentinel", in, err)
						}
					}
				}
			}
		})
	}
}

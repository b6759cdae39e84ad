package wire_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
	"github.com/counterkit/counterkit/internal/wire"
)

func isDecodeSentinel(err error) bool {
	return errors.Is(err, crdt.ErrCorruptEncoding) || errors.Is(err, crdt.ErrTooLarge) ||
		errors.Is(err, crdt.ErrTypeMismatch) || errors.Is(err, crdt.ErrUnsupportedVersion)
}

// FuzzDecoder drives the decoder over arbitrary bytes with an arbitrary
// sequence of reads (one per byte of ops). It must never panic, every error
// must wrap a decoder sentinel, the unread count must never grow, and
// values must respect the caps they were read with. Run it with
//
//	go test ./internal/wire -run '^$' -fuzz FuzzDecoder -fuzztime 60s
func FuzzDecoder(f *testing.F) {
	f.Add(body(f, func(e *wire.Encoder) {
		e.ArrayLen(6)
		e.String("actor")
		e.Int(-5)
		e.Uint(1 << 40)
		e.Bool(true)
		e.Bin([]byte("payload"))
		e.Nil()
	}), []byte{0, 1, 3, 4, 5, 6, 7, 8})
	f.Add(raw(f, string(tag), 1, []any{"a", 1}), []byte{0, 0, 2, 3})
	f.Add([]byte{0x93, 0xa9, 't', 'e', 's', 't', '.', 't', 'y', 'p', 'e', 0x01, 0xdb, 0xff, 0xff, 0xff, 0xff}, []byte{1})
	f.Fuzz(func(t *testing.T, data, ops []byte) {
		d, v, err := wire.NewDecoder(data, tag, 3, 1<<16)
		if err != nil {
			if !isDecodeSentinel(err) {
				t.Fatalf("NewDecoder: error wraps no sentinel: %v", err)
			}
			return
		}
		if v < 1 || v > 3 {
			t.Fatalf("version %d outside 1..3", v)
		}
		rem := d.Remaining()
		for _, op := range ops {
			var err error
			switch op % 12 {
			case 0:
				var n int
				n, err = d.ArrayLen(int(op / 12))
				if err == nil && (n < 0 || n > int(op/12) || n > rem) {
					t.Fatalf("ArrayLen(%d) = %d with %d bytes left", op/12, n, rem)
				}
			case 1:
				var s string
				s, err = d.String(int(op / 12))
				if err == nil && len(s) > int(op/12) {
					t.Fatalf("String(%d) returned %d bytes", op/12, len(s))
				}
			case 2:
				var a crdt.ActorID
				a, err = d.Actor()
				if err == nil && a.Validate() != nil {
					t.Fatalf("Actor returned invalid %q", a)
				}
			case 3:
				var x crdt.TxnID
				x, err = d.Txn()
				if err == nil && x.Validate() != nil {
					t.Fatalf("Txn returned invalid %q", x)
				}
			case 4:
				_, err = d.Int()
			case 5:
				var n int64
				n, err = d.NonNegInt()
				if err == nil && n < 0 {
					t.Fatalf("NonNegInt returned %d", n)
				}
			case 6:
				_, err = d.Uint()
			case 7:
				_, err = d.Bool()
			case 8:
				var b []byte
				b, err = d.Bin(int(op / 12))
				if err == nil && len(b) > int(op/12) {
					t.Fatalf("Bin(%d) returned %d bytes", op/12, len(b))
				}
			case 9:
				_, err = d.IsNil()
			case 10:
				err = d.Finish()
				if err == nil && d.Remaining() != 0 {
					t.Fatal("Finish passed with bytes left")
				}
			case 11:
				continue
			}
			if now := d.Remaining(); now > rem {
				t.Fatalf("Remaining grew from %d to %d", rem, now)
			} else {
				rem = now
			}
			if err != nil {
				if !isDecodeSentinel(err) {
					t.Fatalf("op %d: error wraps no sentinel: %v", op%12, err)
				}
				return // the decoder's position after an error is unspecified
			}
		}
	})
}

// FuzzRoundTrip checks that every primitive decodes to what was encoded and
// that encoding is deterministic. Run it with
//
//	go test ./internal/wire -run '^$' -fuzz FuzzRoundTrip -fuzztime 60s
func FuzzRoundTrip(f *testing.F) {
	f.Add("actor", int64(-1), uint64(1<<63), true, []byte{1, 2})
	f.Add("", int64(1<<62), uint64(0), false, []byte{})
	f.Add("Zoë 🦀", int64(-1<<63), uint64(1<<64-1), true, []byte("x"))
	f.Fuzz(func(t *testing.T, s string, i int64, u uint64, b bool, bin []byte) {
		if bin == nil {
			bin = []byte{} // Bin(nil) is a known issue, tested separately
		}
		enc := func() []byte {
			e := wire.NewEncoder(tag, 2)
			e.ArrayLen(5)
			e.String(s)
			e.Int(i)
			e.Uint(u)
			e.Bool(b)
			e.Bin(bin)
			out, err := e.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			return bytes.Clone(out)
		}
		b1, b2 := enc(), enc()
		if !bytes.Equal(b1, b2) {
			t.Fatalf("encoding not deterministic: %x vs %x", b1, b2)
		}
		d, v, err := wire.NewDecoder(b1, tag, 2, len(b1))
		if err != nil || v != 2 {
			t.Fatalf("NewDecoder: %v (version %d)", err, v)
		}
		if n, err := d.ArrayLen(5); err != nil || n != 5 {
			t.Fatalf("ArrayLen: %d, %v", n, err)
		}
		gs, err := d.String(len(s))
		if err != nil || gs != s {
			t.Fatalf("String: %q, %v; want %q", gs, err, s)
		}
		gi, err := d.Int()
		if err != nil || gi != i {
			t.Fatalf("Int: %d, %v; want %d", gi, err, i)
		}
		gu, err := d.Uint()
		if err != nil || gu != u {
			t.Fatalf("Uint: %d, %v; want %d", gu, err, u)
		}
		gb, err := d.Bool()
		if err != nil || gb != b {
			t.Fatalf("Bool: %v, %v; want %v", gb, err, b)
		}
		gbin, err := d.Bin(len(bin))
		if err != nil || !bytes.Equal(gbin, bin) {
			t.Fatalf("Bin: %x, %v; want %x", gbin, err, bin)
		}
		if err := d.Finish(); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzInt128 checks that any 16 bytes, as a value, round-trip through
// Encoder.Int128 and Decoder.Int128, and that any input Decoder.Int128
// accepts is the one encoding of what it read. Run it with
//
//	go test ./internal/wire -run '^$' -fuzz FuzzInt128 -fuzztime 60s
func FuzzInt128(f *testing.F) {
	f.Add(make([]byte, 16))
	f.Add(append([]byte{0xc4, 0x10}, make([]byte, 16)...))
	f.Add(append([]byte{0xc4, 0x10, 0x40}, make([]byte, 15)...))
	f.Add([]byte{0xcf, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		encode := func(v exact.Int128) []byte {
			e := wire.NewEncoder(tag, 1)
			e.Int128(v)
			b, err := e.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			return bytes.Clone(b)
		}
		empty := len(encode(exact.Int128{})) - 1 // the envelope (0 is one byte)
		if len(data) >= 16 {
			v := exact.FromBytes([16]byte(data[:16]))
			b := encode(v)
			d, _, err := wire.NewDecoder(b, tag, 1, len(b))
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Int128()
			if err != nil || got != v || d.Finish() != nil {
				t.Fatalf("Int128 of %s read back as %s, %v", v.Big(), got.Big(), err)
			}
		}
		in := append(encode(exact.Int128{})[:empty], data...)
		d, _, err := wire.NewDecoder(in, tag, 1, len(in))
		if err != nil {
			t.Fatal(err)
		}
		v, err := d.Int128()
		if err != nil {
			if !isDecodeSentinel(err) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		if read := in[:len(in)-d.Remaining()]; !bytes.Equal(read, encode(v)) {
			t.Fatalf("read %x as %s, whose encoding is %x", read, v.Big(), encode(v))
		}
	})
}

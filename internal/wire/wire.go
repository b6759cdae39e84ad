// Package wire holds the bounded msgpack primitives every counterkit codec
// uses. Encoding is deterministic when callers emit elements in canonical
// order; decoding never trusts a length prefix (one beyond the remaining
// bytes is corrupt before any allocation) and callers cap each collection.
package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
	"github.com/counterkit/counterkit/stats"
	"github.com/counterkit/counterkit/timeid"
)

// Encoder writes msgpack values into a buffer; Bytes reports its first error.
type Encoder struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
	err error
}

// encoders pools encoders (not past maxPooledBuf): one allocation an encoding.
var encoders = sync.Pool{New: func() any {
	e := &Encoder{}
	e.enc = msgpack.NewEncoder(&e.buf)
	return e
}}

const maxPooledBuf = 64 << 10

// NewEncoder returns an encoder with the envelope for tag and version
// written; the caller writes one body value and calls Bytes once.
func NewEncoder(tag crdt.TypeTag, version uint64) *Encoder {
	e := NewValueEncoder()
	e.ArrayLen(crdt.EnvelopeLen)
	e.String(string(tag))
	e.Uint(version)
	return e
}

// NewValueEncoder returns an empty encoder, for a value later written with Raw.
func NewValueEncoder() *Encoder {
	e := encoders.Get().(*Encoder)
	e.buf.Reset()
	e.err = nil
	return e
}

// Grow makes room for n more bytes, for an encoding of known size.
func (e *Encoder) Grow(n int) { e.buf.Grow(n) }

// Raw writes b, which must be one or more complete msgpack values.
func (e *Encoder) Raw(b []byte) { e.buf.Write(b) }

func (e *Encoder) keep(err error) {
	if err != nil && e.err == nil {
		e.err = err
	}
}

// ArrayLen writes an array header.
func (e *Encoder) ArrayLen(n int) { e.keep(e.enc.EncodeArrayLen(n)) }

// String writes a str value.
func (e *Encoder) String(s string) { e.keep(e.enc.EncodeString(s)) }

// Int writes a signed integer in its smallest msgpack form.
func (e *Encoder) Int(v int64) { e.keep(e.enc.EncodeInt(v)) }

// int128Size is the length of the bin that holds an integer past int64.
const int128Size = 16

// Int128 writes v as Int does when it fits in int64, else as a bin 8 of
// its 16 bytes, big-endian two's complement: one encoding per value
// (Decoder.Int128).
func (e *Encoder) Int128(v exact.Int128) {
	if x, ok := v.Int64(); ok {
		e.Int(x)
		return
	}
	b := v.Bytes()
	e.buf.WriteByte(msgpcode.Bin8) // written directly, as TxnID's UUID
	e.buf.WriteByte(int128Size)
	e.buf.Write(b[:])
}

// Uint writes an unsigned integer in its smallest msgpack form.
func (e *Encoder) Uint(v uint64) { e.keep(e.enc.EncodeUint(v)) }

// Bool writes a boolean.
func (e *Encoder) Bool(v bool) { e.keep(e.enc.EncodeBool(v)) }

// Bin writes a bin value.
func (e *Encoder) Bin(b []byte) {
	if b == nil {
		b = []byte{} // EncodeBytes(nil) writes nil, which Decoder.Bin rejects
	}
	e.keep(e.enc.EncodeBytes(b))
}

// Nil writes nil.
func (e *Encoder) Nil() { e.keep(e.enc.EncodeNil()) }

// Bytes returns the encoding or the first error, and ends the encoder's use.
func (e *Encoder) Bytes() ([]byte, error) {
	b, err := e.buf.Bytes(), e.err
	if e.buf.Cap() <= maxPooledBuf {
		b = bytes.Clone(b)
		encoders.Put(e)
	}
	if err != nil {
		return nil, fmt.Errorf("counterkit: encode: %w", err)
	}
	return b, nil
}

// Decoder reads msgpack with bounded lengths; its errors wrap crdt.ErrCorruptEncoding,
// crdt.ErrTooLarge, crdt.ErrTypeMismatch or crdt.ErrUnsupportedVersion.
type Decoder struct {
	data []byte
	r    *bytes.Reader
	dec  *msgpack.Decoder
}

// Sized returns b, an encoding of tag (err: its encoder's), or the error
// NewDecoder with maxSize would refuse it with: an encoder never writes
// bytes its decoder refuses.
func Sized(tag crdt.TypeTag, maxSize int, b []byte, err error) ([]byte, error) {
	if err == nil && len(b) > maxSize {
		return nil, tooLarge(tag, len(b), maxSize)
	}
	return b, err
}

func tooLarge(tag crdt.TypeTag, n, maxSize int) error {
	return fmt.Errorf("%w: %s encoding is %d bytes, limit %d", crdt.ErrTooLarge, tag, n, maxSize)
}

// NewDecoder checks the size against maxSize and the envelope's tag, and returns
// the decoder at the body and the version, in 1..maxVersion.
func NewDecoder(data []byte, tag crdt.TypeTag, maxVersion uint64, maxSize int) (*Decoder, uint64, error) {
	if len(data) > maxSize {
		return nil, 0, tooLarge(tag, len(data), maxSize)
	}
	d, got, err := envelopeTag(data)
	if err != nil {
		return nil, 0, err
	}
	if got != tag { // before the version: another type's is type_mismatch
		return nil, 0, fmt.Errorf("%w: got %q, want %q", crdt.ErrTypeMismatch, got, tag)
	}
	v, err := d.Uint()
	if err != nil {
		return nil, 0, err
	}
	if v == 0 || v > maxVersion {
		return nil, 0, fmt.Errorf("%w: %s format version %d (this build reads 1..%d)", crdt.ErrUnsupportedVersion, tag, v, maxVersion)
	}
	return d, v, nil
}

// Envelope reads data's envelope header as every decoder does, with the
// same errors: its tag and version, unchecked, for a tool that decodes any
// type (counterkit inspect).
func Envelope(data []byte) (crdt.TypeTag, uint64, error) {
	d, tag, err := envelopeTag(data)
	if err != nil {
		return "", 0, err
	}
	v, err := d.Uint()
	if err != nil {
		return "", 0, err
	}
	return tag, v, nil
}

// envelopeTag reads data's envelope header and tag, and returns the
// decoder at the version.
func envelopeTag(data []byte) (*Decoder, crdt.TypeTag, error) {
	d := &Decoder{data: data, r: bytes.NewReader(data)}
	d.dec = msgpack.NewDecoder(d.r)
	if err := d.Tuple(crdt.EnvelopeLen, "envelope"); err != nil {
		return nil, "", err
	}
	tag, err := d.String(64)
	if err != nil {
		return nil, "", err
	}
	return d, crdt.TypeTag(tag), nil
}

// Remaining is the number of unread bytes.
func (d *Decoder) Remaining() int { return d.r.Len() }

// SkipTo moves to input offset off (not backwards), skipping recognised values.
func (d *Decoder) SkipTo(off int) {
	_, _ = d.r.Seek(int64(off), io.SeekStart) // off is within the input
}

func corrupt(what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: truncated reading %s", crdt.ErrCorruptEncoding, what)
	}
	return fmt.Errorf("%w: reading %s: %v", crdt.ErrCorruptEncoding, what, err)
}

// ArrayLen reads an array header: nil is corrupt, above max crdt.ErrTooLarge, and
// above the remaining bytes (an element takes at least one) corrupt.
func (d *Decoder) ArrayLen(max int) (int, error) {
	pos := d.Offset()
	if pos < len(d.data) && msgpcode.IsFixedArray(d.data[pos]) {
		// The common case: a fixarray is its smallest header by definition.
		n := int(d.data[pos] & 0x0f)
		if n <= max && n <= d.r.Len()-1 {
			d.SkipTo(pos + 1)
			return n, nil
		}
	}
	n, err := d.dec.DecodeArrayLen()
	if err != nil {
		return 0, corrupt("array header", err)
	}
	if n < 0 {
		return 0, fmt.Errorf("%w: nil where an array is required", crdt.ErrCorruptEncoding)
	}
	if n > max {
		return 0, fmt.Errorf("%w: array of %d elements, limit %d", crdt.ErrTooLarge, n, max)
	}
	if !d.minimalHeader(pos, n, 16, false) {
		return 0, fmt.Errorf("%w: array of %d elements not in its smallest header (code 0x%02x)", crdt.ErrCorruptEncoding, n, d.data[pos])
	}
	if n > d.r.Len() {
		return 0, fmt.Errorf("%w: array of %d elements but only %d bytes remain", crdt.ErrCorruptEncoding, n, d.r.Len())
	}
	return n, nil
}

// Tuple reads a fixed-arity header (named what in errors) of exactly n: any
// other count is corrupt, never too large, the shape being the format's.
func (d *Decoder) Tuple(n int, what string) error {
	got, err := d.ArrayLen(math.MaxInt32)
	if err != nil {
		return err
	}
	if got != n {
		return fmt.Errorf("%w: %s has %d elements, want %d", crdt.ErrCorruptEncoding, what, got, n)
	}
	return nil
}

// minPairSize is the smallest [actor, count] pair: fixarray, 1-byte actor, fixint.
const minPairSize = 1 + 2 + 1

// ActorCounts reads the gcounter body, at most max [actor, count] pairs with
// valid, strictly increasing actors and positive counts: grow first gets the
// pairs the input can hold (at most declared), then add each pair (its error ends it).
func (d *Decoder) ActorCounts(max int, grow func(int), add func(crdt.ActorID, int64) error) error {
	n, err := d.ArrayLen(max)
	if err != nil {
		return err
	}
	grow(min(n, d.Remaining()/minPairSize))
	var prev crdt.ActorID
	for i := range n {
		if err := d.Tuple(2, "pair"); err != nil {
			return fmt.Errorf("pair %d: %w", i, err)
		}
		actor, err := d.Actor()
		if err != nil {
			return err
		}
		if i > 0 && actor <= prev {
			return fmt.Errorf("%w: actor %q after %q: pairs must be strictly increasing", crdt.ErrCorruptEncoding, actor, prev)
		}
		prev = actor
		count, err := d.NonNegInt()
		if err != nil {
			return err
		}
		if count == 0 {
			return fmt.Errorf("%w: actor %q has a zero count (not canonical)", crdt.ErrCorruptEncoding, actor)
		}
		if err := add(actor, count); err != nil {
			return err
		}
	}
	return nil
}

// minimalHeader reports whether the header read from pos, of length n, is
// the smallest form: every length header code has a fixed size, sized here
// as headerSize does.
func (d *Decoder) minimalHeader(pos, n int, fix uint64, has8 bool) bool {
	return d.Offset()-pos == headerSize(uint64(n), fix, has8)
}

// String reads a str of at most maxLen bytes.
func (d *Decoder) String(maxLen int) (string, error) {
	b, err := d.StringBytes(maxLen)
	return string(b), err // copied out of the input once
}

// StringBytes reads a str of at most maxLen bytes, aliasing the input.
func (d *Decoder) StringBytes(maxLen int) ([]byte, error) {
	c, err := d.code("string", "a string", msgpcode.IsString)
	if err != nil {
		return nil, err
	}
	pos := d.Offset()
	n, err := d.dec.DecodeBytesLen() // str headers too; checked before allocating
	if err != nil {
		return nil, corrupt("string", err)
	}
	if n > maxLen {
		return nil, fmt.Errorf("%w: string of %d bytes, limit %d", crdt.ErrCorruptEncoding, n, maxLen)
	}
	if !d.minimalHeader(pos, n, 32, true) {
		return nil, fmt.Errorf("%w: string of %d bytes not in its smallest header (code 0x%02x)", crdt.ErrCorruptEncoding, n, c)
	}
	return d.take(n, "string")
}

// take returns the next n bytes, aliasing the input; fewer remaining is
// corrupt. msgpack.Decoder does not read ahead of a *bytes.Reader: unread
// is data's tail.
func (d *Decoder) take(n int, what string) ([]byte, error) {
	if n > d.r.Len() {
		return nil, fmt.Errorf("%w: %s of %d bytes but only %d remain", crdt.ErrCorruptEncoding, what, n, d.r.Len())
	}
	pos := d.Offset()
	d.SkipTo(pos + n)
	return d.data[pos : pos+n : pos+n], nil
}

// code peeks the next value's code, refusing as corrupt one that is not
// a want (is); what names the value in a truncation error.
func (d *Decoder) code(what, want string, is func(byte) bool) (byte, error) {
	c, err := d.dec.PeekCode()
	if err != nil {
		return 0, corrupt(what, err)
	}
	if !is(c) {
		return 0, fmt.Errorf("%w: code 0x%02x where %s is required", crdt.ErrCorruptEncoding, c, want)
	}
	return c, nil
}

// Actor reads and validates an actor id.
func (d *Decoder) Actor() (crdt.ActorID, error) { return readID(d, crdt.NewActorID) }

// Txn reads and validates a transaction id.
func (d *Decoder) Txn() (crdt.TxnID, error) { return readID(d, crdt.NewTxnID) }

func readID[T ~string](d *Decoder, parse func(string) (T, error)) (T, error) {
	s, err := d.String(crdt.MaxIDLen)
	if err != nil {
		return "", err
	}
	id, err := parse(s)
	if err != nil {
		return "", fmt.Errorf("%w: %v", crdt.ErrCorruptEncoding, err)
	}
	return id, nil
}

// Int reads an integer that must fit in int64, in its smallest form.
func (d *Decoder) Int() (int64, error) {
	pos := d.Offset()
	if v, n := SmallUint(d.data[pos:]); n > 0 { // the common case, read directly
		d.SkipTo(pos + n)
		return v, nil
	}
	c, err := d.code("integer", "an integer", func(c byte) bool {
		return msgpcode.IsFixedNum(c) || c >= msgpcode.Uint8 && c <= msgpcode.Int64 // uint8..64, int8..64
	})
	if err != nil {
		return 0, err
	}
	v, err := d.dec.DecodeInt64() // a uint64 above math.MaxInt64 comes back negative
	if err != nil {
		return 0, corrupt("integer", err)
	}
	if c == msgpcode.Uint64 && v < 0 {
		return 0, fmt.Errorf("%w: integer %d does not fit int64", crdt.ErrCorruptEncoding, uint64(v))
	}
	// Every integer code has a fixed size, and a smaller code or, for a
	// non-negative v, an unsigned one of the same size is the smallest form.
	size := headerSize(uint64(v), 128, true)
	if v < 0 {
		size = headerSize(2*uint64(^v), 64, true) // bounds -32, -2^7, -2^15, -2^31
	}
	smallest := d.Offset()-pos == size && (v < 0 || c < msgpcode.Int8 || c > msgpcode.Int64)
	if !smallest {
		return 0, fmt.Errorf("%w: integer %d not in its smallest form (code 0x%02x)", crdt.ErrCorruptEncoding, v, c)
	}
	return v, nil
}

// Int128 reads what Encoder.Int128 writes: an integer (as Int reads it),
// or a bin 8 of 16 bytes, big-endian two's complement, holding a value
// past int64. A bin of another length or header, and one holding a value
// that fits in int64 (which has one form, the integer), are corrupt.
func (d *Decoder) Int128() (exact.Int128, error) {
	var v exact.Int128
	c, err := d.dec.PeekCode()
	if err != nil {
		return v, corrupt("integer", err)
	}
	if !msgpcode.IsBin(c) {
		x, err := d.Int()
		v.Add(x)
		return v, err
	}
	n, err := d.dec.DecodeBytesLen()
	if err != nil {
		return v, corrupt("integer", err)
	}
	if c != msgpcode.Bin8 || n != int128Size {
		return v, fmt.Errorf("%w: integer of %d bytes (code 0x%02x), want 16 in a bin 8", crdt.ErrCorruptEncoding, n, c)
	}
	b, err := d.take(n, "integer")
	if err != nil {
		return v, err
	}
	v = exact.FromBytes([int128Size]byte(b))
	if x, fits := v.Int64(); fits {
		return exact.Int128{}, fmt.Errorf("%w: integer %d written in 16 bytes: one that fits in int64 is written as an integer", crdt.ErrCorruptEncoding, x)
	}
	return v, nil
}

// SmallUint returns the smallest-form 0..2^32−1 integer b starts with and its size (0: none).
func SmallUint(b []byte) (int64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	switch c := b[0]; {
	case c <= msgpcode.PosFixedNumHigh:
		return int64(c), 1
	case c == msgpcode.Uint8 && len(b) >= 2 && b[1] > msgpcode.PosFixedNumHigh:
		return int64(b[1]), 2
	case c == msgpcode.Uint16 && len(b) >= 3 && binary.BigEndian.Uint16(b[1:]) > math.MaxUint8:
		return int64(binary.BigEndian.Uint16(b[1:])), 3
	case c == msgpcode.Uint32 && len(b) >= 5 && binary.BigEndian.Uint32(b[1:]) > math.MaxUint16:
		return int64(binary.BigEndian.Uint32(b[1:])), 5
	}
	return 0, 0
}

// NonNegInt reads an integer in [0, math.MaxInt64].
func (d *Decoder) NonNegInt() (int64, error) {
	v, err := d.Int()
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, fmt.Errorf("%w: negative integer %d where a non-negative one is required", crdt.ErrCorruptEncoding, v)
	}
	return v, nil
}

// Uint reads a non-negative integer as uint64.
func (d *Decoder) Uint() (uint64, error) {
	c, err := d.dec.PeekCode()
	if err != nil {
		return 0, corrupt("unsigned integer", err)
	}
	if c == msgpcode.Uint64 {
		u, err := d.dec.DecodeUint64()
		if err != nil {
			return 0, corrupt("unsigned integer", err)
		}
		if u <= math.MaxUint32 {
			return 0, fmt.Errorf("%w: integer %d not in its smallest form (code 0x%02x)", crdt.ErrCorruptEncoding, u, c)
		}
		return u, nil
	}
	v, err := d.Int()
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, fmt.Errorf("%w: negative integer %d where an unsigned one is required", crdt.ErrCorruptEncoding, v)
	}
	return uint64(v), nil
}

// Bool reads a boolean.
func (d *Decoder) Bool() (bool, error) {
	c, err := d.code("bool", "a bool", func(c byte) bool { return c == msgpcode.True || c == msgpcode.False })
	if err != nil {
		return false, err
	}
	d.SkipTo(d.Offset() + 1)
	return c == msgpcode.True, nil
}

// Bin reads a bin value of at most maxLen bytes.
func (d *Decoder) Bin(maxLen int) ([]byte, error) {
	c, err := d.code("bin", "bin", msgpcode.IsBin)
	if err != nil {
		return nil, err
	}
	pos := d.Offset()
	n, err := d.dec.DecodeBytesLen()
	if err != nil {
		return nil, corrupt("bin", err)
	}
	if !d.minimalHeader(pos, n, 0, true) {
		return nil, fmt.Errorf("%w: bin of %d bytes not in its smallest header (code 0x%02x)", crdt.ErrCorruptEncoding, n, c)
	}
	if n > maxLen {
		return nil, fmt.Errorf("%w: bin of %d bytes, limit %d", crdt.ErrTooLarge, n, maxLen)
	}
	b, err := d.take(n, "bin")
	return bytes.Clone(b), err
}

// TimeID reads a time-based id: a bin of exactly 16 bytes.
func (d *Decoder) TimeID() (timeid.ID, error) {
	var id timeid.ID
	b, err := d.Bin(len(id))
	if err != nil {
		return id, err
	}
	if len(b) != len(id) {
		return id, fmt.Errorf("%w: id of %d bytes", crdt.ErrCorruptEncoding, len(b))
	}
	copy(id[:], b)
	return id, nil
}

// IsNil reports whether the next value is nil, consuming it if so.
func (d *Decoder) IsNil() (bool, error) {
	c, err := d.dec.PeekCode()
	if err != nil {
		return false, corrupt("value", err)
	}
	if c != msgpcode.Nil {
		return false, nil
	}
	d.SkipTo(d.Offset() + 1)
	return true, nil
}

// Finish reports trailing bytes as corrupt.
func (d *Decoder) Finish() error {
	if n := d.r.Len(); n != 0 {
		return fmt.Errorf("%w: %d trailing bytes", crdt.ErrCorruptEncoding, n)
	}
	return nil
}

// Smallest (canonical) encoded sizes, for codecs that size without encoding.

// StrSize is the size of a str of n bytes.
func StrSize(n int) int { return headerSize(uint64(n), 32, true) + n }

// UintSize is the size of the non-negative integer v.
func UintSize(v uint64) int { return headerSize(v, 128, true) }

// ArrayHeaderSize is the size of the header of an array of n elements.
func ArrayHeaderSize(n int) int { return headerSize(uint64(n), 16, false) }

// headerSize sizes length or uint n: fix below fix, 8-bit (has8), 16, 32, 64.
func headerSize(n, fix uint64, has8 bool) int {
	switch {
	case n < fix:
		return 1
	case has8 && n < 1<<8:
		return 2
	case n < 1<<16:
		return 3
	case n < 1<<32:
		return 5
	}
	return 9
}

// AppendArrayHeader appends the array header Encoder.ArrayLen writes for n.
func AppendArrayHeader(dst []byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, msgpcode.FixedArrayLow|byte(n))
	case n < 1<<16:
		return append(dst, msgpcode.Array16, byte(n>>8), byte(n))
	}
	return append(dst, msgpcode.Array32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// AppendEnvelope appends NewEncoder's envelope, for encodings built from parts.
func AppendEnvelope(dst []byte, tag crdt.TypeTag, version uint64) []byte {
	e := NewEncoder(tag, version)
	dst = append(dst, e.buf.Bytes()...)
	encoders.Put(e)
	return dst
}

// Offset returns how many bytes of the input have been read.
func (d *Decoder) Offset() int { return len(d.data) - d.r.Len() }

// Input returns input bytes [from, to), aliasing the input.
func (d *Decoder) Input(from, to int) []byte { return d.data[from:to:to] }

// summaryFields is the length of a stats.Summary's array (SPEC.md 7.1).
const summaryFields = 6

// Summary writes s as [count, sum, min, max, sumsq_hi, sumsq_lo], the form
// tally's stats and deltalog's merge cells share (SPEC.md 7.1, 8.3). An
// empty summary is written as nil by the caller, not here.
func (e *Encoder) Summary(s stats.Summary) {
	e.ArrayLen(summaryFields)
	e.Int(s.Count)
	e.Int(s.Sum)
	e.Int(s.Min)
	e.Int(s.Max)
	e.Uint(s.SumSqHi)
	e.Uint(s.SumSqLo)
}

// Summary reads what Encoder.Summary writes. An array of another length is
// crdt.ErrCorruptEncoding; the values are not validated (the caller runs
// its own checks, stats.Summary.Validate among them).
func (d *Decoder) Summary() (stats.Summary, error) {
	var s stats.Summary
	n, err := d.ArrayLen(1 << 16)
	if err != nil {
		return s, err
	}
	if n != summaryFields {
		return s, fmt.Errorf("%w: stats has %d fields, want %d", crdt.ErrCorruptEncoding, n, summaryFields)
	}
	for _, p := range []*int64{&s.Count, &s.Sum, &s.Min, &s.Max} {
		if *p, err = d.Int(); err != nil {
			return s, err
		}
	}
	for _, p := range []*uint64{&s.SumSqHi, &s.SumSqLo} {
		if *p, err = d.Uint(); err != nil {
			return s, err
		}
	}
	return s, nil
}

package cassandra

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/counterkit/counterkit/crdt"
)

// tokenTag is the envelope tag of a Siblings token. It is local to this
// adapter (a token goes from a Fetch to a Put of the same backend and is
// never stored), so it is not registered in package crdt. The tag keeps the
// name it had when the ledger was the token's only user, so that the
// encoding is unchanged.
const tokenTag = "cassandra.ledger_token"

// TokenFormatVersion is the token format written by Siblings.Fetch.
//
// Layout (msgpack, inside counterkit's envelope [tag, version, body]):
//
//	body: [ [actor: str, writetime: uint]... ]   sorted by actor, strictly ascending
//
// One entry per row the Fetch returned: the row's actor and the WRITETIME
// (µs, ≥ 1) of its value. Every header and integer takes its smallest
// msgpack form, so an encoding is canonical. Decoding caps: at most
// MaxSiblings entries, actor ids as crdt.ActorID.Validate allows, and at
// most MaxTokenSize bytes.
const TokenFormatVersion = 1

// MaxTokenSize bounds an encoded token: MaxSiblings entries of the longest
// actor id and timestamp, plus the envelope.
const MaxTokenSize = 64 + MaxSiblings*(crdt.MaxIDLen+16)

// tokenEntry names one row version a Fetch saw.
type tokenEntry struct {
	actor crdt.ActorID
	ts    int64
}

// msgpack codes of the few forms the token uses.
const (
	mpFixArray = 0x90
	mpArray16  = 0xdc
	mpArray32  = 0xdd
	mpFixStr   = 0xa0
	mpStr8     = 0xd9
	mpStr16    = 0xda
	mpStr32    = 0xdb
	mpUint8    = 0xcc
	mpUint16   = 0xcd
	mpUint32   = 0xce
	mpUint64   = 0xcf
)

func appendArrayLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, mpFixArray|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, mpArray16), uint16(n))
	default:
		return binary.BigEndian.AppendUint32(append(b, mpArray32), uint32(n))
	}
}

func appendStr(b []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		b = append(b, mpFixStr|byte(n))
	case n <= math.MaxUint8:
		b = append(b, mpStr8, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, mpStr16), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, mpStr32), uint32(n))
	}
	return append(b, s...)
}

func appendUint(b []byte, v uint64) []byte {
	switch {
	case v <= 0x7f:
		return append(b, byte(v))
	case v <= math.MaxUint8:
		return append(b, mpUint8, byte(v))
	case v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, mpUint16), uint16(v))
	case v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, mpUint32), uint32(v))
	default:
		return binary.BigEndian.AppendUint64(append(b, mpUint64), v)
	}
}

// appendEnvelope starts an encoding: [tag, version, ...] with the body to
// follow.
func appendEnvelope(b []byte, tag string, version uint64) []byte {
	b = appendArrayLen(b, crdt.EnvelopeLen)
	b = appendStr(b, tag)
	return appendUint(b, version)
}

// encodeToken returns the token for the given rows (any order), or nil
// when there are none: a Put with a nil token supersedes nothing.
func encodeToken(entries []tokenEntry) ([]byte, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	if len(entries) > MaxSiblings {
		return nil, fmt.Errorf("%w: token of %d rows, limit %d", crdt.ErrTooLarge, len(entries), MaxSiblings)
	}
	sorted := append([]tokenEntry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].actor < sorted[j].actor })
	b := appendEnvelope(make([]byte, 0, 32+len(sorted)*24), tokenTag, TokenFormatVersion)
	b = appendArrayLen(b, len(sorted))
	for i, t := range sorted {
		if err := t.actor.Validate(); err != nil {
			return nil, err
		}
		if i > 0 && sorted[i-1].actor == t.actor {
			return nil, fmt.Errorf("%w: actor %q twice in a token", crdt.ErrCorruptEncoding, t.actor)
		}
		if t.ts < 1 {
			return nil, fmt.Errorf("%w: write timestamp %d of actor %q", crdt.ErrCorruptEncoding, t.ts, t.actor)
		}
		b = appendArrayLen(b, 2)
		b = appendStr(b, string(t.actor))
		b = appendUint(b, uint64(t.ts))
	}
	return b, nil
}

// tokenReader reads the canonical msgpack forms a token uses. Every error
// wraps crdt.ErrCorruptEncoding unless stated otherwise.
type tokenReader struct {
	b   []byte
	pos int
}

func (r *tokenReader) fail(format string, args ...any) error {
	return fmt.Errorf("%w: token: %s at byte %d", crdt.ErrCorruptEncoding, fmt.Sprintf(format, args...), r.pos)
}

func (r *tokenReader) take(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, r.fail("truncated (%d bytes wanted, %d left)", n, len(r.b)-r.pos)
	}
	out := r.b[r.pos : r.pos+n]
	r.pos += n
	return out, nil
}

func (r *tokenReader) byte() (byte, error) {
	p, err := r.take(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// length reads the big-endian length of a 16- or 32-bit header and
// requires it to be at least min (smaller lengths have shorter headers).
func (r *tokenReader) length(size int, min uint64) (uint64, error) {
	p, err := r.take(size)
	if err != nil {
		return 0, err
	}
	var n uint64
	if size == 2 {
		n = uint64(binary.BigEndian.Uint16(p))
	} else {
		n = uint64(binary.BigEndian.Uint32(p))
	}
	if n < min {
		return 0, r.fail("length %d not in its smallest header", n)
	}
	return n, nil
}

// arrayLen reads an array header. A length above max wraps
// crdt.ErrTooLarge; one above the bytes left is corrupt.
func (r *tokenReader) arrayLen(max int) (int, error) {
	c, err := r.byte()
	if err != nil {
		return 0, err
	}
	var n uint64
	switch {
	case c&0xf0 == mpFixArray:
		n = uint64(c & 0x0f)
	case c == mpArray16:
		n, err = r.length(2, 16)
	case c == mpArray32:
		n, err = r.length(4, math.MaxUint16+1)
	default:
		return 0, r.fail("code 0x%02x where an array is required", c)
	}
	if err != nil {
		return 0, err
	}
	if n > uint64(max) {
		return 0, fmt.Errorf("%w: token: array of %d elements, limit %d", crdt.ErrTooLarge, n, max)
	}
	if n > uint64(len(r.b)-r.pos) {
		return 0, r.fail("array of %d elements but only %d bytes left", n, len(r.b)-r.pos)
	}
	return int(n), nil
}

// tuple reads an array header that must hold exactly n elements.
func (r *tokenReader) tuple(n int) error {
	got, err := r.arrayLen(math.MaxInt32)
	if err != nil {
		return err
	}
	if got != n {
		return r.fail("array of %d elements, want %d", got, n)
	}
	return nil
}

// str reads a string of at most max bytes.
func (r *tokenReader) str(max int) (string, error) {
	c, err := r.byte()
	if err != nil {
		return "", err
	}
	var n uint64
	switch {
	case c&0xe0 == mpFixStr:
		n = uint64(c & 0x1f)
	case c == mpStr8:
		var l byte
		if l, err = r.byte(); err == nil && l < 32 {
			err = r.fail("string of %d bytes not in its smallest header", l)
		}
		n = uint64(l)
	case c == mpStr16:
		n, err = r.length(2, math.MaxUint8+1)
	case c == mpStr32:
		n, err = r.length(4, math.MaxUint16+1)
	default:
		return "", r.fail("code 0x%02x where a string is required", c)
	}
	if err != nil {
		return "", err
	}
	if n > uint64(max) {
		return "", r.fail("string of %d bytes, limit %d", n, max)
	}
	p, err := r.take(int(n))
	if err != nil {
		return "", err
	}
	return string(p), nil
}

// uint reads an unsigned integer in its smallest form.
func (r *tokenReader) uint() (uint64, error) {
	c, err := r.byte()
	if err != nil {
		return 0, err
	}
	var (
		size int
		min  uint64
	)
	switch c {
	case mpUint8:
		size, min = 1, 0x80
	case mpUint16:
		size, min = 2, math.MaxUint8+1
	case mpUint32:
		size, min = 4, math.MaxUint16+1
	case mpUint64:
		size, min = 8, math.MaxUint32+1
	default:
		if c <= 0x7f {
			return uint64(c), nil
		}
		return 0, r.fail("code 0x%02x where an unsigned integer is required", c)
	}
	p, err := r.take(size)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, x := range p {
		v = v<<8 | uint64(x)
	}
	if v < min {
		return 0, r.fail("integer %d not in its smallest form", v)
	}
	return v, nil
}

// decodeToken accepts an empty token (no Fetch, or an absent key) as no
// entries. Every error wraps crdt.ErrCorruptEncoding (a token this store
// did not make is malformed, as store.Siblings says), and also
// crdt.ErrTooLarge, crdt.ErrTypeMismatch or crdt.ErrUnsupportedVersion
// when that is what is wrong with it.
func decodeToken(b []byte) ([]tokenEntry, error) {
	out, err := decodeTokenBody(b)
	if err != nil && !errors.Is(err, crdt.ErrCorruptEncoding) {
		err = fmt.Errorf("%w: %w", crdt.ErrCorruptEncoding, err)
	}
	return out, err
}

func decodeTokenBody(b []byte) ([]tokenEntry, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b) > MaxTokenSize {
		return nil, fmt.Errorf("%w: token of %d bytes, limit %d", crdt.ErrTooLarge, len(b), MaxTokenSize)
	}
	r := &tokenReader{b: b}
	if err := r.tuple(crdt.EnvelopeLen); err != nil {
		return nil, err
	}
	tag, err := r.str(64)
	if err != nil {
		return nil, err
	}
	if tag != tokenTag {
		return nil, fmt.Errorf("%w: token tag %q, want %q", crdt.ErrTypeMismatch, tag, tokenTag)
	}
	v, err := r.uint()
	if err != nil {
		return nil, err
	}
	if v != TokenFormatVersion {
		return nil, fmt.Errorf("%w: token format version %d (this build reads %d)", crdt.ErrUnsupportedVersion, v, TokenFormatVersion)
	}
	n, err := r.arrayLen(MaxSiblings)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: token with no rows (an absent key has a nil token)", crdt.ErrCorruptEncoding)
	}
	out := make([]tokenEntry, 0, n)
	for i := 0; i < n; i++ {
		if err := r.tuple(2); err != nil {
			return nil, err
		}
		s, err := r.str(crdt.MaxIDLen)
		if err != nil {
			return nil, err
		}
		a := crdt.ActorID(s)
		if err := a.Validate(); err != nil {
			return nil, fmt.Errorf("%w: token: %v", crdt.ErrCorruptEncoding, err)
		}
		ts, err := r.uint()
		if err != nil {
			return nil, err
		}
		if ts < 1 || ts > math.MaxInt64 {
			return nil, fmt.Errorf("%w: token: write timestamp %d of actor %q", crdt.ErrCorruptEncoding, ts, a)
		}
		if i > 0 && out[i-1].actor >= a {
			return nil, fmt.Errorf("%w: token: actors not strictly ascending at %q", crdt.ErrCorruptEncoding, a)
		}
		out = append(out, tokenEntry{actor: a, ts: int64(ts)})
	}
	if r.pos != len(b) {
		return nil, r.fail("%d trailing bytes", len(b)-r.pos)
	}
	return out, nil
}

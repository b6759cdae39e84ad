package wire

import (
	"encoding/hex"
	"fmt"

	"github.com/google/uuid"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/counterkit/counterkit/crdt"
)

// UUIDTextLen is the length of a UUID in canonical text form,
// "6ba7b810-9dad-11d1-80b4-00c04fd430c8".
const UUIDTextLen = 36

// ParseUUIDText returns the 16 bytes of s when s is a UUID in canonical
// text form with lowercase hex digits: exactly the ids a format that
// stores UUIDs as 16-byte bins gives back unchanged.
//
// uuid.Parse reads the hex digits. It also takes uppercase digits and the
// braced, "urn:uuid:" and undashed forms, none of which AppendUUIDText
// gives back, and it builds an error for each text it refuses; so only 36
// characters with their four dashes in place and no uppercase letter reach
// it, and other ids (every id is checked when a state is encoded) are
// refused without an allocation.
func ParseUUIDText(s string) (u [16]byte, ok bool) {
	if !uuidShaped(s) {
		return u, false
	}
	p, err := uuid.Parse(s)
	if err != nil {
		return u, false
	}
	return p, true
}

// uuidShaped reports whether s is 36 characters with dashes at 8, 13, 18
// and 23 and no uppercase letter.
func uuidShaped(s string) bool {
	if len(s) != UUIDTextLen || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return false
		}
	}
	return true
}

// AppendUUIDText appends the canonical text form of the 16 bytes u.
//
// It is written out rather than taken from google/uuid: the library's
// UUID.String and UUID.MarshalText (v1.6.0, the newest release) return new
// memory, one allocation per decoded id and twice the time of this
// (BenchmarkUUIDText format and decode rows), and it has no append form.
func AppendUUIDText(dst []byte, u []byte) []byte {
	var t [UUIDTextLen]byte
	hex.Encode(t[0:8], u[0:4])
	hex.Encode(t[9:13], u[4:6])
	hex.Encode(t[14:18], u[6:8])
	hex.Encode(t[19:23], u[8:10])
	hex.Encode(t[24:36], u[10:16])
	t[8], t[13], t[18], t[23] = '-', '-', '-', '-'
	return append(dst, t[:]...)
}

// TxnID writes a transaction id: as a 16-byte bin when uuidBin is set and
// the id is a UUID in canonical text form (ParseUUIDText), as a str
// otherwise. It reports whether it wrote a bin.
func (e *Encoder) TxnID(id string, uuidBin bool) bool {
	if uuidBin {
		if u, ok := ParseUUIDText(id); ok {
			e.buf.WriteByte(msgpcode.Bin8) // written directly: e.Bin would make u escape
			e.buf.WriteByte(16)
			e.buf.Write(u[:])
			return true
		}
	}
	e.String(id)
	return false
}

// TxnIDBytes reads a transaction id written by Encoder.TxnID and appends its
// text to dst. With uuidBin, a 16-byte bin is a UUID and a str holding a
// UUID's canonical text is refused (it has one encoding only: the bin);
// without it, only a str is an id. The id's length is checked against
// crdt.MaxIDLen, not its characters. isUUID reports that the id was a
// 16-byte bin, whose text (canonical UUID text) is a valid id.
func (d *Decoder) TxnIDBytes(dst []byte, uuidBin bool) (out []byte, isUUID bool, err error) {
	raw, isUUID, err := d.txnID(uuidBin)
	if err != nil {
		return nil, false, err
	}
	if isUUID {
		return AppendUUIDText(dst, raw), true, nil
	}
	return append(dst, raw...), false, nil
}

// TxnIDLen reads a transaction id as TxnIDBytes does and returns the length
// of its text, without building it.
func (d *Decoder) TxnIDLen(uuidBin bool) (int, error) {
	raw, isUUID, err := d.txnID(uuidBin)
	if isUUID {
		return UUIDTextLen, err
	}
	return len(raw), err
}

// txnID reads a transaction id: the 16 bytes of a UUID (isUUID) or the
// bytes of a str, both sub-slices of the input.
func (d *Decoder) txnID(uuidBin bool) (raw []byte, isUUID bool, err error) {
	c, err := d.dec.PeekCode()
	if err != nil {
		return nil, false, corrupt("transaction id", err)
	}
	if uuidBin && msgpcode.IsBin(c) {
		n, err := d.dec.DecodeBytesLen()
		if err != nil {
			return nil, false, corrupt("transaction id", err)
		}
		if c != msgpcode.Bin8 || n != 16 {
			return nil, false, fmt.Errorf("%w: transaction id of %d bytes (code 0x%02x), want a 16-byte UUID in bin 8", crdt.ErrCorruptEncoding, n, c)
		}
		if n > d.r.Len() {
			return nil, false, fmt.Errorf("%w: transaction id of %d bytes but only %d remain", crdt.ErrCorruptEncoding, n, d.r.Len())
		}
		pos := len(d.data) - d.r.Len()
		d.SkipTo(pos + n)
		return d.data[pos : pos+n], true, nil
	}
	s, err := d.StringBytes(crdt.MaxIDLen)
	if err != nil {
		return nil, false, err
	}
	if uuidBin {
		if _, ok := ParseUUIDText(string(s)); ok {
			return nil, false, fmt.Errorf("%w: transaction id %q is a UUID written as text; this format writes it as 16 bytes", crdt.ErrCorruptEncoding, s)
		}
	}
	return s, false, nil
}

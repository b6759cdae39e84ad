package wire

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/counterkit/counterkit/crdt"
)

// UUIDTextLen is the length of a UUID in canonical text form,
// "6ba7b810-9dad-11d1-80b4-00c04fd430c8".
const UUIDTextLen = 36

// ParseUUIDText returns the 16 bytes of s when s is a canonical lowercase UUID
// text: exactly the ids a 16-byte bin gives back unchanged. google/uuid's
// Parse also takes other forms (which do not round-trip) and, under -race,
// makes the decoder allocate per id, which TestDecodeMemory refuses.
func ParseUUIDText(s string) (u [16]byte, ok bool) {
	if len(s) != UUIDTextLen || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	for j, i := 0, 0; j < len(u); j, i = j+1, i+2 {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			i++
		}
		hi, lo := strings.IndexByte(lowerHex, s[i]), strings.IndexByte(lowerHex, s[i+1])
		if hi < 0 || lo < 0 {
			return u, false
		}
		u[j] = byte(hi<<4 | lo)
	}
	return u, true
}

const lowerHex = "0123456789abcdef"

// AppendUUIDText appends the canonical text form of the 16 bytes u.
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

// TxnID writes an id as a 16-byte bin when uuidBin is set and it is canonical
// UUID text (ParseUUIDText), else as a str; it reports a bin.
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

// TxnIDBytes reads an id written by Encoder.TxnID and appends its text to dst:
// with uuidBin a 16-byte bin is a UUID (isUUID) and a str holding UUID text is
// refused; without, only a str is. Only the length is checked (crdt.MaxIDLen).
func (d *Decoder) TxnIDBytes(dst []byte, uuidBin bool) (out []byte, isUUID bool, err error) {
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
		u, err := d.take(n, "transaction id")
		if err != nil {
			return nil, false, err
		}
		return AppendUUIDText(dst, u), true, nil
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
	return append(dst, s...), false, nil
}

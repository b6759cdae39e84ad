package balance

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/rowlog"
	"github.com/counterkit/counterkit/internal/wire"
	"github.com/counterkit/counterkit/timeid"
)

// ID is a time-based UUID (version 1); see package timeid.
type ID = timeid.ID

// Kind is a row's type column. The byte values are the storage format and
// sort N < S < T.
type Kind byte

// The three row kinds.
const (
	KindNormal    Kind = 'N' // an increment or decrement
	KindSum       Kind = 'S' // a merge's sum record
	KindTombstone Kind = 'T' // cancels one N or S row on behalf of one merge
)

// String returns "N", "S" or "T".
func (k Kind) String() string { return rowlog.KindString(byte(k), "NST") }

// Row is one row of an account's partition, keyed by (UpdateID, Kind,
// Version).
//
//   - N: UpdateID is the client-chosen id of the update, Amount its signed
//     non-zero amount. Version is the amount's key (NormalRow sets it: eight
//     zero bytes, then the amount as a big-endian two's-complement int64),
//     so that one update id written with two amounts is two rows, not one
//     overwriting the other, while a retry with the same amount rewrites
//     the same row. Rows written before format version 2 have a zero
//     Version; both forms are valid.
//   - S: written by the merge with version Version; UpdateID equals Version.
//     Amount is the sum of the rows it covers and Covers how many rows that
//     is (one tombstone each). Settled is set by a later merge once the
//     covered rows have been deleted; a settled S row no longer needs its
//     tombstones.
//   - T: cancels the Target-kind row (N or S) with the same UpdateID, on
//     behalf of the merge with version Version. Amount repeats the target's
//     amount, so a tombstone never cancels a row it did not read.
//
// Row is a value type, safe for concurrent use.
type Row struct {
	UpdateID ID
	Kind     Kind
	Version  ID
	Amount   int64
	Covers   int64
	Settled  bool
	Target   Kind
}

// NormalRow returns the N row of an update of amount under id, with its
// amount key as Version.
func NormalRow(id ID, amount int64) Row {
	return Row{UpdateID: id, Kind: KindNormal, Version: amountKey(amount), Amount: amount}
}

// amountKey is the Version of an N row of amount. It is never zero for a
// valid (non-zero) amount.
func amountKey(amount int64) ID {
	var k ID
	binary.BigEndian.PutUint64(k[8:], uint64(amount))
	return k
}

// Key identifies a row within its partition.
type Key struct {
	UpdateID ID
	Kind     Kind
	Version  ID
}

// Key returns r's primary-key columns.
func (r Row) Key() Key { return Key{r.UpdateID, r.Kind, r.Version} }

// String renders the row as (updateid,type,version,amount), with an empty
// version for N rows.
func (r Row) String() string {
	v := ""
	if r.Kind != KindNormal {
		v = r.Version.String()
	}
	return fmt.Sprintf("(%s,%s,%s,%d)", r.UpdateID, r.Kind, v, r.Amount)
}

// CompareRows orders rows the way stores cluster them: UpdateID
// descending, then Kind and Version ascending (-1 if a comes first, +1 if
// b does, 0 for one key).
func CompareRows(a, b Row) int {
	return cmp.Or(b.UpdateID.Compare(a.UpdateID), cmp.Compare(a.Kind, b.Kind), a.Version.Compare(b.Version))
}

// Validate reports whether r is well formed. Errors wrap
// crdt.ErrInvalidTxnID (bad ids), crdt.ErrInvalidAmount (a zero increment,
// fields that do not belong to the kind) or crdt.ErrCorruptEncoding (an
// unknown kind).
func (r Row) Validate() error {
	if err := r.UpdateID.Validate(); err != nil {
		return err
	}
	bad := func(why string) error { return fmt.Errorf("%w: %s row %s", crdt.ErrInvalidAmount, r.Kind, why) }
	switch r.Kind {
	case KindNormal:
		switch {
		case r.Amount == 0:
			return bad("has a zero amount")
		case !r.Version.IsZero() && r.Version != amountKey(r.Amount):
			return bad("has a version that is not its amount's key")
		case r.Covers != 0 || r.Settled || r.Target != 0:
			return bad("carries merge fields")
		}
	case KindSum:
		if err := r.Version.Validate(); err != nil {
			return err
		}
		switch {
		case r.UpdateID != r.Version:
			return bad("updateid differs from its version")
		case r.Covers < 1:
			return bad("covers no rows")
		case r.Target != 0:
			return bad("carries a target")
		}
	case KindTombstone:
		if err := r.Version.Validate(); err != nil {
			return err
		}
		switch {
		case r.Target != KindNormal && r.Target != KindSum:
			return bad("has no N or S target")
		case r.Covers != 0 || r.Settled:
			return bad("carries sum fields")
		}
	default:
		return fmt.Errorf("%w: unknown row kind %d", crdt.ErrCorruptEncoding, byte(r.Kind))
	}
	return nil
}

// Encoding caps and version.
const (
	// FormatVersion is the envelope version MarshalBinary writes.
	// Version 2 lets an N row carry its amount key as version; version 1
	// (no version for N rows) still decodes.
	FormatVersion = 2
	// MaxRowSize is the largest encoded row UnmarshalBinary accepts; a
	// valid row encodes to under 80 bytes.
	MaxRowSize = 256
)

// MarshalBinary encodes r inside the crdt envelope (tag crdt.TagBalanceRow):
//
//	[updateid: bin16, kind: uint, version: nil | bin16, amount: int, covers: int, settled: bool, target: uint]
//
// The version is nil exactly when it is zero (an N row in the format of
// version 1). Deterministic; invalid rows are refused with Validate's error.
func (r Row) MarshalBinary() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r.appendEncoding(make([]byte, 0, r.encodedLen(FormatVersion)), FormatVersion), nil
}

// maxRowLen is the longest encoding of a valid row in a format version below
// 128: the envelope (14 bytes), the array header (1), two bin16 ids (18
// each), kind (1), amount and covers (up to 9 each), settled and target (1
// each).
const maxRowLen = 14 + 1 + 18 + 1 + 18 + 9 + 9 + 1 + 1

// rowEnvelopes holds the envelope of each format version a row is written
// in, as wire.NewEncoder starts it.
var rowEnvelopes = func() (e [FormatVersion + 1][]byte) {
	for v := range e {
		e[v] = wire.AppendEnvelope(nil, crdt.TagBalanceRow, uint64(v))
	}
	return e
}()

// encodedLen is the length of r's encoding in format version (counted on
// the stack); r must be valid.
func (r Row) encodedLen(version uint64) int {
	var buf [maxRowLen]byte
	return len(r.appendEncoding(buf[:0], version))
}

// appendEncoding appends r's encoding in format version to dst, byte for
// byte what wire.Encoder writes for the fields MarshalBinary documents (each
// integer in its smallest msgpack form); r must be valid. It allocates
// nothing when dst has room, so the encoding of a row and its key can share
// one allocation, and a decoded row's canonical form is checked on the
// stack.
func (r Row) appendEncoding(dst []byte, version uint64) []byte {
	if version < uint64(len(rowEnvelopes)) {
		dst = append(dst, rowEnvelopes[version]...)
	} else {
		dst = wire.AppendEnvelope(dst, crdt.TagBalanceRow, version)
	}
	dst = append(dst, msgpcode.FixedArrayLow|7, msgpcode.Bin8, 16)
	dst = append(dst, r.UpdateID[:]...)
	dst = appendUint(dst, uint64(r.Kind))
	if r.Version.IsZero() {
		dst = append(dst, msgpcode.Nil)
	} else {
		dst = append(dst, msgpcode.Bin8, 16)
		dst = append(dst, r.Version[:]...)
	}
	dst = appendInt(dst, r.Amount)
	dst = appendInt(dst, r.Covers)
	if r.Settled {
		dst = append(dst, msgpcode.True)
	} else {
		dst = append(dst, msgpcode.False)
	}
	return appendUint(dst, uint64(r.Target))
}

// appendUint appends v in its smallest msgpack form, as
// msgpack.Encoder.EncodeUint writes it.
func appendUint(dst []byte, v uint64) []byte {
	switch {
	case v <= math.MaxInt8:
		return append(dst, byte(v))
	case v <= math.MaxUint8:
		return append(dst, msgpcode.Uint8, byte(v))
	case v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, msgpcode.Uint16), uint16(v))
	case v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, msgpcode.Uint32), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(dst, msgpcode.Uint64), v)
}

// appendInt appends v in its smallest msgpack form, as
// msgpack.Encoder.EncodeInt writes it (non-negative values as unsigned).
func appendInt(dst []byte, v int64) []byte {
	switch {
	case v >= 0:
		return appendUint(dst, uint64(v))
	case v >= int64(int8(msgpcode.NegFixedNumLow)):
		return append(dst, byte(v))
	case v >= math.MinInt8:
		return append(dst, msgpcode.Int8, byte(v))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(dst, msgpcode.Int16), uint16(v))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(dst, msgpcode.Int32), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(dst, msgpcode.Int64), uint64(v))
}

// UnmarshalBinary decodes MarshalBinary's canonical output, in format
// version 2 or 1 (every N row with a zero version), at most MaxRowSize
// bytes. On error r is unchanged and the error wraps
// crdt.ErrCorruptEncoding, crdt.ErrTooLarge, crdt.ErrTypeMismatch or
// crdt.ErrUnsupportedVersion.
func (r *Row) UnmarshalBinary(data []byte) error {
	if out, ok := decodeCanonical(data); ok {
		*r = out
		return nil
	}
	return r.unmarshal(data)
}

// decodeCanonical decodes data, without a msgpack decoder, when it is the
// canonical encoding of a valid row in format version FormatVersion: the
// form every row a merge reads has. Anything else is left to unmarshal,
// which decodes and checks it field by field (ok false). Both accept the
// same rows: an accepted encoding is the one appendEncoding writes for the
// row, and no two rows share one.
func decodeCanonical(data []byte) (out Row, ok bool) {
	p, ok := bytes.CutPrefix(data, rowEnvelopes[FormatVersion])
	if !ok || len(p) < 19 || p[0] != msgpcode.FixedArrayLow|7 || p[1] != msgpcode.Bin8 || p[2] != 16 {
		return Row{}, false
	}
	out.UpdateID = ID(p[3:19])
	p = p[19:]
	var kind, target uint64
	if kind, p, ok = cutUint(p); !ok || len(p) == 0 || kind > math.MaxUint8 {
		return Row{}, false
	}
	out.Kind = Kind(kind)
	switch {
	case p[0] == msgpcode.Nil:
		p = p[1:]
	case len(p) >= 18 && p[0] == msgpcode.Bin8 && p[1] == 16:
		out.Version, p = ID(p[2:18]), p[18:]
	default:
		return Row{}, false
	}
	if out.Amount, p, ok = cutInt(p); !ok {
		return Row{}, false
	}
	if out.Covers, p, ok = cutInt(p); !ok || len(p) == 0 {
		return Row{}, false
	}
	switch p[0] {
	case msgpcode.True:
		out.Settled = true
	case msgpcode.False:
	default:
		return Row{}, false
	}
	if target, p, ok = cutUint(p[1:]); !ok || len(p) != 0 || target > math.MaxUint8 {
		return Row{}, false
	}
	out.Target = Kind(target)
	if out.Kind != KindNormal && out.Version.IsZero() || out.Validate() != nil {
		return Row{}, false
	}
	var buf [maxRowLen]byte
	return out, bytes.Equal(out.appendEncoding(buf[:0], FormatVersion), data)
}

// cutUint reads a msgpack unsigned integer in a form appendUint writes.
func cutUint(p []byte) (uint64, []byte, bool) {
	if len(p) == 0 {
		return 0, nil, false
	}
	switch c := p[0]; {
	case c <= msgpcode.PosFixedNumHigh:
		return uint64(c), p[1:], true
	case c == msgpcode.Uint8 && len(p) >= 2:
		return uint64(p[1]), p[2:], true
	case c == msgpcode.Uint16 && len(p) >= 3:
		return uint64(binary.BigEndian.Uint16(p[1:])), p[3:], true
	case c == msgpcode.Uint32 && len(p) >= 5:
		return uint64(binary.BigEndian.Uint32(p[1:])), p[5:], true
	case c == msgpcode.Uint64 && len(p) >= 9:
		return binary.BigEndian.Uint64(p[1:]), p[9:], true
	}
	return 0, nil, false
}

// cutInt reads a msgpack integer in a form appendInt writes.
func cutInt(p []byte) (int64, []byte, bool) {
	if len(p) == 0 {
		return 0, nil, false
	}
	switch c := p[0]; {
	case c >= msgpcode.NegFixedNumLow:
		return int64(int8(c)), p[1:], true
	case c == msgpcode.Int8 && len(p) >= 2:
		return int64(int8(p[1])), p[2:], true
	case c == msgpcode.Int16 && len(p) >= 3:
		return int64(int16(binary.BigEndian.Uint16(p[1:]))), p[3:], true
	case c == msgpcode.Int32 && len(p) >= 5:
		return int64(int32(binary.BigEndian.Uint32(p[1:]))), p[5:], true
	case c == msgpcode.Int64 && len(p) >= 9:
		return int64(binary.BigEndian.Uint64(p[1:])), p[9:], true
	}
	u, rest, ok := cutUint(p)
	if !ok || u > math.MaxInt64 {
		return 0, nil, false
	}
	return int64(u), rest, true
}

// unmarshal is UnmarshalBinary's decoder for every accepted format and
// its errors.
func (r *Row) unmarshal(data []byte) error {
	d, format, err := wire.NewDecoder(data, crdt.TagBalanceRow, FormatVersion, MaxRowSize)
	if err != nil {
		return err
	}
	if err := rowlog.Fields(d, 7, "row"); err != nil {
		return err
	}
	var out Row
	if out.UpdateID, err = d.TimeID(); err != nil {
		return err
	}
	k, err := rowlog.Byte(d, "kind")
	if err != nil {
		return err
	}
	out.Kind = Kind(k)
	isNil, err := d.IsNil()
	if err != nil {
		return err
	}
	if !isNil {
		if out.Version, err = d.TimeID(); err != nil {
			return err
		}
	}
	if out.Amount, err = d.Int(); err != nil {
		return err
	}
	if out.Covers, err = d.Int(); err != nil {
		return err
	}
	if out.Settled, err = d.Bool(); err != nil {
		return err
	}
	t, err := rowlog.Byte(d, "target")
	if err != nil {
		return err
	}
	out.Target = Kind(t)
	if err := d.Finish(); err != nil {
		return err
	}
	switch {
	case out.Kind != KindNormal && isNil:
		return fmt.Errorf("%w: %s row without a version", crdt.ErrCorruptEncoding, out.Kind)
	case out.Kind == KindNormal && !isNil && format < 2:
		return fmt.Errorf("%w: N row with a version in format version %d", crdt.ErrCorruptEncoding, format)
	}
	if err := out.Validate(); err != nil {
		return fmt.Errorf("%w: %v", crdt.ErrCorruptEncoding, err)
	}
	// Only the canonical encoding is accepted (smallest integer forms), so
	// equal values always have equal bytes.
	var buf [maxRowLen]byte
	if canon := out.appendEncoding(buf[:0], format); !bytes.Equal(canon, data) {
		return fmt.Errorf("%w: non-canonical encoding", crdt.ErrCorruptEncoding)
	}
	*r = out
	return nil
}

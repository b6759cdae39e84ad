package tally

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/axiomhq/hyperloglog"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/rowlog"
	"github.com/counterkit/counterkit/internal/wire"
)

// DistinctPrecision is the HyperLogLog precision of Distinct: 2^14 registers,
// a standard error of about 0.81%. It is part of the wire format.
const DistinctPrecision = 14

const (
	distinctRegisters = 1 << DistinctPrecision
	// distinctMaxRho is the largest value a register can hold at this
	// precision (64 − p + 1).
	distinctMaxRho = 64 - DistinctPrecision + 1
	// hllHeader is the length of the dense (version 2) header of
	// hyperloglog.Sketch.MarshalBinary: version, p, b, sparse flag and a
	// uint32 register count.
	hllHeader = 8
)

// Distinct estimates the number of distinct items observed, with a
// HyperLogLog sketch from github.com/axiomhq/hyperloglog at precision
// DistinctPrecision.
//
// The sketch is kept in its dense form (one register per bucket), so Combine
// is the register-wise maximum: commutative, associative and idempotent, and
// two Distinct values that saw the same items in any order, split any way,
// are Equal and encode to the same bytes. (The library's sparse form depends
// on insertion and merge order, which a tally written by uncoordinated GCs
// cannot allow.) The encoding lists only the non-zero registers while fewer
// than a quarter are set, so small sketches stay small on the wire; in memory
// a non-empty Distinct takes 16 KiB.
//
// Distinct is an Aggregate; AddString, like Add, panics on a nil pointer.
type Distinct struct {
	sk *hyperloglog.Sketch // nil when empty; always dense when set
}

func newDenseSketch() *hyperloglog.Sketch {
	sk, err := hyperloglog.NewSketch(DistinctPrecision, false)
	if err != nil {
		panic(err) // the precision is a valid constant
	}
	return sk
}

// Add observes item. Items are hashed with the library's MetroHash64.
func (d *Distinct) Add(item []byte) {
	if d.sk == nil {
		d.sk = newDenseSketch()
	}
	d.sk.Insert(item)
}

// AddString observes item.
func (d *Distinct) AddString(item string) { d.Add([]byte(item)) }

// Estimate returns the estimated number of distinct items observed.
func (d *Distinct) Estimate() uint64 {
	if d == nil || d.sk == nil {
		return 0
	}
	return d.sk.Estimate()
}

// Combine sets d to the union of d and other. It never fails.
func (d *Distinct) Combine(other *Distinct) error {
	_ = *d // a nil receiver panics, even with nothing to add
	if other == nil || other.sk == nil || other == d {
		return nil
	}
	if d.sk == nil {
		d.sk = other.sk.Clone()
		return nil
	}
	if err := d.sk.Merge(other.sk); err != nil {
		// Unreachable: both sketches have DistinctPrecision.
		return fmt.Errorf("%w: %v", crdt.ErrTypeMismatch, err)
	}
	return nil
}

// Clone returns a deep copy of d.
func (d *Distinct) Clone() *Distinct {
	if d == nil || d.sk == nil {
		return &Distinct{}
	}
	return &Distinct{sk: d.sk.Clone()}
}

// Equal reports whether d and other have the same registers.
func (d *Distinct) Equal(other *Distinct) bool {
	return bytes.Equal(d.registers(), other.registers())
}

// registers returns a copy of the register array, or nil when no register
// is set.
func (d *Distinct) registers() []byte {
	if d == nil || d.sk == nil {
		return nil
	}
	b, err := d.sk.MarshalBinary()
	if err != nil || len(b) != hllHeader+distinctRegisters || b[3] != 0 {
		panic(fmt.Sprintf("tally: unexpected dense hyperloglog encoding (%d bytes, err %v)", len(b), err))
	}
	if regs := b[hllHeader:]; slices.ContainsFunc(regs, func(r byte) bool { return r != 0 }) {
		return regs
	}
	return nil
}

// Kind returns KindDistinct.
func (*Distinct) Kind() Kind { return KindDistinct }

// String returns "≈N distinct".
func (d *Distinct) String() string { return fmt.Sprintf("≈%d distinct", d.Estimate()) }

func (*Distinct) identity() *Distinct { return new(Distinct) }

func (*Distinct) fits() bool { return true }

// Body: [precision, registers]. registers is a bin that is either the sparse
// list (4 bytes per non-zero register, big-endian index<<8 | value, indexes
// strictly increasing), used exactly when 4·nonzero < 2^p, or all 2^p
// register bytes. Exactly one form is valid for each sketch, so the
// encoding is canonical.
const distinctFields = 2

func (d *Distinct) encodeBody(e *wire.Encoder) {
	regs := d.registers()
	e.ArrayLen(distinctFields)
	e.Uint(DistinctPrecision)
	nonzero := 0
	for _, r := range regs {
		if r != 0 {
			nonzero++
		}
	}
	if 4*nonzero >= distinctRegisters {
		e.Bin(regs)
		return
	}
	sparse := make([]byte, 0, 4*nonzero)
	for i, r := range regs {
		if r != 0 {
			sparse = binary.BigEndian.AppendUint32(sparse, uint32(i)<<8|uint32(r))
		}
	}
	e.Bin(sparse)
}

func (d *Distinct) decodeBody(dec *wire.Decoder) error {
	if err := rowlog.Fields(dec, distinctFields, "distinct"); err != nil {
		return err
	}
	p, err := dec.Uint()
	if err != nil {
		return err
	}
	if p != DistinctPrecision {
		return fmt.Errorf("%w: distinct precision %d, this build reads %d", crdt.ErrCorruptEncoding, p, DistinctPrecision)
	}
	raw, err := dec.Bin(distinctRegisters)
	if err != nil {
		return err
	}
	regs := make([]byte, distinctRegisters)
	nonzero := 0
	switch {
	case len(raw) == distinctRegisters:
		copy(regs, raw)
		for i, r := range regs {
			if r > distinctMaxRho {
				return fmt.Errorf("%w: distinct register %d = %d, max %d", crdt.ErrCorruptEncoding, i, r, distinctMaxRho)
			}
			if r != 0 {
				nonzero++
			}
		}
		if 4*nonzero < distinctRegisters {
			return fmt.Errorf("%w: distinct has %d registers set but uses the dense form", crdt.ErrCorruptEncoding, nonzero)
		}
	case len(raw)%4 == 0:
		last := -1
		for off := 0; off < len(raw); off += 4 {
			v := binary.BigEndian.Uint32(raw[off:])
			i, r := int(v>>8), byte(v)
			switch {
			case i >= distinctRegisters:
				return fmt.Errorf("%w: distinct register index %d out of range", crdt.ErrCorruptEncoding, i)
			case i <= last:
				return fmt.Errorf("%w: distinct register indexes not strictly increasing at %d", crdt.ErrCorruptEncoding, i)
			case r == 0 || r > distinctMaxRho:
				return fmt.Errorf("%w: distinct register %d = %d, want 1..%d", crdt.ErrCorruptEncoding, i, r, distinctMaxRho)
			}
			regs[i] = r
			last = i
		}
		// len(raw) < 2^p here, so 4·nonzero < 2^p: the sparse form was due.
	default:
		return fmt.Errorf("%w: distinct registers of %d bytes", crdt.ErrCorruptEncoding, len(raw))
	}
	if len(raw) == 0 {
		d.sk = nil
		return nil
	}
	dense := make([]byte, hllHeader, hllHeader+distinctRegisters)
	dense[0], dense[1] = 2, DistinctPrecision // version 2, p; b = 0, dense
	binary.BigEndian.PutUint32(dense[4:], distinctRegisters)
	dense = append(dense, regs...)
	sk := newDenseSketch()
	if err := sk.UnmarshalBinary(dense); err != nil {
		return fmt.Errorf("%w: distinct registers: %v", crdt.ErrCorruptEncoding, err)
	}
	d.sk = sk
	return nil
}

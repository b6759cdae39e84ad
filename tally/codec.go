package tally

import (
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/rowlog"
	"github.com/counterkit/counterkit/internal/wire"
)

// Format versions written and read by this build.
const (
	shardVersion = 1
	tallyVersion = 1
)

// MaxEncodedSize is the largest shard or tally encoding a decoder accepts;
// the largest valid one, a dense Distinct, is about 16 KiB.
const MaxEncodedSize = crdt.DefaultMaxEncodedSize

// Shard is one mutator's row: its id, the time after which it never writes
// again, and its full aggregate state.
//
// Encoding (envelope tag crdt.TagTallyShard, version 1):
//
//	[kind: str, mutator: str, expires_at: int (µs since the Unix epoch, > 0), state]
type Shard[A Aggregate[A]] struct {
	Mutator   crdt.ActorID
	ExpiresAt int64 // microseconds since the Unix epoch
	State     A     // nil encodes as the identity
}

// MarshalBinary returns the deterministic encoding of s. It fails, with an
// error wrapping crdt.ErrInvalidActor or crdt.ErrCorruptEncoding, when the
// mutator id is invalid or ExpiresAt is not positive, and with one wrapping
// crdt.ErrOverflow for a state its encoding does not hold.
func (s Shard[A]) MarshalBinary() ([]byte, error) {
	if err := s.Mutator.Validate(); err != nil {
		return nil, err
	}
	if s.ExpiresAt <= 0 {
		return nil, fmt.Errorf("%w: shard expires_at %d is not positive", crdt.ErrCorruptEncoding, s.ExpiresAt)
	}
	e, st, err := begin(crdt.TagTallyShard, shardVersion, 4, s.State)
	if err != nil {
		return nil, err
	}
	e.String(string(s.Mutator))
	e.Int(s.ExpiresAt)
	st.encodeBody(e)
	return e.Bytes()
}

// DecodeShard decodes a shard whose aggregate is of type A. Errors wrap
// crdt.ErrCorruptEncoding, crdt.ErrTooLarge, crdt.ErrUnsupportedVersion or
// crdt.ErrTypeMismatch (not a shard, or of another kind).
func DecodeShard[A Aggregate[A]](data []byte) (Shard[A], error) {
	d, err := open[A](data, crdt.TagTallyShard, shardVersion, "shard", 4)
	if err != nil {
		return Shard[A]{}, err
	}
	var s Shard[A]
	if s.Mutator, err = d.Actor(); err != nil {
		return Shard[A]{}, err
	}
	if s.ExpiresAt, err = d.Int(); err != nil {
		return Shard[A]{}, err
	}
	if s.ExpiresAt <= 0 {
		return Shard[A]{}, fmt.Errorf("%w: shard expires_at %d is not positive", crdt.ErrCorruptEncoding, s.ExpiresAt)
	}
	if s.State, err = decodeState[A](d); err != nil {
		return Shard[A]{}, err
	}
	return s, nil
}

// Tally is the folded part of a counter: the combination of every shard
// whose expires_at is at most FoldedThrough.
//
// Encoding (envelope tag crdt.TagTally, version 1):
//
//	[kind: str, folded_through: int (µs, ≥ 0), state]
type Tally[A Aggregate[A]] struct {
	FoldedThrough int64 // microseconds since the Unix epoch; 0: nothing folded
	State         A     // nil encodes as the identity
}

// MarshalBinary returns the deterministic encoding of t. A negative
// FoldedThrough is an error wrapping crdt.ErrCorruptEncoding, a state its
// encoding does not hold one wrapping crdt.ErrOverflow.
func (t Tally[A]) MarshalBinary() ([]byte, error) {
	if t.FoldedThrough < 0 {
		return nil, fmt.Errorf("%w: tally folded_through %d is negative", crdt.ErrCorruptEncoding, t.FoldedThrough)
	}
	e, st, err := begin(crdt.TagTally, tallyVersion, 3, t.State)
	if err != nil {
		return nil, err
	}
	e.Int(t.FoldedThrough)
	st.encodeBody(e)
	return e.Bytes()
}

// DecodeTally decodes a tally whose aggregate is of type A, with the errors
// of DecodeShard.
func DecodeTally[A Aggregate[A]](data []byte) (Tally[A], error) {
	d, err := open[A](data, crdt.TagTally, tallyVersion, "tally", 3)
	if err != nil {
		return Tally[A]{}, err
	}
	var t Tally[A]
	if t.FoldedThrough, err = d.NonNegInt(); err != nil {
		return Tally[A]{}, err
	}
	if t.State, err = decodeState[A](d); err != nil {
		return Tally[A]{}, err
	}
	return t, nil
}

// begin writes the envelope, the header of an n-field row and the kind of
// st, and returns st, or the identity when st is nil. A state its encoding
// does not hold (a Sum or Stats combined past it) is an error wrapping
// crdt.ErrOverflow.
func begin[A Aggregate[A]](tag crdt.TypeTag, version uint64, n int, st A) (*wire.Encoder, A, error) {
	if isNil(st) {
		st = identity[A]()
	}
	if !st.fits() {
		return nil, st, fmt.Errorf("%w: tally: %s %v does not fit its encoding", crdt.ErrOverflow, st.Kind(), st)
	}
	e := wire.NewEncoder(tag, version)
	e.ArrayLen(n)
	e.String(string(st.Kind()))
	return e, st, nil
}

// open reads what begin writes, refusing another kind than A's.
func open[A Aggregate[A]](data []byte, tag crdt.TypeTag, version uint64, what string, n int) (*wire.Decoder, error) {
	d, _, err := wire.NewDecoder(data, tag, version, MaxEncodedSize)
	if err != nil {
		return nil, err
	}
	if err := rowlog.Fields(d, n, what); err != nil {
		return nil, err
	}
	k, err := d.String(maxKindLen)
	if err != nil {
		return nil, err
	}
	if want := identity[A]().Kind(); Kind(k) != want {
		return nil, fmt.Errorf("%w: aggregate kind %q, want %q", crdt.ErrTypeMismatch, k, want)
	}
	return d, nil
}

func decodeState[A Aggregate[A]](d *wire.Decoder) (A, error) {
	st := identity[A]()
	err := st.decodeBody(d)
	if err == nil {
		err = d.Finish()
	}
	if err != nil {
		var zero A
		return zero, err
	}
	return st, nil
}

// isNil reports whether a is the nil pointer.
func isNil[A Aggregate[A]](a A) bool {
	var zero A
	return any(a) == any(zero)
}

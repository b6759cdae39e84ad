package riaktest

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strings"

	"github.com/counterkit/counterkit/crdt"
)

// vclockMagic is the first byte of every non-empty vclock the double hands
// out. It names this package's format (version 1): clients treat vclocks as
// opaque, so the format belongs to the double alone and is not one of
// counterkit's wire formats.
const vclockMagic = 0xC7

// Decoder caps for vclock bytes. Real Riak prunes vclocks past big_vclock (50
// entries by default); the double never has more entries than vnodes.
const (
	// MaxVClockEntries is the largest number of entries a decoded VClock
	// may hold.
	MaxVClockEntries = 64
	// MaxVnodeIDLen is the longest vnode id, in bytes.
	MaxVnodeIDLen = 64
	// MaxVClockSize is the largest vclock encoding accepted, in bytes.
	MaxVClockSize = 16 << 10
)

// Dot names one write: the actor that coordinated it (a vnode in the
// key's epoch, "vnode-0@1") and that actor's counter after the write;
// every sibling carries the dot of the write that created it. A Dot is a
// plain value, safe to copy and share.
type Dot struct {
	Vnode   string // the actor: the vnode's name, "@" and the key's epoch
	Counter uint64
}

// VClock is a version vector: for each coordinating vnode, how many of its
// writes the holder has seen; the double encodes it into the opaque vclock
// bytes of every response. The zero value (nil) is the empty context, what
// a client sends for an object it never read. It is a plain map and is not
// safe for concurrent mutation.
type VClock map[string]uint64

// Covers reports whether the write named by d is part of the history v
// describes.
func (v VClock) Covers(d Dot) bool { return v[d.Vnode] >= d.Counter }

// Descends reports whether v has seen every write w has seen (v ≥ w).
func (v VClock) Descends(w VClock) bool {
	for id, n := range w {
		if v[id] < n {
			return false
		}
	}
	return true
}

// Join returns the entry-wise maximum of v and w as a new VClock.
func (v VClock) Join(w VClock) VClock {
	out := make(VClock, len(v)+len(w))
	maps.Copy(out, v)
	for id, n := range w {
		if n > out[id] {
			out[id] = n
		}
	}
	return out
}

// Clone returns a copy of v.
func (v VClock) Clone() VClock { return v.Join(nil) }

// Equal reports whether v and w hold the same entries.
func (v VClock) Equal(w VClock) bool { return v.Descends(w) && w.Descends(v) }

// String renders v as {a:1 b:2} in id order.
func (v VClock) String() string {
	s := make([]string, 0, len(v))
	for _, id := range v.ids() {
		s = append(s, fmt.Sprintf("%s:%d", id, v[id]))
	}
	return "{" + strings.Join(s, " ") + "}"
}

func (v VClock) ids() []string { return slices.Sorted(maps.Keys(v)) }

// MarshalBinary encodes v deterministically. The empty vclock encodes as
// no bytes at all, the way Riak clients send "no context"; entries with a
// zero counter are dropped. Any other vclock is
//
//	magic     1 byte, 0xC7
//	count     uvarint, 1..MaxVClockEntries
//	count ×   uvarint id length (1..MaxVnodeIDLen), the id's bytes,
//	          uvarint counter (> 0)
//
// with entries in strictly increasing id order (bytewise) and every uvarint
// in its shortest form, so each vclock has exactly one encoding. Ids must be
// valid actor ids (crdt.ActorID.Validate); an invalid id wraps
// crdt.ErrCorruptEncoding, too many entries crdt.ErrTooLarge.
func (v VClock) MarshalBinary() ([]byte, error) {
	ids := slices.DeleteFunc(v.ids(), func(id string) bool { return v[id] == 0 })
	if len(ids) == 0 {
		return nil, nil
	}
	if len(ids) > MaxVClockEntries {
		return nil, fmt.Errorf("%w: vclock has %d entries, limit %d", crdt.ErrTooLarge, len(ids), MaxVClockEntries)
	}
	b := []byte{vclockMagic}
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		if err := checkVnodeID(id); err != nil {
			return nil, err
		}
		b = binary.AppendUvarint(b, uint64(len(id)))
		b = append(b, id...)
		b = binary.AppendUvarint(b, v[id])
	}
	return b, nil
}

// UnmarshalBinary decodes bytes written by MarshalBinary. Empty input is the
// empty vclock. Anything else must be the one canonical encoding of a
// non-empty vclock (see MarshalBinary): on error the receiver is unchanged
// and the error wraps crdt.ErrCorruptEncoding (a wrong magic byte,
// truncated or trailing bytes, a uvarint not in its shortest form, ids out
// of order or invalid, a zero counter) or crdt.ErrTooLarge (input over
// MaxVClockSize bytes, more than MaxVClockEntries entries, an id over
// MaxVnodeIDLen bytes).
func (v *VClock) UnmarshalBinary(data []byte) error {
	if len(data) == 0 {
		*v = VClock{}
		return nil
	}
	if len(data) > MaxVClockSize {
		return fmt.Errorf("%w: vclock of %d bytes, limit %d", crdt.ErrTooLarge, len(data), MaxVClockSize)
	}
	if data[0] != vclockMagic {
		return fmt.Errorf("%w: not a vclock of this test double (first byte %#x, want %#x)", crdt.ErrCorruptEncoding, data[0], vclockMagic)
	}
	rest := data[1:]
	// uvarint reads one uvarint, which must be complete, fit in 64 bits
	// and be in its shortest form.
	uvarint := func(what string) (uint64, error) {
		x, n := binary.Uvarint(rest)
		switch {
		case n == 0:
			return 0, fmt.Errorf("%w: vclock truncated in %s", crdt.ErrCorruptEncoding, what)
		case n < 0:
			return 0, fmt.Errorf("%w: vclock %s overflows 64 bits", crdt.ErrCorruptEncoding, what)
		case n != (bits.Len64(x|1)+6)/7:
			return 0, fmt.Errorf("%w: vclock %s is not in its shortest form", crdt.ErrCorruptEncoding, what)
		}
		rest = rest[n:]
		return x, nil
	}
	n, err := uvarint("entry count")
	if err != nil {
		return err
	}
	switch {
	case n == 0:
		return fmt.Errorf("%w: empty vclock must be encoded as no bytes", crdt.ErrCorruptEncoding)
	case n > MaxVClockEntries:
		return fmt.Errorf("%w: vclock has %d entries, limit %d", crdt.ErrTooLarge, n, MaxVClockEntries)
	}
	out := make(VClock, n)
	prev := ""
	for i := range int(n) {
		l, err := uvarint("id length")
		if err != nil {
			return err
		}
		switch {
		case l == 0:
			return fmt.Errorf("%w: vclock entry %d has an empty id", crdt.ErrCorruptEncoding, i)
		case l > MaxVnodeIDLen:
			return fmt.Errorf("%w: vclock entry %d has an id of %d bytes, limit %d", crdt.ErrTooLarge, i, l, MaxVnodeIDLen)
		case l > uint64(len(rest)):
			return fmt.Errorf("%w: vclock truncated in entry %d", crdt.ErrCorruptEncoding, i)
		}
		id := string(rest[:l])
		rest = rest[l:]
		if err := checkVnodeID(id); err != nil {
			return err
		}
		if i > 0 && id <= prev {
			return fmt.Errorf("%w: vclock ids not strictly increasing (%q after %q)", crdt.ErrCorruptEncoding, id, prev)
		}
		prev = id
		c, err := uvarint("counter")
		if err != nil {
			return err
		}
		if c == 0 {
			return fmt.Errorf("%w: vclock entry %q has a zero counter", crdt.ErrCorruptEncoding, id)
		}
		out[id] = c
	}
	if len(rest) > 0 {
		return fmt.Errorf("%w: %d trailing bytes after the vclock", crdt.ErrCorruptEncoding, len(rest))
	}
	*v = out
	return nil
}

func checkVnodeID(id string) error {
	if id == "" || len(id) > MaxVnodeIDLen {
		return fmt.Errorf("%w: vnode id of %d bytes (want 1..%d)", crdt.ErrCorruptEncoding, len(id), MaxVnodeIDLen)
	}
	if err := crdt.ActorID(id).Validate(); err != nil {
		return fmt.Errorf("%w: vnode id: %w", crdt.ErrCorruptEncoding, err)
	}
	return nil
}

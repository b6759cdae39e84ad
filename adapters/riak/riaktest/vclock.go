package riaktest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
)

// VClockTag is the envelope tag of the test double's vclock bytes. The tag is
// local to this package: clients treat vclocks as opaque, so the format is
// not part of counterkit's registered wire formats.
const VClockTag crdt.TypeTag = "riaktest.vclock"

// vclockVersion is the only format version this build writes and reads.
const vclockVersion = 1

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

// Dot names one write: the vnode that coordinated it and that vnode's
// counter after the write. Every sibling the double stores carries the dot of
// the write that created it (dotted version vectors, as Riak with
// dvv_enabled=true). A Dot is a plain value, safe to copy and share.
type Dot struct {
	Vnode   string
	Counter uint64
}

// VClock is a version vector: for each coordinating vnode, how many of its
// writes the holder has seen. It is the causal context the double encodes
// into the opaque vclock bytes of every response. The zero value (nil) is the
// empty context, which is what a client sends for an object it never read.
//
// A VClock is a plain map and is not safe for concurrent mutation.
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
	for id, n := range v {
		out[id] = n
	}
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
	var b strings.Builder
	b.WriteByte('{')
	for i, id := range v.ids() {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%d", id, v[id])
	}
	b.WriteByte('}')
	return b.String()
}

func (v VClock) ids() []string {
	ids := make([]string, 0, len(v))
	for id := range v {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// MarshalBinary encodes v deterministically: the counterkit envelope with
// VClockTag, then an array of [vnode, counter] pairs sorted by vnode id.
// The empty vclock encodes as no bytes at all, the way Riak clients send "no
// context". Entries with a zero counter are dropped.
func (v VClock) MarshalBinary() ([]byte, error) {
	ids := make([]string, 0, len(v))
	for _, id := range v.ids() {
		if v[id] != 0 {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if len(ids) > MaxVClockEntries {
		return nil, fmt.Errorf("%w: vclock has %d entries, limit %d", crdt.ErrTooLarge, len(ids), MaxVClockEntries)
	}
	e := wire.NewEncoder(VClockTag, vclockVersion)
	e.ArrayLen(len(ids))
	for _, id := range ids {
		if err := checkVnodeID(id); err != nil {
			return nil, err
		}
		e.ArrayLen(2)
		e.String(id)
		e.Uint(v[id])
	}
	b, err := e.Bytes()
	if err != nil {
		return nil, err
	}
	return slices.Clone(b), nil
}

// UnmarshalBinary decodes bytes written by MarshalBinary. Empty input is the
// empty vclock. Input must be canonical (at least one entry, ids strictly
// increasing, counters positive); on error the receiver is unchanged and the error wraps
// crdt.ErrCorruptEncoding, crdt.ErrTooLarge, crdt.ErrTypeMismatch or
// crdt.ErrUnsupportedVersion.
func (v *VClock) UnmarshalBinary(data []byte) error {
	if len(data) == 0 {
		*v = VClock{}
		return nil
	}
	d, _, err := wire.NewDecoder(data, VClockTag, vclockVersion, MaxVClockSize)
	if err != nil {
		return err
	}
	n, err := d.ArrayLen(MaxVClockEntries)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: empty vclock must be encoded as no bytes", crdt.ErrCorruptEncoding)
	}
	out := make(VClock, n)
	prev := ""
	for i := 0; i < n; i++ {
		m, err := d.ArrayLen(2)
		if err != nil {
			return err
		}
		if m != 2 {
			return fmt.Errorf("%w: vclock entry has %d elements, want 2", crdt.ErrCorruptEncoding, m)
		}
		id, err := d.String(MaxVnodeIDLen)
		if err != nil {
			return err
		}
		if err := checkVnodeID(id); err != nil {
			return err
		}
		if i > 0 && id <= prev {
			return fmt.Errorf("%w: vclock ids not strictly increasing (%q after %q)", crdt.ErrCorruptEncoding, id, prev)
		}
		prev = id
		c, err := d.Uint()
		if err != nil {
			return err
		}
		if c == 0 {
			return fmt.Errorf("%w: vclock entry %q has a zero counter", crdt.ErrCorruptEncoding, id)
		}
		out[id] = c
	}
	if err := d.Finish(); err != nil {
		return err
	}
	*v = out
	return nil
}

func checkVnodeID(id string) error {
	if id == "" || len(id) > MaxVnodeIDLen {
		return fmt.Errorf("%w: vnode id of %d bytes (want 1..%d)", crdt.ErrCorruptEncoding, len(id), MaxVnodeIDLen)
	}
	if err := crdt.ActorID(id).Validate(); err != nil {
		return fmt.Errorf("%w: vnode id: %v", crdt.ErrCorruptEncoding, err)
	}
	return nil
}

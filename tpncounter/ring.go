package tpncounter

import (
	"cmp"
	"slices"
	"strings"
	"unsafe"

	"github.com/counterkit/counterkit/crdt"
)

// item is one transaction in an actor's ring: its amount and tag. Its id
// is named at the same position of entry.idAt, which Apply reads only when
// the table finds the tag (a duplicate check) and which the encoder and the
// housekeeping of contested transactions read.
type item struct {
	amt int64
	tag uint32 // tagOf(hashID(id))
	// multi is the multi record of the transaction when two or more actors
	// hold it, and 0 when this actor is its only holder (the table entry
	// then points at this item).
	multi uint32
}

// entry is one actor's part of a GCounter. Its folded record and its
// history sit one after the other in a ring: the counters head, mid and
// tail (modulo 2^32) number the items, the folded record is [head, mid)
// and the history [mid, tail), oldest first, and item c lives at
// ring[c & mask]. Folding moves mid, forgetting the oldest folded items
// moves head and appending moves tail, so the steady state copies and
// allocates nothing, and an item stays at the position the index points at
// until a rare compaction (a transaction dropped or unfolded, or forgotten
// out of order) or a growth of the ring moves it.
//
// A ring made by Apply has the power-of-two length mask+1. A decoded ring
// is exactly as long as the entry (never longer than mask+1), so that
// decoding allocates no empty slots: its items sit at positions [0, tail)
// and every live counter c has c & mask < len(ring); Apply grows it to the
// full mask+1 before it would append past its end.
//
// Offsets (off) count from head: the folded record is offsets [0, nf) and
// the history [nf, size), where nf = mid - head.
//
// The ids sit in one byte arena, ids: idAt[p] is the offset of the id of
// the item at ring position p in ids, shifted left 8 bits, plus its length
// (crdt.MaxIDLen is 255). A 2-byte id thus costs 4 bytes of idAt and 2 of
// the arena instead of a 16-byte string header. Apply appends to the arena;
// when it is full, the live ids move to its front, or to a new arena of
// twice their size when they fill more than half of it (see compactIDs):
// amortised O(1) per Apply, and nothing allocated in the steady state. So
// an id read from the arena (see id) is only valid until the entry's next
// append: whatever keeps one (a map key, a value returned to the caller, a
// call of Options.TxnTime) copies it.
type entry struct {
	actor crdt.ActorID
	aix   uint32 // index in GCounter.ents while installed
	mask  uint32 // ring positions: item c is at ring[c & mask]
	seq   uint64
	total int64
	// forgot is Entry.Forgot in Unix nanoseconds; 0 for none.
	forgot int64
	ring   []item
	idAt   []uint32 // parallel to ring: offset<<8 | length of the id in ids
	ids    []byte
	// times, parallel to ring once a timed transaction has been applied
	// here (nil before), caches the items' Options.TxnTime in Unix
	// nanoseconds (0: not cached), so that forgetting one does not parse
	// its id again. Only times from this counter's own Apply are cached.
	times           []int64
	head, mid, tail uint32
	// enc caches the entry's encoding (see encoded); nil when unknown. An
	// entry's content changes only with its sequence number (bump) or by
	// replacement, so bump is the one place that drops it.
	enc []byte
	// encBin reports that enc holds a UUID id as 16 bytes (version 3).
	encBin bool
	// retired marks an entry retired by Retire: no history, no folded
	// record, its total what the actor had counted. Its owner's next
	// change makes it live again (bump).
	retired bool
	// retiredAt is a retired entry's retirement time in Unix nanoseconds
	// (RetireAllAt), 0 when unknown (Retire, or read from version 3): an
	// unknown time is never folded (see GCounter.Fold).
	retiredAt int64
}

// bump records a change of the entry by its owner: a new sequence number,
// and a cached encoding that no longer holds.
func (e *entry) bump() {
	e.seq++
	e.enc = nil
	e.retired = false
	e.retiredAt = 0
}

// idBits is the width of an id's length in idAt.
const idBits = 8

// The length of every id fits, and so does the offset of every id of an
// arena (at most 2 x (MaxEntriesPerActor x MaxIDLen + MaxIDLen) bytes).
var _ = [1]struct{}{}[crdt.MaxIDLen>>idBits]
var _ = [1]struct{}{}[(2*(MaxEntriesPerActor+1)*crdt.MaxIDLen)>>(32-idBits)]

// newEntry returns an empty entry whose ring holds n items without growing.
func newEntry(actor crdt.ActorID, n int) *entry { return newExactEntry(actor, ringLen(n), 0) }

// ringLen returns the smallest power of two that is at least n and 2.
func ringLen(n int) int {
	c := 2
	for c < n {
		c *= 2
	}
	return c
}

// newExactEntry returns an empty entry whose ring is exactly n items long
// (see entry), with room for idBytes bytes of ids.
func newExactEntry(actor crdt.ActorID, n, idBytes int) *entry {
	return &entry{actor: actor, mask: uint32(ringLen(n) - 1), ring: make([]item, n), idAt: make([]uint32, n), ids: make([]byte, 0, idBytes)}
}

// id returns the id of the item at ring position p. The string shares the
// arena's bytes: it is valid until the entry's next append (see entry), so
// a caller that keeps it copies it.
func (e *entry) id(p uint32) crdt.TxnID {
	r := e.idAt[p]
	b := e.ids[r>>idBits : r>>idBits+r&(1<<idBits-1)]
	return crdt.TxnID(unsafe.String(unsafe.SliceData(b), len(b)))
}

// setID appends x to the arena as the id of ring position p, first making
// room (compactIDs) when x does not fit.
func (e *entry) setID(p uint32, x crdt.TxnID) {
	if len(e.ids)+len(x) > cap(e.ids) {
		e.compactIDs(len(x))
	}
	e.idAt[p] = uint32(len(e.ids))<<idBits | uint32(len(x))
	e.ids = append(e.ids, x...)
}

// compactIDs makes room for extra more bytes in the arena: it moves the
// live items' ids to its front when they lie in ring order (as Apply lays
// them; a decoded entry's folded ids follow its history's) and take at
// most half of it with extra, and otherwise copies them into a new arena
// with room for as many bytes again plus extra. Moving ids in ring order
// never writes over one not yet moved.
func (e *entry) compactIDs(extra int) {
	live, ordered, next := 0, true, uint32(0)
	for off := uint32(0); off < uint32(e.size()); off++ {
		r := e.idAt[e.pos(off)]
		live += int(r & (1<<idBits - 1))
		ordered = ordered && r>>idBits >= next
		next = r>>idBits + r&(1<<idBits-1)
	}
	ids := e.ids[:0]
	if !ordered || 2*(live+extra) > cap(e.ids) {
		ids = make([]byte, 0, max(2*(live+extra), 32))
	}
	for off := uint32(0); off < uint32(e.size()); off++ {
		p := e.pos(off)
		r := e.idAt[p]
		e.idAt[p] = uint32(len(ids))<<idBits | r&(1<<idBits-1)
		ids = append(ids, e.ids[r>>idBits:r>>idBits+r&(1<<idBits-1)]...)
	}
	e.ids = ids
}

func (e *entry) size() int             { return int(e.tail - e.head) }
func (e *entry) nf() uint32            { return e.mid - e.head }
func (e *entry) pos(off uint32) uint32 { return (e.head + off) & e.mask }

func (e *entry) offOf(p uint32) uint32 { return (p - e.head) & e.mask }

// foldedAt reports whether the item at ring position p is folded.
func (e *entry) foldedAt(p uint32) bool { return e.offOf(p) < e.nf() }

func (e *entry) locAt(p uint32) loc { return e.aix<<posBits | p }

// clone copies e. Its positions are unchanged, so a clone is valid in a
// clone of the counter (GCounter.Clone); swap installs clones from another
// counter afresh.
func (e *entry) clone() *entry {
	c := *e
	c.ring, c.idAt, c.ids, c.times = slices.Clone(e.ring), slices.Clone(e.idAt), slices.Clone(e.ids), slices.Clone(e.times)
	return &c
}

// txns returns the transactions at offsets [from, to).
func (e *entry) txns(from, to uint32) []Txn {
	out := make([]Txn, 0, to-from)
	for off := from; off < to; off++ {
		p := e.pos(off)
		out = append(out, Txn{ID: crdt.TxnID(strings.Clone(string(e.id(p)))), Amount: e.ring[p].amt})
	}
	return out
}

// compareEntries orders two entries of one actor: by seq, then (only when an
// actor has forked, SPEC.md 6.5) by content, so that Merge
// picks the same winner in every order.
func compareEntries(a, b *entry) int {
	if c := cmp.Compare(a.seq, b.seq); c != 0 {
		return c
	}
	// A retirement is written under the sequence number it retired, and
	// wins over the live entry it replaces (see Retire).
	if a.retired != b.retired {
		if a.retired {
			return 1
		}
		return -1
	}
	if c := cmp.Compare(a.total, b.total); c != 0 {
		return c
	}
	if c := cmp.Compare(a.forgot, b.forgot); c != 0 {
		return c
	}
	if a.retired && b.retired {
		// Retirements of one entry by replicas whose clocks differ: the
		// earlier time wins, an unknown time (0) loses to any (SPEC.md
		// 6.10).
		if brokenLaterRetirementWins {
			return cmp.Compare(a.retiredAt, b.retiredAt)
		}
		return cmp.Compare(retiredKey(b.retiredAt), retiredKey(a.retiredAt))
	}
	if c := compareRuns(a, a.nf(), uint32(a.size()), b, b.nf(), uint32(b.size())); c != 0 {
		return c
	}
	return compareRuns(a, 0, a.nf(), b, 0, b.nf())
}

// compareRuns compares a's offsets [af, at) with b's [bf, bt) as sequences
// of (id, amount), like slices.Compare.
func compareRuns(a *entry, af, at uint32, b *entry, bf, bt uint32) int {
	n := min(at-af, bt-bf)
	for i := uint32(0); i < n; i++ {
		ap, bp := a.pos(af+i), b.pos(bf+i)
		if c := cmp.Compare(a.id(ap), b.id(bp)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.ring[ap].amt, b.ring[bp].amt); c != 0 {
			return c
		}
	}
	return cmp.Compare(at-af, bt-bf)
}

// retiredKey orders retirement times for compareEntries: an unknown time
// (0) as the latest.
func retiredKey(at int64) int64 {
	if at == 0 {
		return 1<<63 - 1
	}
	return at
}

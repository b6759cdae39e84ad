package tpncounter

import (
	"cmp"
	"math/bits"
	"slices"
	"strings"
	"unsafe"

	"github.com/counterkit/counterkit/crdt"
)

// item is one transaction in a ring; its id is at the same idAt position.
type item struct {
	amt int64
	tag uint32 // tagOf(hashID(id))
	// multi is the transaction's multi record, 0 when this actor alone holds it.
	multi uint32
}

// entry is one actor's part of a GCounter. Its folded record [head, mid)
// and history [mid, tail), oldest first, share a ring (counters modulo
// 2^32, item c at ring[c & mask]): folding moves mid, forgetting head,
// appending tail, so the steady state copies and allocates nothing, and
// items stay where the index points until a rare compaction or growth.
// Offsets count from head: folded [0, nf), history [nf, size). Apply's
// rings are mask+1 long; a decoded ring only as long as the entry, grown
// before Apply appends past it.
//
// The ids share a byte arena: idAt[p] is offset << 8 | length (4 bytes, not
// a 16-byte string header). A full arena's live ids move to its front, or
// to a new arena twice their size (compactIDs): amortised O(1). So an id
// read from the arena (see id) is valid only until the entry's next
// append: whatever keeps one copies it.
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
	// times, parallel to ring once a timed Apply happened here, caches TxnTime
	// (Unix ns, 0: none) so that forgetting does not parse ids again.
	times           []int64
	head, mid, tail uint32
	// enc caches the encoding (see encoded), nil when unknown; bump drops it.
	enc []byte
	// encBin reports that enc holds a UUID id as 16 bytes (version 3);
	// encText, as decoded, that the input held one as text (version 2).
	encBin, encText bool
	// retired marks an entry Retire made; the actor's next write revives it.
	retired bool
	// retiredAt is the retirement time in Unix nanoseconds, 0 when unknown.
	retiredAt int64
}

// bump records an owner's change: a new seq, and no cached encoding.
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

// ringLen returns the smallest power of two that is at least n and 2.
func ringLen(n int) int { return max(2, 1<<bits.Len(uint(max(n, 1)-1))) }

// newEntry returns an empty entry with an n-item ring and idBytes of arena.
func newEntry(actor crdt.ActorID, n, idBytes int) *entry {
	return &entry{actor: actor, mask: uint32(ringLen(n) - 1), ring: make([]item, n), idAt: make([]uint32, n), ids: make([]byte, 0, idBytes)}
}

// id returns the id at ring position p, aliasing the arena (see entry).
func (e *entry) id(p uint32) crdt.TxnID {
	s, t := idSpan(e.idAt[p])
	b := e.ids[s:t]
	return crdt.TxnID(unsafe.String(unsafe.SliceData(b), len(b)))
}

// setID appends x to the arena as position p's id, compacting when full.
func (e *entry) setID(p uint32, x crdt.TxnID) {
	if len(e.ids)+len(x) > cap(e.ids) {
		e.compactIDs(len(x))
	}
	e.idAt[p] = uint32(len(e.ids))<<idBits | uint32(len(x))
	e.ids = append(e.ids, x...)
}

// compactIDs makes room for extra more bytes in the arena: it moves the
// live ids to its front when they lie in ring order (moving them in order
// overwrites none not yet moved) and fill at most half of it with extra;
// else it copies them to a new arena twice that size.
func (e *entry) compactIDs(extra int) {
	live, ordered, next := 0, true, uint32(0)
	for off := uint32(0); off < uint32(e.size()); off++ {
		s, t := idSpan(e.idAt[e.pos(off)])
		live += int(t - s)
		ordered, next = ordered && s >= next, t
	}
	ids := e.ids[:0]
	if !ordered || 2*(live+extra) > cap(e.ids) {
		ids = make([]byte, 0, max(2*(live+extra), 32))
	}
	for off := uint32(0); off < uint32(e.size()); off++ {
		p := e.pos(off)
		s, t := idSpan(e.idAt[p])
		e.idAt[p] = uint32(len(ids))<<idBits | (t - s)
		ids = append(ids, e.ids[s:t]...)
	}
	e.ids = ids
}

// idSpan returns the arena bytes [s, t) that the idAt value r names.
func idSpan(r uint32) (s, t uint32) { return r >> idBits, r>>idBits + r&(1<<idBits-1) }

func (e *entry) size() int             { return int(e.tail - e.head) }
func (e *entry) nf() uint32            { return e.mid - e.head }
func (e *entry) pos(off uint32) uint32 { return (e.head + off) & e.mask }

func (e *entry) offOf(p uint32) uint32 { return (p - e.head) & e.mask }

// foldedAt reports whether the item at ring position p is folded.
func (e *entry) foldedAt(p uint32) bool { return e.offOf(p) < e.nf() }

func (e *entry) locAt(p uint32) loc { return e.aix<<posBits | p }

// clone copies e, positions unchanged: valid in a clone of the counter.
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

// compareEntries orders two entries of one actor by seq, then (a forked
// actor, SPEC.md 6.5) by content, so Merge's winner is order-independent.
func compareEntries(a, b *entry) int {
	if c := cmp.Compare(a.seq, b.seq); c != 0 {
		return c
	}
	// A retirement, written under the seq it retired, beats that live entry.
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
		// Retirements by replicas whose clocks differ: the earlier time
		// wins, an unknown time (0) loses (SPEC.md 6.10).
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

// compareRuns compares a's [af, at) with b's [bf, bt) like slices.Compare.
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

// retiredKey orders an unknown retirement time (0) as the latest.
func retiredKey(at int64) int64 {
	if at == 0 {
		return 1<<63 - 1
	}
	return at
}

package tpncounter

import (
	"bytes"
	"errors"
	"slices"
	"unsafe"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
)

// MergeBinary merges the state encoded in data into c, with the result and
// errors of decoding data into a Counter with c's Options and merging it
// (on error c is unchanged); but an entry whose encoding equals that of
// c's entry for its actor is skipped undecoded, so a reader that merges
// every state it fetches into one Counter (as the ledger does) decodes
// only what other writers changed. Skipped entries are still read: data
// must be well formed with actors in order (the checks that involve only
// skipped entries are those c already passed). An entry that is c's with
// its oldest transactions gone and new ones appended (a writer's next
// writes: the ledger's common case) is changed in place (see shift).
// Like UnmarshalBinary it refuses a version above the one the input's
// state needs (its one encoding), skipped entries included.
func (c *Counter) MergeBinary(data []byte) error {
	c.link()
	sc := c.merge // made at the first entry c does not hold as it is
	sc.reset()
	defer func() { c.merge.release() }()
	var bases [2][]byte
	halves := [2]*GCounter{&c.p, &c.n}
	fast := true // every changed entry so far is a shift
	r, err := openBodies(data, crdt.TagTPNCounter, 2)
	// Ids go unchecked here: a shift checks its new ones (those it keeps
	// equal c's), and the decoder reads every other changed entry again.
	r.unchecked = true
	if err == nil && r.version < 2 {
		err = errOldFormat
	}
	var e rawEntry
	// need is the version the input's state needs (decodedVersion), from
	// its arrays as read; a skipped entry's is its held encoding's.
	need := uint64(2)
	// cut is the input half's base cutoff: a timed retired entry retired
	// before it is one the base holds, which the decoder refuses.
	var cut int64
	for h := 0; h < 2 && err == nil; h++ {
		cut = 0
		g := halves[h]
		if _, err = r.body(); err != nil {
			break
		}
		for r.more() && err == nil {
			if err = r.next(&e); err != nil {
				break
			}
			need = max(need, shapeVersion[e.shape])
			if e.shape == baseShape {
				cut = e.base.cut
				// A base differing from c's takes part (it may win, see Fold).
				if enc := data[e.start:r.d.Offset()]; !bytes.Equal(enc, g.base.encoded()) {
					bases[h] = enc
				}
				continue
			}
			// An entry starting with c's entry's encoding is it: passed over unread.
			l := g.entries[crdt.ActorID(e.actor)] // no copy of actor
			var held []byte
			if l != nil {
				held = l.encoded()
			} else if _, i, ok := g.locate(string(e.actor)); ok {
				held = g.dorm.rec(i)
			}
			if held != nil && bytes.HasPrefix(data[e.start:], held) {
				// c's entries are all retired after c's cutoff: a timed
				// one needs reading only against a later one.
				if e.shape == timedShape && cut > g.base.cut {
					if err = r.fields(&e); err == nil && e.retiredAt < cut {
						err = errRetiredBeforeBase
					}
				}
				r.d.SkipTo(e.start + len(held))
				if l != nil && l.encBin { // held is l's encoding: see entry.encBin
					need = max(need, 3)
				}
				continue
			}
			if err = r.fields(&e); err != nil {
				break
			}
			if e.shape == timedShape && e.retiredAt < cut {
				err = errRetiredBeforeBase
				break
			}
			if sc == nil {
				sc = new(mergeScratch)
				c.merge = sc
			}
			isShift := false
			switch {
			case fast && e.shape == liveShape && l != nil && !l.retired && e.seq > l.seq:
				isShift, err = sc.readShift(&r, &e, h, g, l)
			case e.shape == liveShape:
				err = r.txns(&sc.list, nil)
			}
			fast = fast && isShift
			if e.shape == liveShape && (sc.list.uuid || sc.list.text) {
				need = max(need, 3) // as decodedVersion: encBin or encText
			}
			if err == nil {
				sc.changed[h] = append(sc.changed[h], data[e.start:r.d.Offset()])
				sc.actors[h] = append(sc.actors[h], e.actor)
			}
		}
	}
	if err == nil {
		err = r.d.Finish()
	}
	if err == nil && r.version != need {
		// Above: not canonical (SPEC.md 6.7); below: an entry of a later
		// version, such as a held one with a 16-byte id under version 2.
		err = errOtherVersion // the decoder's error
	}
	if err != nil {
		// An older format, or input the decoder refuses: decoding reports it.
		o := &Counter{p: GCounter{o: c.p.o}} // c's Options, resolved by link
		if err := o.UnmarshalBinary(data); err != nil {
			return err
		}
		return c.Merge(o)
	}
	if bases[0] == nil && bases[1] == nil && (sc == nil || len(sc.changed[0])+len(sc.changed[1]) == 0) {
		return nil
	}
	if sc == nil { // only a base differs
		sc = new(mergeScratch)
		c.merge = sc
	}
	if fast && bases[0] == nil && bases[1] == nil && c.shiftsFit() {
		c.applyShifts()
		return nil
	}
	return c.mergeChanged(r.version, bases)
}

// mergeChanged decodes the changed entries and differing bases as one state
// (in version's form) and merges it into c.
func (c *Counter) mergeChanged(version uint64, bases [2][]byte) error {
	sc := c.merge
	enc := wire.NewEncoder(crdt.TagTPNCounter, version) // the segments' own form
	enc.ArrayLen(2)
	for h, segs := range sc.changed {
		if bases[h] != nil {
			enc.ArrayLen(len(segs) + 1)
			enc.Raw(bases[h])
		} else {
			enc.ArrayLen(len(segs))
		}
		for _, seg := range segs {
			enc.Raw(seg)
		}
	}
	part, err := enc.Bytes()
	if err != nil {
		return err
	}
	o := &Counter{p: GCounter{o: c.p.o}}
	if err := o.decode(part, false); err != nil {
		return err
	}
	// Keep the decoded entries' encodings, as read, for MarshalBinary.
	block := sc.block()
	for h, g := range [2]*GCounter{&o.p, &o.n} {
		for i, a := range sc.actors[h] {
			if en := g.entries[crdt.ActorID(a)]; en != nil && !en.encText {
				en.enc = block[h][i] // en.encBin as decoded
			}
		}
	}
	return c.Merge(o)
}

// errOldFormat sends version 1 input, not comparable with c's entries, to the decoder.
var errOldFormat = errors.New("tpncounter: version 1 encoding")

// errOtherVersion sends input under a version other than its state's to
// the decoder, which refuses it as unmarshal does (a version above the
// state's is not canonical, one below cannot hold its entries). Were
// MergeBinary's need ever off, the decoder would accept and merge, only
// slower.
var errOtherVersion = errors.New("tpncounter: version other than the state's")

// errRetiredBeforeBase sends input holding a timed retired entry retired
// before its half's base cutoff to the decoder, which refuses it.
var errRetiredBeforeBase = errors.New("tpncounter: an entry retired before the base's cutoff")

// shapeVersion is the version an array of each shape needs (see
// decodedVersion): 4 for a base or a retirement time, 3 for a retired
// entry; a live entry needs 3 only with a UUID id.
var shapeVersion = [...]uint64{badShape: 2, baseShape: FormatVersion, liveShape: 2, retiredShape: 3, timedShape: FormatVersion}

// mergeScratch is MergeBinary's memory, kept in the Counter for reuse; it
// holds nothing of the input between calls (release).
type mergeScratch struct {
	// Per half, the encodings and actors (in data) of the changed entries.
	changed [2][][]byte
	actors  [2][][]byte
	// The shifts found, and the ids and transactions they add.
	shifts []shift
	newIDs []byte
	news   []rawTxn
	// The entry read last (readShift's): list by bodyReader.txns, skim
	// by skimTxns (its ids alias the input).
	list, skim txnList
	tags       []uint32
	ents       [2][]*entry
}

func (sc *mergeScratch) reset() {
	if sc == nil {
		return
	}
	for h := range 2 {
		sc.changed[h], sc.actors[h], sc.ents[h] = sc.changed[h][:0], sc.actors[h][:0], sc.ents[h][:0]
	}
	sc.shifts, sc.newIDs, sc.news, sc.tags = sc.shifts[:0], sc.newIDs[:0], sc.news[:0], sc.tags[:0]
}

// release drops the references to the input and to entries.
func (sc *mergeScratch) release() {
	if sc == nil {
		return
	}
	for h := range 2 {
		clear(sc.changed[h])
		clear(sc.actors[h])
		clear(sc.ents[h])
	}
	clear(sc.shifts)
	sc.skim.ids = nil
}

// block copies the changed encodings into one block, in order, returning each
// copy, so that appendBody copies them as runs (see follows).
func (sc *mergeScratch) block() [2][][]byte {
	block := make([]byte, 0, sc.size())
	var out [2][][]byte
	for h, segs := range sc.changed {
		out[h] = make([][]byte, len(segs))
		for i, seg := range segs {
			start := len(block)
			block = append(block, seg...)
			out[h][i] = block[start:][:len(seg)]
		}
	}
	return out
}

// size returns the bytes of the changed entries' encodings.
func (sc *mergeScratch) size() int {
	n := 0
	for _, segs := range sc.changed {
		for _, seg := range segs {
			n += len(seg)
		}
	}
	return n
}

// A shift is an input entry F for an actor whose live entry L (e) c holds
// with a lower seq, where F holds L's transactions from offset drop on
// (same ids, amounts, order), then new ones no entry of c's half holds.
// Replacing L by F changes only what differs (see applyShift).
type shift struct {
	h      int
	e      *entry
	drop   uint32
	nf, n  uint32 // F's folded record and size
	news   [2]int // F's new transactions: mergeScratch.news[news[0]:news[1]]
	seq    uint64
	total  int64
	forgot int64
	uuid   bool // F's encoding holds a UUID as 16 bytes
}

// readShift reads the lists of f, the input's entry for the actor of l
// (c's live entry in half h, g; after r.fields), and records f as a shift
// when it is one, which it reports; it changes nothing of c. It takes f
// only when its merge can neither fail nor meet another transaction: l's
// items are all solo, the new transactions' ids are valid and g holds
// none of them, and f passes checkCounts (its ids are distinct: l's and
// new ones). shiftsFit checks the shifts together.
func (sc *mergeScratch) readShift(r *bodyReader, f *rawEntry, h int, g *GCounter, l *entry) (bool, error) {
	list := &sc.skim // the common form, its ids read where they are
	from := r.d.Offset()
	if end := skimTxns(r.d.Input(0, from+r.d.Remaining()), from, list); end != 0 {
		r.d.SkipTo(end)
		sc.list.uuid, sc.list.text = false, false // what MergeBinary reads of f's list
	} else {
		list = &sc.list
		if err := r.txns(list, nil); err != nil {
			return false, err
		}
	}
	n := uint32(len(list.items))
	nf := n - uint32(list.nh)
	// at returns f's transaction at offset off, in ring order.
	at := func(off uint32) *rawTxn {
		if off < nf {
			return &list.items[uint32(list.nh)+off]
		}
		return &list.items[off-nf]
	}
	if checkCounts(f, list) != nil || list.text {
		return false, nil // the decoder refuses f, or f is not kept as read: mergeChanged
	}
	nl := uint32(l.size())
	for off := uint32(0); off < nl; off++ {
		if l.ring[l.pos(off)].multi != 0 {
			return false, nil
		}
	}
	drop := nl // l's oldest transactions that f no longer holds
	if n > 0 {
		first := at(0).id(list.ids)
		for off := uint32(0); off < nl; off++ {
			if string(l.id(l.pos(off))) == first {
				drop = off
				break
			}
		}
	}
	kept := nl - drop
	if kept > n {
		return false, nil
	}
	for off := uint32(0); off < kept; off++ {
		p, t := l.pos(drop+off), at(off)
		if l.ring[p].amt != t.amt || string(l.id(p)) != t.id(list.ids) {
			return false, nil
		}
	}
	s := shift{h: h, e: l, drop: drop, nf: nf, n: n, seq: f.seq, total: f.total, forgot: f.forgot, uuid: list.uuid}
	s.news[0] = len(sc.news)
	for off := kept; off < n; off++ {
		t := at(off)
		x := crdt.TxnID(t.id(list.ids))
		hx := hashID(x)
		if crdt.CheckID(string(x)) != "" || g.find(x, hx) != 0 {
			return false, nil
		}
		sc.news = append(sc.news, rawTxn{at: uint32(len(sc.newIDs)), n: t.n, amt: t.amt, tag: tagOf(hx)})
		sc.newIDs = append(sc.newIDs, x...)
	}
	s.news[1] = len(sc.news)
	sc.shifts = append(sc.shifts, s)
	return true, nil
}

// shiftsFit reports whether merging the shifts succeeds: no two add one
// transaction and the size cap holds by Merge's bounds. Otherwise
// MergeBinary merges them as changed entries, which reports what fails.
func (c *Counter) shiftsFit() bool {
	sc := c.merge
	grown := 0
	for _, g := range [2]*GCounter{&c.p, &c.n} {
		grown += baseBound + g.sized + g.grown
	}
	if grown+sc.size() > bodyLimit {
		return false
	}
	for _, t := range sc.news {
		sc.tags = append(sc.tags, t.tag)
	}
	slices.Sort(sc.tags)
	for i := 1; i < len(sc.tags); i++ {
		if sc.tags[i] == sc.tags[i-1] {
			return false // perhaps one transaction twice: Merge sorts it out
		}
	}
	return true
}

// applyShifts replaces each shift's entry in place, as Merge would.
func (c *Counter) applyShifts() {
	sc := c.merge
	halves := [2]*GCounter{&c.p, &c.n}
	block := sc.block()
	for i := range sc.shifts {
		s := &sc.shifts[i]
		enc := block[s.h][len(sc.ents[s.h])]
		g := halves[s.h]
		g.applyShift(s, sc.news[s.news[0]:s.news[1]], sc.newIDs)
		s.e.enc, s.e.encBin = enc, s.uuid
		g.grown += len(enc)
		sc.ents[s.h] = append(sc.ents[s.h], s.e)
	}
	c.p.grown += baseBound
	c.n.grown += baseBound
	c.findCross(sc.ents[0], sc.ents[1])
}

// applyShift makes s.e the entry F that s describes, changing in the index
// only what differs. This is what swap gives: the index and value follow
// from the installed items, through release and install. An item of L
// that F keeps on the same side of the fold boundary, solo throughout
// (readShift), keeps its table entry and contribution, so releasing and
// installing it would change nothing; every other item is released (with
// L's boundaries) or installed (with F's) as swap would. The entry keeps
// its actor index, so the order and cached segments hold.
func (g *GCounter) applyShift(s *shift, news []rawTxn, newIDs []byte) {
	e := s.e
	e.times = nil // as swap: cached under another counter's options, perhaps
	for len(e.ring) != int(e.mask)+1 || int(s.n) > len(e.ring) {
		g.growRing(e) // first, while every item is installed
	}
	nl, nfl := uint32(e.size()), e.nf()
	// L's offsets [lo, hi) change side of the fold boundary.
	lo, hi := max(min(nfl, s.nf+s.drop), s.drop), min(max(nfl, s.nf+s.drop), nl)
	if brokenShiftKeepsSides {
		hi = lo
	}
	for off := uint32(0); off < s.drop; off++ {
		g.release(e, off)
	}
	for off := lo; off < hi; off++ {
		g.release(e, off)
		e.ring[e.pos(off)].multi = notInstalled // so that find and rebuild skip it
	}
	if e.forgot != 0 && e.forgot >= g.horizon {
		g.horizonStale = true
	}
	g.val.Sub(e.total)
	e.head += s.drop
	for _, t := range news {
		p := e.tail & e.mask
		e.ring[p] = item{amt: t.amt, tag: t.tag, multi: notInstalled}
		x := newIDs[t.at : t.at+t.n]
		e.setID(p, crdt.TxnID(unsafe.String(unsafe.SliceData(x), len(x))))
		e.tail++
	}
	e.mid = e.head + s.nf
	e.seq, e.total, e.forgot = s.seq, s.total, s.forgot
	g.val.Add(e.total)
	g.horizon = max(g.horizon, e.forgot)
	for off := lo - s.drop; off < hi-s.drop; off++ {
		g.install(e, off)
	}
	for off := nl - s.drop; off < s.n; off++ {
		g.install(e, off)
	}
}

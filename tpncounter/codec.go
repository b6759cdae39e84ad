package tpncounter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
	"github.com/counterkit/counterkit/internal/idtable"
	"github.com/counterkit/counterkit/internal/wire"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// FormatVersion is the encoding version MarshalBinary writes; SPEC.md 6.7
// gives the layout. MarshalBinary writes the oldest version that expresses the state: 4 for a
// base or a retirement time, 3 for a retired entry or a UUID id (16
// bytes), 2 otherwise; versions 1 (no forgot field) to 4 are read.
// Decoding refuses with crdt.ErrTooLarge more than
// crdt.DefaultMaxEncodedSize bytes, MaxActorsLimit + MaxRetired entries
// in a half (whatever Options.MaxActors), or MaxEntriesPerActor transactions in an
// entry; and with crdt.ErrCorruptEncoding (an *InvariantError for the
// invariants) anything no writer produces. Decoding allocates at most 7
// bytes per input byte plus 280 per actor, 64 per shared transaction and
// 256 KiB for one entry's lists (TestDecodeMemory, TestDecodeAllocation).
const FormatVersion = 4

// MarshalBinary returns the deterministic encoding of g (tag
// crdt.TagTGCounter). Encodings above crdt.DefaultMaxEncodedSize are
// refused (crdt.ErrTooLarge), so every stored state decodes again.
func (g *GCounter) MarshalBinary() ([]byte, error) {
	if g == nil {
		g = new(GCounter)
	}
	return marshal(crdt.TagTGCounter, g)
}

// MarshalBinary is GCounter.MarshalBinary for a Counter (tag crdt.TagTPNCounter).
func (c *Counter) MarshalBinary() ([]byte, error) {
	c = c.orEmpty()
	return marshal(crdt.TagTPNCounter, &c.p, &c.n)
}

// marshal encodes one GCounter body, or a Counter's two, into one allocation
// of the exact size; the version byte is patched in once the bodies decide it.
func marshal(tag crdt.TypeTag, halves ...*GCounter) ([]byte, error) {
	size := 32 + len(halves) - 1 // the envelope and the Counter's array header
	for _, g := range halves {
		size += g.bodySize()
	}
	b := wire.AppendEnvelope(make([]byte, 0, size), tag, 2)
	vpos := len(b) - 1
	if len(halves) == 2 {
		b = wire.AppendArrayHeader(b, 2)
	}
	v := uint64(0)
	for _, g := range halves {
		var hv uint64
		b, hv = g.appendBody(b)
		v = max(v, hv)
	}
	b[vpos] = byte(v)
	return wire.Sized(tag, crdt.DefaultMaxEncodedSize, b, nil)
}

// appendBody appends g's body, makes g.sized exact and returns its version.
func (g *GCounter) appendBody(b []byte) ([]byte, uint64) {
	start := len(b)
	v := uint64(2)
	if g.base.cut != 0 {
		b = wire.AppendArrayHeader(b, g.count()+1)
		b = append(b, g.base.encoded()...)
		v = FormatVersion
	} else {
		b = wire.AppendArrayHeader(b, g.count())
	}
	// Encodings adjacent in memory are copied as one run.
	var run []byte
	for _, sg := range g.segments() {
		enc := sg.enc
		switch {
		case sg.e != nil:
			enc = sg.e.encoded()
			if sg.e.encBin {
				v = max(v, 3)
			}
		case sg.timed:
			v = FormatVersion
		default:
			v = max(v, 3)
		}
		if follows(run, enc) {
			run = run[:len(run)+len(enc)]
			continue
		}
		b = append(b, run...)
		run = enc
	}
	b = append(b, run...)
	g.sized, g.grown = len(b)-start, 0
	return b, v
}

// bodySize returns the size of the body appendBody appends, encoding the
// entries that have no cached encoding.
func (g *GCounter) bodySize() int {
	n, k := 0, g.count()
	if g.base.cut != 0 {
		n, k = len(g.base.encoded()), k+1
	}
	n += wire.ArrayHeaderSize(k)
	for _, sg := range g.segments() {
		if sg.e != nil {
			n += len(sg.e.encoded())
		} else {
			n += len(sg.enc)
		}
	}
	return n
}

// follows reports whether b lies right after a in a's allocation.
func follows(a, b []byte) bool {
	n := len(a)
	return len(b) > 0 && cap(a) > n && &a[:n+1][n] == &b[0]
}

// segment is a live entry (e), or a run of retired ones as one encoding.
type segment struct {
	e   *entry
	enc []byte
	// timed reports a retired entry with a retirement time in enc.
	timed bool
}

// segments returns the entries in actor order as segments, cached until
// order is rebuilt or a retired entry revives (its only change), so encoding
// a state with many retired actors copies whole runs. Retired entries'
// encodings are moved into their run's block, held once.
func (g *GCounter) segments() []segment {
	ents := g.sorted()
	if g.segs != nil {
		return g.segs
	}
	d := &g.dorm
	segs := make([]segment, 0, min(len(ents)+d.n(), 3*g.live()+2))
	k := 0 // the next dormant record
	for i := 0; i < len(ents) || k < d.n(); {
		if k < d.n() && (i == len(ents) || string(d.actor(k)) < string(ents[i].actor)) {
			j := d.n()
			if i < len(ents) {
				j = d.search(string(ents[i].actor))
			}
			segs = append(segs, segment{enc: d.span(k, j), timed: d.timed(k, j)})
			k = j
			continue
		}
		if !ents[i].retired {
			segs = append(segs, segment{e: ents[i]})
			i++
			continue
		}
		j, size, adjacent, timed := i, 0, true, false
		for ; j < len(ents) && ents[j].retired && (k == d.n() || string(ents[j].actor) < string(d.actor(k))); j++ {
			timed = timed || ents[j].retiredAt != 0
			enc := ents[j].encoded()
			adjacent = adjacent && (j == i || follows(ents[j-1].enc, enc))
			size += len(enc)
		}
		if adjacent { // already one block (from an earlier run, or decoded together)
			segs = append(segs, segment{enc: ents[i].enc[:size], timed: timed})
			i = j
			continue
		}
		block := make([]byte, 0, size)
		for ; i < j; i++ {
			at := len(block)
			block = append(block, ents[i].enc...)
			ents[i].enc = block[at:] // cap runs on: see follows
		}
		segs = append(segs, segment{enc: block, timed: timed})
	}
	g.segs = segs
	return segs
}

// encodedSize returns the size of g's body, encoding what is not cached.
func (g *GCounter) encodedSize() int {
	k, n := g.count(), len(g.dorm.enc)
	if g.base.cut != 0 {
		k, n = k+1, n+len(g.base.encoded())
	}
	n += wire.ArrayHeaderSize(k)
	for _, en := range g.sorted() {
		n += len(en.encoded())
	}
	return n
}

// encoded returns the base's encoding, [cutoff, total, forgot].
func (b base) encoded() []byte {
	e := wire.NewValueEncoder()
	e.ArrayLen(baseFields)
	e.Int(b.cut)
	e.Int128(b.total)
	e.Int(b.forgot)
	return encodedBytes(e)
}

// encodedBytes returns e's encoding of an in-memory value (cannot fail).
func encodedBytes(e *wire.Encoder) []byte {
	b, err := e.Bytes()
	if err != nil {
		panic(err)
	}
	return b
}

// encoded returns the entry's encoding, cached until the entry changes.
func (en *entry) encoded() []byte {
	if en.enc != nil {
		return en.enc
	}
	en.encBin = false
	e := wire.NewValueEncoder()
	fields := liveFields(FormatVersion)
	if en.retired {
		fields = retiredFields + b2i(en.retiredAt != 0) // timedRetiredFields with a time
	}
	e.ArrayLen(fields)
	e.String(string(en.actor))
	e.Uint(en.seq)
	e.Int(en.total)
	e.Int(en.forgot)
	if fields == timedRetiredFields {
		e.Int(en.retiredAt)
	}
	nf, n := en.nf(), uint32(en.size())
	for _, part := range [2][2]uint32{{nf, n}, {0, nf}} { // history, then folded record
		if en.retired {
			break // a retired entry has neither
		}
		e.ArrayLen(int(part[1] - part[0]))
		for off := part[0]; off < part[1]; off++ {
			p := en.pos(off)
			e.ArrayLen(2)
			if e.TxnID(string(en.id(p)), true) {
				en.encBin = true
			}
			e.Int(en.ring[p].amt)
		}
	}
	en.enc = encodedBytes(e)
	return en.enc
}

// UnmarshalBinary replaces g with the decoded state, keeping g's Options.
// On error g is unchanged and the error wraps crdt.ErrCorruptEncoding,
// crdt.ErrTooLarge, crdt.ErrTypeMismatch or crdt.ErrUnsupportedVersion.
func (g *GCounter) UnmarshalBinary(data []byte) error {
	g.init()
	n := &GCounter{o: g.o}
	if err := unmarshal(data, crdt.TagTGCounter, true, n); err != nil {
		return err
	}
	*g = *n
	return nil
}

// UnmarshalBinary is GCounter.UnmarshalBinary for a Counter.
func (c *Counter) UnmarshalBinary(data []byte) error {
	return c.decode(data, true)
}

// decode is UnmarshalBinary; canonical false accepts a version above the
// one the state needs (MergeBinary's changed entries, in the whole
// input's version).
func (c *Counter) decode(data []byte, canonical bool) error {
	c.p.init()
	n := &Counter{}
	n.p.o, n.n.o = c.p.o, c.p.o
	if err := unmarshal(data, crdt.TagTPNCounter, canonical, &n.p, &n.n); err != nil {
		return err
	}
	*c = *n
	c.link()
	// Every entry is new: look up the smaller half's ids in the other.
	if c.n.tab.n < c.p.tab.n {
		c.findCross(nil, c.n.ents)
	} else {
		c.findCross(c.p.ents, nil)
	}
	return nil
}

// unmarshal decodes data into the empty halves; the first half's sized bounds
// both re-encoded bodies (data plus version 1 entries' forgot fields).
// canonical refuses a version above the one the encoder writes the state
// in: each state has one encoding.
func unmarshal(data []byte, tag crdt.TypeTag, canonical bool, halves ...*GCounter) error {
	r, err := openBodies(data, tag, len(halves))
	if err != nil {
		return err
	}
	var l txnList
	entries := 0
	for _, g := range halves {
		g.init()
		if err := g.decodeBody(&r, &l); err != nil {
			return err
		}
		entries += g.count()
	}
	halves[0].sized = len(data) + 9*entries
	if err := r.d.Finish(); err != nil {
		return err
	}
	need := uint64(2)
	for _, g := range halves {
		need = max(need, g.decodedVersion())
	}
	if canonical && r.version > need {
		return fmt.Errorf("%w: a state of version %d under version %d (not canonical)", crdt.ErrCorruptEncoding, need, r.version)
	}
	if r.version == 1 {
		// Version 2 adds a forgot field per entry: a version 1 state near
		// the limit may not fit in the form it is written back in.
		if _, err := marshal(tag, halves...); err != nil {
			return fmt.Errorf("%w: the version 1 state's version %d encoding is above the limit (%v)", crdt.ErrTooLarge, need, err)
		}
	}
	return nil
}

// decodedVersion returns the version marshal writes g's body in, for g as
// decoded (its entries' encBin and encText as read): 4 with a base or a
// retirement time, 3 with a retired entry or a UUID id, 2 otherwise (see
// appendBody).
func (g *GCounter) decodedVersion() uint64 {
	d := &g.dorm
	if g.base.cut != 0 || d.n() > 0 && d.timed(0, d.n()) {
		return FormatVersion
	}
	var v uint64 = 2
	if d.n() > 0 {
		v = 3
	}
	for _, en := range g.ents {
		switch {
		case en == nil:
		case en.retired && en.retiredAt != 0:
			return FormatVersion
		case en.retired || en.encBin || en.encText:
			v = 3
		}
	}
	return v
}

// MaxSeq is the largest sequence number decoded: it fits a signed 64-bit integer.
const MaxSeq uint64 = 1<<63 - 1

// EncodedHorizon returns the horizon (Counter.Horizon) of the state data
// encodes, so that a driver can set aside a sibling stamped later than its
// clock allows before merging it. It checks what the decoder's reader
// checks (crdt.ErrCorruptEncoding; a forgot after MaxForgot among it), so
// UnmarshalBinary may still refuse data it accepts.
func EncodedHorizon(data []byte) (time.Time, error) {
	r, err := openBodies(data, crdt.TagTPNCounter, 2)
	if err != nil {
		return time.Time{}, err // the envelope's error, as the decoder reports it
	}
	horizon, err := r.horizon()
	if err != nil {
		if !errors.Is(err, crdt.ErrCorruptEncoding) {
			err = fmt.Errorf("%w: not a well-formed tpncounter encoding: %v", crdt.ErrCorruptEncoding, err)
		}
		return time.Time{}, err
	}
	return timeOf(horizon), nil
}

// horizon reads a Counter's two bodies and returns the latest forgot of any
// entry or base.
func (r *bodyReader) horizon() (int64, error) {
	var e rawEntry
	var l txnList
	horizon := int64(0)
	for h := 0; h < 2; h++ {
		if _, err := r.body(); err != nil {
			return 0, err
		}
		for r.more() {
			if err := r.next(&e); err != nil {
				return 0, err
			}
			if e.shape != baseShape {
				err := r.fields(&e)
				if err == nil && e.shape == liveShape {
					err = r.txns(&l, nil)
				}
				if err != nil {
					return 0, err
				}
			}
			horizon = max(horizon, e.forgot, e.base.forgot)
		}
	}
	return horizon, r.d.Finish()
}

// decodeBody reads a body into the empty receiver, l its scratch memory.
// An id held with different amounts is a conflict, not corruption.
func (g *GCounter) decodeBody(r *bodyReader, l *txnList) error {
	n, err := r.body()
	if err != nil {
		return err
	}
	// Size the actor map and slice once (installDecoded sizes the table).
	n = min(n, r.d.Remaining()/8)
	g.entries = make(map[crdt.ActorID]*entry, n)
	g.ents = make([]*entry, 0, n)
	var seen idSet
	var e rawEntry
	for r.more() {
		if err := r.next(&e); err != nil {
			return err
		}
		if e.shape == baseShape {
			g.useBase(e.base)
			continue
		}
		if err := r.fields(&e); err != nil {
			return err
		}
		if e.shape == timedShape {
			if err := g.checkRetiredAt(e.name(), e.retiredAt); err != nil {
				return err
			}
		}
		if e.retired() {
			// Kept as its encoding (see dormant): the input is canonical.
			g.dorm.add(r.d.Input(e.start, r.d.Offset()))
			g.nretired++
			g.val.Add(e.total)
			g.horizon = max(g.horizon, e.forgot)
			continue
		}
		seen.a = crdt.ActorID(e.actor)
		if err := r.txns(l, &seen); err != nil {
			return err
		}
		if err := checkCounts(&e, l); err != nil {
			return err
		}
		en := l.entry(seen.a)
		en.seq, en.total, en.forgot = e.seq, e.total, e.forgot
		en.encBin, en.encText = l.uuid, l.text // for MergeBinary, which sets enc (see mergeChanged)
		g.attach(en)
	}
	g.installDecoded()
	return nil
}

// useBase sets the base read into g, which has no entries yet.
func (g *GCounter) useBase(b base) {
	g.base = b
	g.val.AddInt128(b.total)
	g.horizon = max(g.horizon, b.forgot)
}

// checkRetiredAt refuses a retirement time no writer produces: 0, after
// MaxForgot, or before the base's cutoff (Fold and Merge remove those).
func (g *GCounter) checkRetiredAt(a crdt.ActorID, at int64) error {
	if at == 0 || at > maxForgotNanos {
		return invariantf(InvRetiredAfterCutoff, "actor %q: retirement time %d ns is not a time in 1970..%s", a, at, MaxForgot.Format(time.RFC3339))
	}
	if at < g.base.cut {
		return invariantf(InvRetiredAfterCutoff, "actor %q: retired at %d ns, before the base's cutoff %d ns: the base holds it", a, at, g.base.cut)
	}
	return nil
}

// txnList is a live entry's transactions as read (bodyReader.txns): the
// history's, then the folded record's, their ids back to back in ids. It
// is scratch memory, reused entry after entry.
type txnList struct {
	ids   []byte
	items []rawTxn
	nh    int  // the history's length
	uuid  bool // an id was read as a 16-byte UUID
	// text: a UUID id was read as text (version 2), which the encoder
	// writes as 16 bytes: the entry's encoding as read is not the encoder's.
	text bool
}

// rawTxn is an input transaction, its id at [at, at+n) of a scratch buffer.
type rawTxn struct {
	at, n uint32
	amt   int64
	tag   uint32
}

// id returns t's id, valid until the buffer ids grows.
func (t *rawTxn) id(ids []byte) string {
	b := ids[t.at : t.at+t.n]
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// entry returns a new entry of actor a holding l's transactions, sized
// exactly: folded record at ring positions [0, nf), history after it.
func (l *txnList) entry(a crdt.ActorID) *entry {
	n := len(l.items)
	nf := n - l.nh
	e := newEntry(a, n, len(l.ids))
	e.ids = append(e.ids, l.ids...)
	for j, t := range l.items {
		p := nf + j // the history's j-th, else the folded record's (j-nh)-th
		if j >= l.nh {
			p = j - l.nh
		}
		e.idAt[p] = t.at<<idBits | t.n
		e.ring[p] = item{amt: t.amt, tag: t.tag}
	}
	e.mid, e.tail = uint32(nf), uint32(n)
	return e
}

// idSet finds an id read twice in actor a's entry: a table of read index + 1.
type idSet struct {
	t table
	a crdt.ActorID
}

// reset empties s for n ids, under the 80% at which it grows, and adds l's
// first k again; with k > 0, only if s is too small for n.
func (s *idSet) reset(n int, l *txnList, k int) {
	c := ringLen((5*n+5)/4 + 1)
	if k > 0 && len(s.t.Slots) >= c {
		return
	}
	if cap(s.t.Slots) < c {
		s.t.Slots = make([]uint64, c)
	}
	s.t = table{Table: idtable.Table{Slots: s.t.Slots[:c]}}
	clear(s.t.Slots)
	for j := range k {
		s.t.add(tableKey(l.items[j].tag, uint32(j+1)))
	}
}

// add records l's j-th id, its last, or refuses it if read before.
func (s *idSet) add(l *txnList, j int) error {
	t := &l.items[j]
	k := tableKey(t.tag, uint32(j+1))
	for i := s.t.Home(k); s.t.Slots[i] != 0; i = s.t.Next(i) {
		if v := s.t.Slots[i]; uint32(v>>32) == t.tag && l.items[uint32(v)-1].id(l.ids) == t.id(l.ids) {
			return fmt.Errorf("%w: actor %q holds transaction %q twice", crdt.ErrCorruptEncoding, s.a, t.id(l.ids))
		}
	}
	s.t.add(k)
	return nil
}

var _ crdt.Codec = (*GCounter)(nil)
var _ crdt.Codec = (*Counter)(nil)

// maxFields caps fixed-shape headers: extra fields are corrupt, not too large.
const maxFields = 1 << 16

// retiredFields and timedRetiredFields: retired entry lengths (versions 3, 4).
const (
	retiredFields      = 4
	timedRetiredFields = 5
)

// liveFields returns a live entry's length: 5 in version 1 (no forgot), else 6.
func liveFields(version uint64) int {
	if version == 1 {
		return 5
	}
	return 6
}

// shape is what an array in a GCounter body is (see FormatVersion).
type shape uint8

const (
	badShape     shape = iota // no array a writer produces
	baseShape                 // [cutoff, total, forgot]: the body's first array, version 4
	liveShape                 // a live entry
	retiredShape              // a retired entry, version 3
	timedShape                // a retired entry with its retirement time, version 4
)

// shapeOf returns the shape of a version's i-th body array, of k fields.
func shapeOf(version uint64, i, k int) shape {
	switch {
	case version >= 4 && i == 0 && k == baseFields:
		return baseShape
	case k == liveFields(version):
		return liveShape
	case version >= 3 && k == retiredFields:
		return retiredShape
	case version >= 4 && k == timedRetiredFields:
		return timedShape
	}
	return badShape
}

// bodyReader reads GCounter bodies one array at a time, the one reader of
// the entry layout: next, fields, then for a live entry txns. It checks,
// in the order the decoder always reported them: shapes; actors valid and
// ascending; 1 <= seq <= MaxSeq; non-negative total, forgot (at most
// MaxForgot) and retirement time; a base cutoff in 1970..MaxForgot; at
// most MaxEntriesPerActor transactions of [valid id, amount > 0]. Checks
// across fields or entries are the decoder's.
type bodyReader struct {
	d       *wire.Decoder
	version uint64
	i, n    int          // the next array of the body, and how many it declares
	first   int          // the index of the body's first entry (1 after a base)
	prev    crdt.ActorID // the previous entry's actor, aliasing the input
	// unchecked: txn leaves ids unchecked, for a reader whose caller
	// checks them or has the decoder read them again (MergeBinary).
	unchecked bool
}

// rawEntry is one array of a body, as far as a bodyReader has read it.
type rawEntry struct {
	shape shape
	start int    // the offset of its encoding in the input
	actor []byte // aliases the input (not set for a base)
	base  base   // a base's fields

	seq                      uint64
	total, forgot, retiredAt int64
}

// retired reports a retired entry, timed or not.
func (e *rawEntry) retired() bool { return e.shape == retiredShape || e.shape == timedShape }

// name returns the actor aliasing the input, for checks and errors only.
func (e *rawEntry) name() crdt.ActorID {
	return crdt.ActorID(unsafe.String(unsafe.SliceData(e.actor), len(e.actor)))
}

// openBodies reads data's envelope and, for a Counter, its body header.
func openBodies(data []byte, tag crdt.TypeTag, halves int) (bodyReader, error) {
	d, version, err := wire.NewDecoder(data, tag, FormatVersion, crdt.DefaultMaxEncodedSize)
	if err != nil {
		return bodyReader{}, err
	}
	if halves == 2 {
		k, err := d.ArrayLen(maxFields)
		if err != nil {
			return bodyReader{}, err
		}
		if k != 2 {
			return bodyReader{}, fmt.Errorf("%w: counter body has %d halves, want 2", crdt.ErrCorruptEncoding, k)
		}
	}
	return bodyReader{d: d, version: version}, nil
}

// body reads the next body's header (at most maxEntries entries, live or
// retired, and a base from version 4) and returns its length.
func (r *bodyReader) body() (int, error) {
	n, err := r.d.ArrayLen(maxEntries + b2i(r.version >= 4)) // and the base
	if err != nil {
		return 0, err
	}
	r.i, r.n, r.first, r.prev = 0, n, 0, ""
	return n, nil
}

func (r *bodyReader) more() bool { return r.i < r.n }

// next reads the next array's header into e: a whole base, or a shape and actor.
func (r *bodyReader) next(e *rawEntry) error {
	*e = rawEntry{start: r.d.Offset()}
	i := r.i
	r.i++
	if i-r.first >= maxEntries { // body allowed one more array for a base
		return fmt.Errorf("%w: a half of more than %d entries", crdt.ErrTooLarge, maxEntries)
	}
	k, err := r.d.ArrayLen(maxFields)
	if err != nil {
		return err
	}
	e.shape = shapeOf(r.version, i, k)
	switch e.shape {
	case baseShape:
		if e.base, err = readBase(r.d); err != nil {
			return err
		}
		r.first = 1
		return nil
	case badShape:
		return fmt.Errorf("%w: entry has %d fields, want %d", crdt.ErrCorruptEncoding, k, liveFields(r.version))
	}
	if e.actor, err = r.d.StringBytes(crdt.MaxIDLen); err != nil {
		return err
	}
	a, prev, skip := e.name(), r.prev, r.first
	if crdt.CheckID(string(a)) != "" {
		return fmt.Errorf("%w: %v", crdt.ErrCorruptEncoding, crdt.ActorID(e.actor).Validate())
	}
	if i > skip && a <= prev {
		return fmt.Errorf("%w: actor %q not in strictly ascending order", crdt.ErrCorruptEncoding, e.actor)
	}
	r.prev = a
	return nil
}

// fields reads an entry's seq, total, forgot and retirement time (after
// next); the decoder, which knows the base, bounds the retirement time.
func (r *bodyReader) fields(e *rawEntry) error {
	d := r.d
	seq, err := d.Uint()
	if err == nil {
		if seq == 0 {
			err = fmt.Errorf("%w: actor %q has sequence number 0", crdt.ErrCorruptEncoding, e.actor)
		}
		if seq > MaxSeq {
			err = fmt.Errorf("%w: actor %q has sequence number %d, above MaxSeq (%d)", crdt.ErrCorruptEncoding, e.actor, seq, MaxSeq)
		}
	}
	if err != nil {
		return err
	}
	e.seq = seq
	if e.total, err = d.NonNegInt(); err != nil {
		return err
	}
	if liveFields(r.version) == 6 { // version 1 has no forgot
		if e.forgot, err = d.NonNegInt(); err != nil {
			return err
		}
	}
	if err := checkForgot(e.name(), e.forgot); err != nil {
		return err
	}
	if e.shape == timedShape {
		if e.retiredAt, err = d.NonNegInt(); err != nil {
			return err
		}
	}
	return nil
}

// txn reads a transaction, appends its id's text to dst (a 16-byte UUID as
// its canonical text), and returns it, whether it was a UUID, and the amount.
func (r *bodyReader) txn(dst []byte) (out []byte, isUUID bool, amt int64, err error) {
	d := r.d
	// Fast path for [fixstr id, amount 1..2^32-1 in smallest form]; anything
	// else, errors included, takes the general path.
	if at, left := d.Offset(), d.Remaining(); left >= 4 {
		b := d.Input(at, at+min(left, 2+31+5))
		if n := int(b[1] & 0x1f); b[0] == 0x92 && b[1]&0xe0 == 0xa0 && 2+n < len(b) {
			if amt, k := wire.SmallUint(b[2+n:]); amt > 0 && (r.unchecked || crdt.CheckID(unsafe.String(unsafe.SliceData(b[2:]), n)) == "") {
				d.SkipTo(at + 2 + n + k)
				return append(dst, b[2:2+n]...), false, amt, nil
			}
		}
	}
	k, err := d.ArrayLen(maxFields)
	if err != nil {
		return dst, false, 0, err
	}
	if k != 2 {
		return dst, false, 0, fmt.Errorf("%w: transaction has %d fields, want 2", crdt.ErrCorruptEncoding, k)
	}
	if out, isUUID, err = d.TxnIDBytes(dst, r.version >= 3); err != nil {
		return dst, false, 0, err
	}
	id := out[len(dst):]
	if !isUUID && !r.unchecked && crdt.CheckID(unsafe.String(unsafe.SliceData(id), len(id))) != "" { // a UUID's canonical text is a valid id
		return dst, false, 0, fmt.Errorf("%w: %v", crdt.ErrCorruptEncoding, crdt.TxnID(id).Validate())
	}
	if amt, err = d.Int(); err != nil {
		return dst, false, 0, err
	}
	if amt <= 0 {
		return dst, false, 0, fmt.Errorf("%w: transaction %q has amount %d, want > 0", crdt.ErrCorruptEncoding, string(id), amt)
	}
	return out, isUUID, amt, nil
}

// minTxnSize is the smallest encoded transaction: fixarray, a fixstr
// header (with at least one byte of id when ids are checked) and a fixint.
const minTxnSize = 3

// txns reads both lists of a live entry (after fields) into l, at most
// MaxEntriesPerActor transactions in all, each id checked against those
// before it when seen is set.
func (r *bodyReader) txns(l *txnList, seen *idSet) error {
	l.ids, l.items, l.nh, l.uuid, l.text = l.ids[:0], l.items[:0], 0, false, false
	d := r.d
	var m, nh int
	var err error
	for part := 0; part < 2; part++ {
		if m, err = d.ArrayLen(MaxEntriesPerActor - nh); err != nil {
			return err
		}
		// Sized for the transactions the remaining bytes can hold, not the
		// header: the decode fails before reading more.
		fit := min(m, d.Remaining()/minTxnSize)
		l.items = slices.Grow(l.items, fit)
		if seen != nil {
			seen.reset(nh+fit, l, nh)
		}
		for j := 0; j < m; j++ {
			at := len(l.ids)
			var amt int64
			var isUUID bool
			if l.ids, isUUID, amt, err = r.txn(l.ids); err != nil {
				return err
			}
			t := rawTxn{at: uint32(at), n: uint32(len(l.ids) - at), amt: amt}
			if _, ok := wire.ParseUUIDText(t.id(l.ids)); ok && !isUUID {
				l.text = true
			}
			if seen != nil {
				t.tag = tagOf(hashID(crdt.TxnID(t.id(l.ids))))
			}
			l.items, l.uuid = append(l.items, t), l.uuid || isUUID
			if seen != nil {
				if err := seen.add(l, len(l.items)-1); err != nil {
					return err
				}
			}
		}
		if part == 0 {
			nh, l.nh = m, m
		}
	}
	return nil
}

// skimTxns reads both lists of a live entry at data[at:] into l, as txns
// does for an entry whose arrays have headers of at most 65535 elements
// and whose transactions all have txn's common form [fixstr id, amount in
// 1..2^32-1 in its smallest form], without copying ids: l.ids is data,
// which l must never append to. It returns the offset after the lists, or
// 0 for any other input, which txns then reads (and refuses when it is
// wrong). Ids go unchecked, as under bodyReader.unchecked; a fixstr id is
// never a UUID's text, so l.uuid and l.text are false.
func skimTxns(data []byte, at int, l *txnList) int {
	l.ids, l.items, l.nh, l.uuid, l.text = data, l.items[:0], 0, false, false
	for part := 0; part < 2; part++ {
		if at >= len(data) {
			return 0
		}
		m, k := int(data[at]&0x0f), 1
		switch c := data[at]; {
		case msgpcode.IsFixedArray(c):
		case c == msgpcode.Array16 && at+3 <= len(data):
			m, k = int(binary.BigEndian.Uint16(data[at+1:])), 3
			if m <= 15 { // not its smallest header
				return 0
			}
		default:
			return 0
		}
		if len(l.items)+m > MaxEntriesPerActor {
			return 0
		}
		at += k
		l.items = slices.Grow(l.items, min(m, (len(data)-at)/minTxnSize))
		for range m {
			b := data[at:]
			if len(b) < 4 || b[0] != 0x92 || b[1]&0xe0 != 0xa0 {
				return 0
			}
			n := int(b[1] & 0x1f)
			if 2+n >= len(b) {
				return 0
			}
			amt, w := wire.SmallUint(b[2+n:])
			if amt <= 0 {
				return 0
			}
			l.items = append(l.items, rawTxn{at: uint32(at + 2), n: uint32(n), amt: amt})
			at += 2 + n + w
		}
		if part == 0 {
			l.nh = m
		}
	}
	return at
}

// readBase reads and checks a base's [cutoff, total, forgot] (after its
// header). The total is an integer, or past int64 a bin of 16 bytes
// (wire.Decoder.Int128, one form per value).
func readBase(d *wire.Decoder) (base, error) {
	var b base
	var err error
	if b.cut, err = d.NonNegInt(); err != nil {
		return b, err
	}
	if b.total, err = d.Int128(); err != nil {
		return b, err
	}
	if b.total.Cmp(exact.Int128{}) < 0 {
		return b, fmt.Errorf("%w: base total %s is negative", crdt.ErrCorruptEncoding, b.total.Big())
	}
	if b.forgot, err = d.NonNegInt(); err != nil {
		return b, err
	}
	if b.cut == 0 || b.cut > maxForgotNanos {
		return b, invariantf(InvBaseCutoff, "base cutoff %d ns is not a time in 1970..%s (a half without a base writes none)", b.cut, MaxForgot.Format(time.RFC3339))
	}
	if err := checkForgot("(base)", b.forgot); err != nil {
		return b, err
	}
	if b.total.Cmp(maxBaseTotal) >= 0 {
		return b, invariantf(InvBaseTotal, "base total %s is not below 2^126 (Fold stops below it)", b.total.Big())
	}
	return b, nil
}

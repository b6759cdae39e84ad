package bounded

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
	"github.com/counterkit/counterkit/internal/wire"
)

// FormatVersion is the format version MarshalBinary writes and the newest
// one UnmarshalBinary reads.
const FormatVersion = 1

// MaxEncodedSize is the largest encoding MarshalBinary writes and
// UnmarshalBinary reads.
const MaxEncodedSize = crdt.DefaultMaxEncodedSize

// MarshalBinary encodes the counter as the crdt envelope
//
//	["bounded", 1, [bound, origin, [entry, ...]]]
//	entry = [actor, seq, credits, debits, asked, [[to, amount], ...], [[txn, amount], ...]]
//
// with entries sorted by actor, the rights an entry gave sorted by
// recipient, and its recent transactions oldest first (a credit's amount
// positive, a debit's negative). origin is "" when bound is 0. Equal
// counters give identical bytes. An encoding above MaxEncodedSize is refused
// with crdt.ErrTooLarge.
func (c *Counter) MarshalBinary() ([]byte, error) {
	actors := c.Actors()
	size := 0
	for _, a := range actors {
		size += len(c.entries[a].enc)
	}
	e := wire.NewEncoder(crdt.TagBounded, FormatVersion)
	e.Grow(size + 16 + crdt.MaxIDLen)
	e.ArrayLen(3)
	e.Int(c.Bound())
	e.String(string(c.Options().Origin))
	e.ArrayLen(len(actors))
	for _, a := range actors {
		e.Raw(c.entries[a].enc) // every installed entry carries its encoding
	}
	b, err := e.Bytes()
	return wire.Sized(crdt.TagBounded, MaxEncodedSize, b, err)
}

// encodeEntry returns the encoding of actor's entry e.
func encodeEntry(actor crdt.ActorID, en *entry) []byte {
	e := wire.NewValueEncoder()
	e.ArrayLen(7)
	e.String(string(actor))
	e.Uint(en.seq)
	e.Int(en.credits)
	e.Int(en.debits)
	e.Int(en.asked)
	e.ArrayLen(len(en.sent))
	for _, g := range en.sent {
		e.ArrayLen(2)
		e.String(string(g.to))
		e.Int(g.amount)
	}
	e.ArrayLen(len(en.recent))
	for _, t := range en.recent {
		e.ArrayLen(2)
		e.String(string(t.ID))
		e.Int(t.Amount)
	}
	b, err := e.Bytes()
	if err != nil {
		panic(err) // writing into a buffer cannot fail
	}
	return b
}

// UnmarshalBinary replaces the counter with the one data encodes, keeping
// the receiver's window. It accepts only the canonical form SPEC.md 13.4
// lays out, and refuses with an *InvariantError a state no actor writing
// serially produces. Errors wrap crdt.ErrCorruptEncoding, ErrTooLarge,
// ErrTypeMismatch or ErrUnsupportedVersion, and leave the receiver
// unchanged.
func (c *Counter) UnmarshalBinary(data []byte) error {
	out, err := decode(data, c.window())
	if err != nil {
		return fmt.Errorf("bounded: decode: %w", err)
	}
	*c = *out
	return nil
}

// Decode returns the counter data encodes (see UnmarshalBinary), with the
// given window (0: DefaultWindow).
func Decode(data []byte, window int) (*Counter, error) {
	o, err := Options{Window: window}.resolved()
	if err != nil {
		return nil, err
	}
	out, err := decode(data, o.Window)
	if err != nil {
		return nil, fmt.Errorf("bounded: decode: %w", err)
	}
	return out, nil
}

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{crdt.ErrCorruptEncoding}, args...)...)
}

func decode(data []byte, window int) (*Counter, error) {
	c, _, err := parse(data, nil)
	if err != nil {
		return nil, err
	}
	c.o.Window = window // the holders index is built when first needed
	return c, nil
}

// mergeEncoded merges the state data encodes into c without decoding the
// entries whose bytes equal c's, setting covered[actor] for every actor
// whose entry in data is at least orig's.
func (c *Counter) mergeEncoded(data []byte, orig map[crdt.ActorID]*entry, covered map[crdt.ActorID]bool) error {
	p, es, err := parse(data, c)
	if err != nil {
		return err
	}
	if err := c.sameConfig(p); err != nil {
		return err
	}
	var win []actorEntry
	for _, ae := range es {
		if prev := orig[ae.a]; prev == nil || prev == ae.e || compareEntries(ae.e, prev) >= 0 {
			covered[ae.a] = true
		}
		if newer(ae.e, c.entries[ae.a]) {
			win = append(win, ae)
		}
	}
	return c.mergeEntries(win)
}

// parse reads an encoding, checked as UnmarshalBinary documents, and
// returns its counter, without its holders index, and its entries by actor. An entry
// whose bytes equal base's encoding of it is not decoded: base's is used.
func parse(data []byte, base *Counter) (*Counter, []actorEntry, error) {
	d, _, err := wire.NewDecoder(data, crdt.TagBounded, FormatVersion, MaxEncodedSize)
	if err != nil {
		return nil, nil, err
	}
	if err := d.Tuple(3, "body"); err != nil {
		return nil, nil, err
	}
	bound, err := d.Int()
	if err != nil {
		return nil, nil, err
	}
	origin, err := d.String(crdt.MaxIDLen)
	if err != nil {
		return nil, nil, err
	}
	o, err := Options{Bound: bound, Origin: crdt.ActorID(origin)}.resolved()
	if err != nil {
		return nil, nil, corruptf("%v", err)
	}
	n, err := d.ArrayLen(MaxMergedActors)
	if err != nil {
		return nil, nil, err
	}
	es := make([]actorEntry, 0, min(n, d.Remaining()/8))
	var sc scratch
	for i := range n {
		pos := len(data) - d.Remaining()
		if err := d.Tuple(7, "entry"); err != nil {
			return nil, nil, fmt.Errorf("entry %d: %w", i, err)
		}
		ab, err := d.StringBytes(crdt.MaxIDLen)
		if err != nil {
			return nil, nil, fmt.Errorf("entry %d: %w", i, err)
		}
		var ae actorEntry
		if mine := base.entryOf(ab); mine != nil && bytes.HasPrefix(data[pos:], mine.enc) {
			ae = actorEntry{crdt.ActorID(ab), mine}
			d.SkipTo(pos + len(mine.enc))
		} else {
			a := crdt.ActorID(ab)
			if err := a.Validate(); err != nil {
				return nil, nil, corruptf("entry %d: %v", i, err)
			}
			e, err := decodeEntry(d, data, a, &sc)
			if err != nil {
				return nil, nil, fmt.Errorf("entry %d: %w", i, err)
			}
			e.enc = bytes.Clone(data[pos : len(data)-d.Remaining()])
			ae = actorEntry{a, e}
		}
		if i > 0 && ae.a <= es[i-1].a {
			return nil, nil, corruptf("entry %d: actor %q after %q: entries must be strictly increasing", i, ae.a, es[i-1].a)
		}
		es = append(es, ae)
	}
	if err := d.Finish(); err != nil {
		return nil, nil, err
	}
	c, err := checkEntries(o, es)
	return c, es, err
}

// entryOf returns c's entry for the actor named by b, or nil.
func (c *Counter) entryOf(b []byte) *entry {
	if c == nil {
		return nil
	}
	return c.entries[crdt.ActorID(b)] // the conversion in an index does not allocate
}

// InvariantError is the decoder's error for a well-formed encoding of a
// state no writer following this package's rules produces. It wraps
// crdt.ErrCorruptEncoding; Invariant names the rule of SPEC.md 13.4.
type InvariantError struct {
	Invariant string // e.g. "value-at-least-bound"
	Detail    string
}

// The invariants the decoder checks beyond the layout (SPEC.md 13.4).
const (
	InvGivenFits         = "given-fits"
	InvValueAtLeastBound = "value-at-least-bound"
	InvRightsNonNegative = "rights-non-negative"
	InvRecentWithinTotal = "recent-within-totals"
	InvSeqCountsWrites   = "seq-counts-writes"
)

func (e *InvariantError) Error() string {
	return fmt.Sprintf("%v: invariant %s: %s", crdt.ErrCorruptEncoding, e.Invariant, e.Detail)
}

// Unwrap returns crdt.ErrCorruptEncoding.
func (e *InvariantError) Unwrap() error { return crdt.ErrCorruptEncoding }

func invariantf(name, format string, args ...any) error {
	return &InvariantError{Invariant: name, Detail: fmt.Sprintf(format, args...)}
}

// checkEntries returns the counter of these entries, without its holders
// index, or
// an *InvariantError when the total an entry gave does not fit in int64,
// the value is below the bound or some actor's rights are below zero.
// Serial writers never produce these: each actor's rights are at least
// what they were when it wrote, and Σ rights = Value − Bound. The value,
// received and rights totals may pass int64 (SPEC.md 13.1).
func checkEntries(o Options, es []actorEntry) (*Counter, error) {
	c := &Counter{o: o, entries: make(map[crdt.ActorID]*entry, len(es)), recv: map[crdt.ActorID]exact.Int128{}}
	for _, ae := range es {
		var given exact.Int128
		for _, g := range ae.e.sent {
			given.Add(g.amount)
		}
		if !fitsInt64(given) {
			return nil, invariantf(InvGivenFits, "rights %q gave in total do not fit in int64", ae.a)
		}
		c.entries[ae.a] = ae.e
		c.count(ae.e, 1)
	}
	if err := c.checkRights(); err != nil {
		return nil, err
	}
	for _, ae := range es {
		if err := checkSeq(ae.a, ae.e); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// checkRights returns an *InvariantError when c's value is below the
// bound or some actor's rights are below zero, the order the decoder
// checks them in: what no serial writers produce, and what a merge of
// states in which one actor forked (wrote two states from one) can.
func (c *Counter) checkRights() error {
	o := c.o
	rights := map[crdt.ActorID]exact.Int128{}
	for a := range c.recv {
		rights[a] = c.rights(a)
	}
	for a := range c.entries {
		rights[a] = c.rights(a)
	}
	if o.Origin != "" {
		rights[o.Origin] = c.rights(o.Origin)
	}
	above := c.value // value − bound
	if above.Sub(o.Bound); above.Clamp() < 0 {
		return invariantf(InvValueAtLeastBound, "value %s is below the bound %d", c.BigValue(), o.Bound)
	}
	var short []crdt.ActorID
	for a, r := range rights {
		if r.Clamp() < 0 {
			short = append(short, a)
		}
	}
	if len(short) > 0 {
		a := slices.Min(short) // the same error for every map order
		return invariantf(InvRightsNonNegative, "rights of %q are %s, below zero: spending the others' rights takes the value below the bound", a, rights[a].Big())
	}
	return nil
}

// checkSeq reports an *InvariantError when e's sequence number is below the
// writes e shows: one per recent transaction and per recipient, one more
// for credits or debits beyond the recent ones, one for a request.
func checkSeq(a crdt.ActorID, e *entry) error {
	writes := uint64(len(e.recent)) + uint64(len(e.sent))
	var cr, db int64 // within credits and debits: decodeEntry checked
	for _, t := range e.recent {
		if t.Amount > 0 {
			cr += t.Amount
		} else {
			db -= t.Amount
		}
	}
	for _, more := range []bool{e.credits > cr, e.debits > db, e.asked > 0} {
		if more {
			writes++
		}
	}
	if e.seq < writes {
		return invariantf(InvSeqCountsWrites, "actor %q: sequence number %d below the %d writes its entry shows", a, e.seq, writes)
	}
	return nil
}

func fitsInt64(a exact.Int128) bool { _, ok := a.Int64(); return ok }

// scratch is the memory decodeEntry reuses from one entry to the next.
type scratch struct {
	spans []span
	seen  map[crdt.TxnID]struct{}
}

// A span is an id's offset and length in an entry's ids.
type span struct{ off, n int }

// decodeEntry reads the rest of actor a's entry, after its actor id; data
// is the decoder's input.
func decodeEntry(d *wire.Decoder, data []byte, a crdt.ActorID, sc *scratch) (*entry, error) {
	var err error
	e := &entry{}
	if e.seq, err = d.Uint(); err != nil {
		return nil, err
	}
	if e.seq == 0 || e.seq > math.MaxInt64 {
		return nil, corruptf("actor %q: sequence number %d outside 1..2^63-1", a, e.seq)
	}
	for _, f := range []*int64{&e.credits, &e.debits, &e.asked} {
		if *f, err = d.NonNegInt(); err != nil {
			return nil, fmt.Errorf("actor %q: %w", a, err)
		}
	}
	ns, err := d.ArrayLen(MaxActors)
	if err != nil {
		return nil, err
	}
	if ns > 0 {
		e.sent = make([]grant, 0, min(ns, d.Remaining()/4))
	}
	for j := range ns {
		if err := d.Tuple(2, "grant"); err != nil {
			return nil, err
		}
		to, err := d.Actor()
		if err != nil {
			return nil, err
		}
		if to == a {
			return nil, corruptf("actor %q gives rights to itself", a)
		}
		if j > 0 && to <= e.sent[j-1].to {
			return nil, corruptf("actor %q: recipient %q after %q: must be strictly increasing", a, to, e.sent[j-1].to)
		}
		amt, err := d.NonNegInt()
		if err != nil {
			return nil, err
		}
		if amt == 0 {
			return nil, corruptf("actor %q gives %q nothing (not canonical)", a, to)
		}
		e.sent = append(e.sent, grant{to, amt})
	}
	nr, err := d.ArrayLen(MaxWindow)
	if err != nil {
		return nil, err
	}
	if nr > 0 {
		e.recent = make([]Txn, 0, min(nr, d.Remaining()/4))
	}
	// The ids are read in place, then made substrings of one copy of the
	// entry's bytes: one allocation for all of them.
	spans := sc.spans[:0]
	defer func() { sc.spans = spans }()
	start := len(data) - d.Remaining()
	var cr, db exact.Int128
	for range nr {
		if err := d.Tuple(2, "transaction"); err != nil {
			return nil, err
		}
		b, err := d.StringBytes(crdt.MaxIDLen)
		if err != nil {
			return nil, err
		}
		spans = append(spans, span{len(data) - d.Remaining() - len(b) - start, len(b)})
		amt, err := d.Int()
		if err != nil {
			return nil, err
		}
		if amt == 0 || amt == math.MinInt64 {
			return nil, corruptf("actor %q: transaction %d has amount %d", a, len(spans), amt)
		}
		if amt > 0 {
			cr.Add(amt)
		} else {
			db.Sub(amt)
		}
		e.recent = append(e.recent, Txn{Amount: amt})
	}
	ids := string(data[start : len(data)-d.Remaining()])
	for i, sp := range spans {
		id := crdt.TxnID(ids[sp.off : sp.off+sp.n])
		if err := id.Validate(); err != nil {
			return nil, corruptf("actor %q: %v", a, err)
		}
		e.recent[i].ID = id
	}
	if dup := duplicateID(e.recent, &sc.seen); dup != "" {
		return nil, corruptf("actor %q holds transaction %q twice", a, dup)
	}
	cr.Sub(e.credits)
	db.Sub(e.debits)
	if v, _ := cr.Int64(); v > 0 || !fitsInt64(cr) {
		return nil, invariantf(InvRecentWithinTotal, "actor %q: recent credits exceed its credits", a)
	}
	if v, _ := db.Int64(); v > 0 || !fitsInt64(db) {
		return nil, invariantf(InvRecentWithinTotal, "actor %q: recent debits exceed its debits", a)
	}
	return e, nil
}

// duplicateID returns an id held twice in ts, or "", using *seen (made
// when nil) as scratch.
func duplicateID(ts []Txn, seen *map[crdt.TxnID]struct{}) crdt.TxnID {
	if len(ts) <= 64 {
		for i := range ts {
			for j := i + 1; j < len(ts); j++ {
				if ts[i].ID == ts[j].ID {
					return ts[i].ID
				}
			}
		}
		return ""
	}
	if *seen == nil {
		*seen = make(map[crdt.TxnID]struct{}, MaxWindow)
	}
	m := *seen
	defer clear(m)
	for _, t := range ts {
		if _, ok := m[t.ID]; ok {
			return t.ID
		}
		m[t.ID] = struct{}{}
	}
	return ""
}

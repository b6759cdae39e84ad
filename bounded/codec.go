package bounded

import (
	"fmt"
	"math"

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
	e := wire.NewEncoder(crdt.TagBounded, FormatVersion)
	e.ArrayLen(3)
	e.Int(c.Bound())
	e.String(string(c.Options().Origin))
	actors := c.Actors()
	e.ArrayLen(len(actors))
	for _, a := range actors {
		en := c.entries[a]
		e.ArrayLen(7)
		e.String(string(a))
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
	}
	b, err := e.Bytes()
	if err != nil {
		return nil, err
	}
	if len(b) > MaxEncodedSize {
		return nil, fmt.Errorf("%w: bounded encoding of %d bytes, limit %d", crdt.ErrTooLarge, len(b), MaxEncodedSize)
	}
	return b, nil
}

// UnmarshalBinary replaces the counter with the one data encodes. It accepts
// only the canonical form: bound ≤ 0 with an origin exactly when it is
// negative; entries strictly increasing by actor, at most MaxActors; seq ≥
// 1; credits, debits and asked ≥ 0; recipients strictly increasing, never
// the entry's own actor, amounts > 0; at most MaxWindow recent transactions,
// distinct within the entry, amounts neither 0 nor math.MinInt64, whose
// credits and debits are within the entry's totals; the value and every
// actor's rights and received total within int64; no trailing bytes. Errors
// wrap crdt.ErrCorruptEncoding, ErrTooLarge, ErrTypeMismatch or
// ErrUnsupportedVersion, and leave the receiver unchanged. The window of
// the receiver is kept.
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
	if window < 0 || window > MaxWindow {
		return nil, fmt.Errorf("%w: Window %d outside 0..%d", crdt.ErrInvalidConfig, window, MaxWindow)
	}
	if window == 0 {
		window = DefaultWindow
	}
	out, err := decode(data, window)
	if err != nil {
		return nil, fmt.Errorf("bounded: decode: %w", err)
	}
	return out, nil
}

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{crdt.ErrCorruptEncoding}, args...)...)
}

func decode(data []byte, window int) (*Counter, error) {
	d, _, err := wire.NewDecoder(data, crdt.TagBounded, FormatVersion, MaxEncodedSize)
	if err != nil {
		return nil, err
	}
	if err := d.Tuple(3, "body"); err != nil {
		return nil, err
	}
	bound, err := d.Int()
	if err != nil {
		return nil, err
	}
	origin, err := d.String(crdt.MaxIDLen)
	if err != nil {
		return nil, err
	}
	o, err := Options{Bound: bound, Origin: crdt.ActorID(origin), Window: window}.resolved()
	if err != nil {
		return nil, corruptf("%v", err)
	}
	c := &Counter{o: o}
	n, err := d.ArrayLen(MaxActors)
	if err != nil {
		return nil, err
	}
	var prev crdt.ActorID
	for i := range n {
		a, e, err := decodeEntry(d)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		if i > 0 && a <= prev {
			return nil, corruptf("entry %d: actor %q after %q: entries must be strictly increasing", i, a, prev)
		}
		prev = a
		c.install(a, e)
	}
	if err := d.Finish(); err != nil {
		return nil, err
	}
	if err := c.checkActors(c.Actors()); err != nil {
		return nil, corruptf("%v", err)
	}
	for a := range c.recv {
		if _, ok := c.recv[a].Int64(); !ok {
			return nil, corruptf("rights received by %q do not fit in int64", a)
		}
		if r := c.rights(a); !fitsInt64(r) {
			return nil, corruptf("rights of %q do not fit in int64", a)
		}
	}
	return c, nil
}

func fitsInt64(a exact.Int128) bool { _, ok := a.Int64(); return ok }

func decodeEntry(d *wire.Decoder) (crdt.ActorID, *entry, error) {
	if err := d.Tuple(7, "entry"); err != nil {
		return "", nil, err
	}
	a, err := d.Actor()
	if err != nil {
		return "", nil, err
	}
	e := &entry{}
	if e.seq, err = d.Uint(); err != nil {
		return "", nil, err
	}
	if e.seq == 0 || e.seq > math.MaxInt64 {
		return "", nil, corruptf("actor %q: sequence number %d outside 1..2^63-1", a, e.seq)
	}
	for _, f := range []*int64{&e.credits, &e.debits, &e.asked} {
		if *f, err = d.NonNegInt(); err != nil {
			return "", nil, fmt.Errorf("actor %q: %w", a, err)
		}
	}
	ns, err := d.ArrayLen(MaxActors)
	if err != nil {
		return "", nil, err
	}
	if ns > 0 {
		e.sent = make([]grant, 0, min(ns, d.Remaining()/4))
	}
	for j := range ns {
		if err := d.Tuple(2, "grant"); err != nil {
			return "", nil, err
		}
		to, err := d.Actor()
		if err != nil {
			return "", nil, err
		}
		if to == a {
			return "", nil, corruptf("actor %q gives rights to itself", a)
		}
		if j > 0 && to <= e.sent[j-1].to {
			return "", nil, corruptf("actor %q: recipient %q after %q: must be strictly increasing", a, to, e.sent[j-1].to)
		}
		amt, err := d.NonNegInt()
		if err != nil {
			return "", nil, err
		}
		if amt == 0 {
			return "", nil, corruptf("actor %q gives %q nothing (not canonical)", a, to)
		}
		e.sent = append(e.sent, grant{to, amt})
	}
	nr, err := d.ArrayLen(MaxWindow)
	if err != nil {
		return "", nil, err
	}
	if nr > 0 {
		e.recent = make([]Txn, 0, min(nr, d.Remaining()/4))
	}
	seen := make(map[crdt.TxnID]struct{}, nr)
	var cr, db exact.Int128
	for range nr {
		if err := d.Tuple(2, "transaction"); err != nil {
			return "", nil, err
		}
		id, err := d.Txn()
		if err != nil {
			return "", nil, err
		}
		if _, dup := seen[id]; dup {
			return "", nil, corruptf("actor %q holds transaction %q twice", a, id)
		}
		seen[id] = struct{}{}
		amt, err := d.Int()
		if err != nil {
			return "", nil, err
		}
		if amt == 0 || amt == math.MinInt64 {
			return "", nil, corruptf("actor %q: transaction %q has amount %d", a, id, amt)
		}
		if amt > 0 {
			cr.Add(amt)
		} else {
			db.Sub(amt)
		}
		e.recent = append(e.recent, Txn{id, amt})
	}
	cr.Sub(e.credits)
	db.Sub(e.debits)
	if v, _ := cr.Int64(); v > 0 || !fitsInt64(cr) {
		return "", nil, corruptf("actor %q: recent credits exceed its credits", a)
	}
	if v, _ := db.Int64(); v > 0 || !fitsInt64(db) {
		return "", nil, corruptf("actor %q: recent debits exceed its debits", a)
	}
	return a, e, nil
}

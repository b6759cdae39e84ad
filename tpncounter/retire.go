package tpncounter

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
)

// MaxRetired is a half's room for entries beyond MaxActorsLimit: Merge and
// the decoder refuse a half of more than MaxActorsLimit + MaxRetired
// entries, live or retired (crdt.ErrTooLarge), a bound on memory that
// Retire never passes (it keeps the count). Options.MaxActors bounds only
// Apply, so the union of siblings each within it stays readable (SPEC.md 6.5).
const MaxRetired = 1 << 16

var maxEntries = MaxActorsLimit + MaxRetired // a var for TestModelGCounterMergeUndo

// Retire replaces actor's live entry by a retired one with its seq and, as
// its total, everything it counted, so that the state stops carrying an
// actor that no longer writes; the value does not change. Any replica may
// retire any actor; it reports whether it did. It declines while another
// actor holds one of actor's transactions, unless the copy that counts is
// another's folded one (actor's copy leaves uncounted). Retiring forgets
// the transactions, so retire only actors idle longer than any retry, once
// every state holding them is merged (SPEC.md 6.10). Retired entries do
// not count against MaxActors.
func (c *Counter) Retire(actor crdt.ActorID) (bool, error) {
	return c.RetireAll(actor)
}

// RetireAll retires actors' live entries in both halves together, all or
// none (false), as Retire does one; a transaction only they hold is
// counted once, in its owner's retired total, so actors sharing
// transactions only among themselves retire together where Retire declines
// each. It declines when an actor outside actors holds one of their
// transactions or one is in both halves; actors with no live entry are
// passed over.
func (c *Counter) RetireAll(actors ...crdt.ActorID) (bool, error) {
	c.link()
	return retireHalves(0, nil, actors, &c.p, &c.n)
}

// Retire is Counter.Retire for one GCounter.
func (g *GCounter) Retire(actor crdt.ActorID) (bool, error) {
	g.init()
	return retireHalves(0, nil, []crdt.ActorID{actor}, g)
}

// Seqs returns actor's seq in each half (credits, debits; 0 for none).
func (c *Counter) Seqs(actor crdt.ActorID) (seqs [2]uint64) {
	c = c.orEmpty()
	c.link()
	for h, g := range [2]*GCounter{&c.p, &c.n} {
		if e := g.peek(actor); e != nil {
			seqs[h] = e.seq
		}
	}
	return seqs
}

// retireHalves retires actors' live entries in every half, all or none;
// the copies of late that one entry alone holds leave uncounted.
func retireHalves(at int64, late map[crdt.TxnID]bool, actors []crdt.ActorID, halves ...*GCounter) (bool, error) {
	group := make(map[crdt.ActorID]bool, len(actors))
	for _, a := range actors {
		if err := a.Validate(); err != nil {
			return false, err
		}
		group[a] = true
	}
	if len(actors) == 1 {
		group = nil // alone: no transaction may be shared
	}
	type swap struct {
		g        *GCounter
		actor    crdt.ActorID
		from, to *entry
	}
	var swaps []swap
	for _, actor := range actors {
		for _, g := range halves {
			e := g.entries[actor]
			if e == nil || e.retired || slices.ContainsFunc(swaps, func(s swap) bool { return s.from == e }) {
				continue
			}
			r, ok, err := g.retired(e, group, late, at)
			if err != nil || !ok {
				return false, err
			}
			swaps = append(swaps, swap{g, actor, e, r})
		}
	}
	for _, s := range swaps {
		s.g.swap(s.actor, s.from, s.to)
		s.g.grown += changeBound
	}
	return len(swaps) > 0, nil
}

// retired returns the retired entry that replaces e (total: what e counts,
// see contrib, less the copies of late only e holds; retirement time at,
// 0 for none, not before the base's cutoff), or false when an actor
// outside group (any, for a nil group) in either half holds one of e's
// transactions.
func (g *GCounter) retired(e *entry, group map[crdt.ActorID]bool, late map[crdt.TxnID]bool, at int64) (*entry, bool, error) {
	var total exact.Int128
	total.Add(e.total)
	forgot := e.forgot
	for off := uint32(0); off < uint32(e.size()); off++ {
		r := g.refAt(e, off)
		q := e.pos(off)
		id := e.id(q)
		owns := true
		h, f := g.counts(r)
		if h+f > 1 && !brokenRetireShared {
			rec := &g.multi[r]
			owns = rec.own == e.locAt(q)
			if owns || rec.nfold == 0 {
				// The counting copy leaves with e, or is in a history whose compaction drops
				// the others: every other holder must go too, or its copy would count again.
				for _, l := range rec.holders {
					if he, _ := g.itemOf(l); he != e && !group[he.actor] {
						return nil, false, nil
					}
				}
			}
			// Else the counting copy is folded by another actor, which
			// keeps it while e holds one: e's copy leaves uncounted.
		}
		if g.twin != nil && g.twin.get(id) != 0 && !brokenRetireShared {
			return nil, false, nil
		}
		if h+f == 1 && late[crdt.TxnID(id)] {
			owns = false // counted elsewhere: its copy leaves uncounted
		}
		switch {
		case off >= e.nf() && owns:
			total.Add(e.ring[q].amt) // its history copy counts
		case off < e.nf() && !owns:
			total.Sub(e.ring[q].amt) // in its total, but another copy counts
		}
		if g.o.TxnTime != nil {
			forgot = max(forgot, g.timeAt(e, q))
		}
	}
	t, ok := total.Int64()
	if !ok || t < 0 {
		return nil, false, fmt.Errorf("%w: retiring actor %q", crdt.ErrOverflow, e.actor)
	}
	r := newEntry(e.actor, 0, 0) // no history: its ring grows if its actor writes again
	r.seq, r.total, r.forgot, r.retired = e.seq, t, forgot, true
	if at != 0 {
		r.retiredAt = max(at, g.base.cut)
	}
	return r, true, nil
}

// LiveActors yields every actor with a live entry in either half, with a
// version that changes whenever its entries do (the sum of their sequence
// numbers), in no particular order: what a replica watches to tell an
// actor that has stopped writing (see Retire).
func (c *Counter) LiveActors() iter.Seq2[crdt.ActorID, uint64] {
	c = c.orEmpty()
	return func(yield func(crdt.ActorID, uint64) bool) {
		c.link()
		for h, g := range [2]*GCounter{&c.p, &c.n} {
			for a := range g.entries {
				if h == 1 && c.p.entries[a] != nil {
					continue // the credit half's walk has it
				}
				if v, live, _ := c.lookup(string(a)); live && !yield(a, v) {
					return
				}
			}
		}
	}
}

// Version returns the sum of actor's sequence numbers in both halves (0 for
// none): every change raises it, so a ledger compares it to tell whether a
// state includes a given write of the actor.
func (c *Counter) Version(actor crdt.ActorID) uint64 {
	c = c.orEmpty()
	c.link()
	v, _, _ := c.lookup(string(actor))
	return v
}

// lookup returns actor's Version, whether it is live in a half, and whether
// a half holds it.
func (c *Counter) lookup(actor string) (v uint64, live, ok bool) {
	for _, g := range [2]*GCounter{&c.p, &c.n} {
		e, i, held := g.locate(actor)
		switch {
		case e != nil:
			v, live = v+e.seq, live || !e.retired
		case held:
			seq, _, _, _ := g.dorm.fields(i)
			v += seq
		}
		ok = ok || held
	}
	return v, live, ok
}

// Ceded returns the transactions whose copy in actor's live entries does
// not count, each with the copy that does (Owner), which actor's next
// compaction drops or unfolds (SPEC.md 6.4); empty and free unless two
// actors hold one transaction.
func (c *Counter) Ceded(actor crdt.ActorID) map[crdt.TxnID]Copy {
	c = c.orEmpty()
	c.link()
	var out map[crdt.TxnID]Copy
	for _, g := range [2]*GCounter{&c.p, &c.n} {
		e := g.entries[actor]
		if e == nil || e.retired || (g.nmulti == 0 && len(c.cross) == 0) {
			continue
		}
		for off := uint32(0); off < uint32(e.size()); off++ {
			q := e.pos(off)
			x := e.id(q)
			if e.ring[q].multi == 0 {
				if _, both := c.cross[x]; !both {
					continue
				}
			}
			if o, ok := owner(&c.p, &c.n, x); ok && o.Actor != actor {
				if out == nil {
					out = map[crdt.TxnID]Copy{}
				}
				out[crdt.TxnID(strings.Clone(string(x)))] = o
			}
		}
	}
	return out
}

// Transactions yields actor's live transactions with signed amounts (debits
// negative): what retiring the actor would forget.
func (c *Counter) Transactions(actor crdt.ActorID) iter.Seq2[crdt.TxnID, int64] {
	c = c.orEmpty()
	return func(yield func(crdt.TxnID, int64) bool) {
		c.link()
		for i, g := range [2]*GCounter{&c.p, &c.n} {
			e := g.entries[actor]
			if e == nil || e.retired {
				continue
			}
			for off := uint32(0); off < uint32(e.size()); off++ {
				q := e.pos(off)
				amt := e.ring[q].amt
				if i == 1 {
					amt = -amt
				}
				if !yield(crdt.TxnID(strings.Clone(string(e.id(q)))), amt) {
					return
				}
			}
		}
	}
}

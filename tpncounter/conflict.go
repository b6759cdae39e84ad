package tpncounter

import (
	"cmp"
	"slices"
	"strings"

	"github.com/counterkit/counterkit/crdt"
)

// Copy is one actor's copy of a transaction.
type Copy struct {
	Actor crdt.ActorID
	// Amount is signed in a Counter, a magnitude in a GCounter.
	Amount int64
	// Folded reports whether the actor has folded the copy into its total.
	Folded bool
}

// Conflict is an id held with several amounts (or as credit and debit) by
// writers that could not see each other; one copy counts, the owner's.
type Conflict struct {
	ID crdt.TxnID
	// Counted is the copy that counts: the owner's (see Counter.Owner).
	Counted Copy
	// Copies lists every copy by actor (a Counter's credits first).
	Copies []Copy
}

// ownerCopy returns the owner's copy of r's transaction.
func (g *GCounter) ownerCopy(r ref, sign int64) Copy {
	oe, op := g.owner(r)
	return Copy{Actor: oe.actor, Amount: sign * oe.ring[op].amt, Folded: oe.foldedAt(op)}
}

// copies returns every holder's copy of r's transaction, sorted by actor.
func (g *GCounter) copies(r ref, sign int64) (all []Copy) {
	if r&soloBit != 0 {
		return []Copy{g.ownerCopy(r, sign)}
	}
	for _, l := range g.multi[r].holders {
		e, p := g.itemOf(l)
		all = append(all, Copy{Actor: e.actor, Amount: sign * e.ring[p].amt, Folded: e.foldedAt(p)})
	}
	slices.SortFunc(all, func(a, b Copy) int { return cmp.Compare(a.Actor, b.Actor) })
	return all
}

// Conflicts lists the ids held with several amounts, sorted, with every copy
// and the counting one; empty unless writers reused an id.
func (g *GCounter) Conflicts() []Conflict {
	if g == nil {
		return nil
	}
	return conflicts(g, nil)
}

// conflicts lists ids held with several amounts or in both halves.
func conflicts(p, n *GCounter) []Conflict {
	byID := map[crdt.TxnID]bool{}
	for _, g := range [2]*GCounter{p, n} {
		for m := 1; g != nil && m < len(g.multi); m++ {
			rec := &g.multi[m]
			for _, l := range rec.holders {
				if e, q := g.itemOf(l); e.ring[q].amt != g.amtOf(uint32(m)) {
					byID[crdt.TxnID(strings.Clone(string(g.multiID(rec))))] = true
					break
				}
			}
		}
	}
	for x := range p.cross {
		if p.get(x) != 0 && n.get(x) != 0 {
			byID[x] = true
		}
	}
	var out []Conflict
	for x := range byID {
		var all []Copy
		for _, h := range [2]struct {
			g    *GCounter
			sign int64
		}{{p, 1}, {n, -1}} {
			if r := h.g.get(x); r != 0 {
				all = append(all, h.g.copies(r, h.sign)...)
			}
		}
		o, _ := owner(p, n, x)
		out = append(out, Conflict{ID: x, Counted: o, Copies: all})
	}
	slices.SortFunc(out, func(a, b Conflict) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Owner returns the copy of txn that counts (see Counter.Owner).
func (g *GCounter) Owner(txn crdt.TxnID) (Copy, bool) {
	if g == nil {
		return Copy{}, false
	}
	return owner(g, nil, txn)
}

// Retract takes actor's own copy of txn out of its history, or out of its
// folded record and total: for a writer that finds an unacknowledged
// transaction of its own older than the horizon, which may have been
// retried, counted and forgotten elsewhere. The entry's seq increases, so
// the change wins over the unacknowledged version. Only the entry's owner
// may call it. It reports whether actor held txn; the value drops by its
// amount when actor's copy was the one counted.
func (c *Counter) Retract(actor crdt.ActorID, txn crdt.TxnID) (bool, error) {
	if err := actor.Validate(); err != nil {
		return false, err
	}
	if err := txn.Validate(); err != nil {
		return false, err
	}
	c.link()
	for _, g := range [2]*GCounter{&c.p, &c.n} {
		e := g.entries[actor]
		r := g.get(txn)
		if e == nil || r == 0 {
			continue
		}
		off, ok := g.offIn(e, r)
		if !ok {
			continue
		}
		if err := e.checkSeq(); err != nil {
			return false, err
		}
		p := plan{total: e.total, forgot: e.forgot}
		if off < e.nf() {
			p.unfold = []uint32{off}
			p.total -= e.ring[e.pos(off)].amt
		} else {
			p.drop = []uint32{off}
		}
		g.commit(e, p)
		g.bump(e)
		g.grown += changeBound
		if len(c.cross) > 0 {
			c.findCross(nil, nil)
		}
		return true, nil
	}
	return false, nil
}

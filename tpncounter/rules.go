package tpncounter

// The duplicate rules of SPEC.md 6.4 as an actor's housekeeping of its
// entry: plan decides, commit carries out. The index keeps owners and
// contributions (owner, beats, contrib).

import (
	"fmt"
	"slices"
	"strings"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
)

// plan is an actor's pending housekeeping, by offsets before it is done.
type plan struct {
	drop   []uint32 // history items owned or counted by another actor, ascending
	unfold []uint32 // folded items another (smaller) actor also folded, ascending
	fold   int      // how many of the oldest remaining history items to fold
	ageOut []uint32 // folded (or now folding) items to forget, ascending
	total  int64    // the entry's total afterwards
	forgot int64    // the entry's forgot afterwards
}

func (p plan) empty() bool {
	return len(p.drop) == 0 && len(p.unfold) == 0 && p.fold == 0 && len(p.ageOut) == 0
}

// plan computes e's housekeeping without changing anything.
func (g *GCounter) plan(e *entry) (plan, error) {
	p := plan{ageOut: g.offBuf[:0]}
	defer func() { g.offBuf = p.ageOut[:0] }()
	if g.nmulti > 0 {
		// Only contested transactions: visit fewer of the records and e's items.
		if len(g.multi)-1 <= e.size() {
			for m := uint32(1); m < uint32(len(g.multi)); m++ {
				if off, ok := g.offIn(e, m); ok {
					g.classify(e, m, off, &p)
				}
			}
			slices.Sort(p.drop)
			slices.Sort(p.unfold)
		} else {
			for off := uint32(0); off < uint32(e.size()); off++ {
				if m := e.ring[e.pos(off)].multi; m != 0 {
					g.classify(e, m, off, &p)
				}
			}
		}
	}
	var keep []uint32 // offsets of e's items the other half also holds
	if len(g.cross) > 0 {
		keep = g.classifyCross(e, &p)
	}
	nf := e.nf()
	if n := e.size() - int(nf) - len(p.drop) - g.o.HistoryLength; n > 0 {
		p.fold = n
	}
	var total exact.Int128
	total.Add(e.total)
	for _, off := range p.unfold {
		total.Sub(e.ring[e.pos(off)].amt)
	}
	// Folded items beyond FoldedLength after unfolding and folding.
	excess := int(nf) - len(p.unfold) + p.fold - g.o.FoldedLength
	forgetAll, shrink := brokenForgetOnFold, brokenDeferredShrinksWindow
	if forgetAll {
		excess = int(nf) + p.fold
	}
	// Without contested transactions every item is solo.
	solo := g.solo() && len(keep) == 0
	// Rule 5: the record keeps its newest FoldedLength items. Of the older
	// (excess) ones, forget the solo ones and defer the others until their
	// other holders let go. Deferred items take room of their own, so an
	// id stays known for HistoryLength + FoldedLength later writes.
	age := func(off uint32, it *item) {
		if forgetAll || solo || (it.multi == 0 && !slices.Contains(keep, off)) {
			p.ageOut = append(p.ageOut, off)
			excess--
		} else if !shrink {
			excess--
		}
	}
	for off := uint32(0); off < nf && excess > 0; off++ {
		if len(p.unfold) == 0 || !slices.Contains(p.unfold, off) {
			age(off, &e.ring[e.pos(off)])
		}
	}
	for off, folded := nf, 0; folded < p.fold; off++ {
		if len(p.drop) > 0 && slices.Contains(p.drop, off) {
			continue
		}
		folded++
		it := &e.ring[e.pos(off)]
		total.Add(it.amt)
		if excess > 0 {
			age(off, it)
		}
	}
	t, ok := total.Int64()
	if !ok || t < 0 {
		return plan{}, fmt.Errorf("%w: folding into the total of actor %q", crdt.ErrOverflow, e.actor)
	}
	p.total = t
	p.forgot = e.forgot
	if g.o.TxnTime != nil {
		for _, off := range p.ageOut {
			p.forgot = max(p.forgot, g.timeAt(e, e.pos(off)))
		}
	}
	return p, nil
}

// timeAt returns e's item q's TxnTime in Unix ns, cached or parsed; 0 for none.
func (g *GCounter) timeAt(e *entry, q uint32) int64 {
	if e.times != nil && e.times[q] != 0 {
		return e.times[q]
	}
	if at, ok := g.txnTime(crdt.TxnID(strings.Clone(string(e.id(q))))); ok { // a copy: TxnTime may keep it
		return at.UnixNano()
	}
	return 0
}

// classify applies the duplicate rules to e's item at offset off (multi
// record m): in e's history, drop it when another actor folded it or holds
// it under a smaller actor id; folded by e, unfold it when a smaller actor
// id folded it too. The other actor's copy counts.
func (g *GCounter) classify(e *entry, m uint32, off uint32, p *plan) {
	mine := off < e.nf()
	for _, l := range g.multi[m].holders {
		if l>>posBits == e.aix {
			continue
		}
		he, hp := g.itemOf(l)
		folded := he.foldedAt(hp)
		switch {
		case !mine && (folded || he.actor < e.actor):
			p.drop = append(p.drop, off)
			return
		case mine && folded && he.actor < e.actor:
			p.unfold = append(p.unfold, off)
			return
		}
	}
}

// classifyCross applies the rules to e's items the twin holds: drop or unfold
// when the twin's copy counts, else return the offset to keep.
func (g *GCounter) classifyCross(e *entry, p *plan) []uint32 {
	var keep []uint32
	for x := range g.cross {
		r, tr := g.get(x), g.twin.get(x)
		if r == 0 || tr == 0 {
			continue
		}
		off, ok := g.offIn(e, r)
		if !ok {
			continue
		}
		switch {
		case !g.twinOwns(r, tr):
			keep = append(keep, off)
		case off < e.nf():
			if !slices.Contains(p.unfold, off) {
				p.unfold = append(p.unfold, off)
			}
		default:
			if !slices.Contains(p.drop, off) {
				p.drop = append(p.drop, off)
			}
		}
	}
	slices.Sort(p.drop)
	slices.Sort(p.unfold)
	return keep
}

// offIn returns the offset of e's item of r's transaction, if e holds it.
func (g *GCounter) offIn(e *entry, r ref) (uint32, bool) {
	holders := []loc{r &^ soloBit}
	if r&soloBit == 0 {
		holders = g.multi[r].holders
	}
	for _, l := range holders {
		if l>>posBits == e.aix {
			return e.offOf(l & posMask), true
		}
	}
	return 0, false
}

// twinOwns reports whether the twin's copy (tr) of r's transaction counts.
func (g *GCounter) twinOwns(r, tr ref) bool {
	if g.neg {
		return !debitOwns(g.twin, tr, g, r)
	}
	return debitOwns(g, r, g.twin, tr)
}

// debitOwns reports whether the debit copy (nr) beats the credit (pr):
// folded first, then the smaller actor, the credit on a tie.
func debitOwns(p *GCounter, pr ref, n *GCounter, nr ref) bool {
	pe, pp := p.owner(pr)
	ne, np := n.owner(nr)
	if fp, fn := pe.foldedAt(pp), ne.foldedAt(np); fp != fn {
		return fn
	}
	return ne.actor < pe.actor
}

// commit carries out p on e, keeping index and value (unchanged) in step.
func (g *GCounter) commit(e *entry, p plan) {
	solo := g.solo()
	// Drop and unfold: another actor counts these.
	for _, off := range p.drop {
		g.release(e, off)
	}
	for _, off := range p.unfold {
		g.release(e, off)
	}
	g.val.Add(p.total - e.total)
	e.total = p.total
	e.forgot = p.forgot
	g.horizon = max(g.horizon, p.forgot)
	ageOut := p.ageOut
	if len(p.drop)+len(p.unfold) > 0 {
		removed := append(slices.Clone(p.unfold), p.drop...) // ascending: folded offsets come first
		g.removeItems(e, removed)
		for i, off := range ageOut {
			below, _ := slices.BinarySearch(removed, off)
			ageOut[i] = off - uint32(below)
		}
	}
	// Fold the oldest p.fold history items into the total.
	nf := e.nf()
	for off := nf; off < nf+uint32(p.fold); off++ {
		if solo {
			// Solo: e's total now counts it (see contrib).
			g.val.Sub(e.ring[e.pos(off)].amt)
		} else {
			g.contrib(&g.val, -1, g.refAt(e, off))
		}
	}
	e.mid += uint32(p.fold)
	if !solo {
		for off := nf; off < nf+uint32(p.fold); off++ {
			if q := e.pos(off); e.ring[q].multi != 0 {
				g.hold(e.ring[q].multi, e.locAt(q))
			}
			g.contrib(&g.val, 1, g.refAt(e, off))
		}
	}
	// Forget, leaving a solo item's table entry stale (see table).
	if n := len(ageOut); n > 0 {
		for _, off := range ageOut {
			// A solo folded item contributes nothing beyond e's total.
			if solo || e.ring[e.pos(off)].multi == 0 {
				g.tab.n--
				g.tab.stale++
			} else {
				g.release(e, off)
			}
		}
		if ageOut[n-1] == uint32(n-1) {
			e.head += uint32(n) // the common case: the oldest n
		} else {
			g.removeItems(e, ageOut)
		}
	}
}

// solo reports no contested transaction and no broken variant (mutants.go,
// constant false without the counterkit_mutants tag): housekeeping then
// reads only the entry's ring.
func (g *GCounter) solo() bool {
	return g.nmulti == 0 && !brokenCountEveryCopy && !brokenForgetOnFold && !brokenDeferredShrinksWindow && !brokenRetireShared && !brokenMergeKeepsFolded && !brokenLaterRetirementWins && !brokenShiftKeepsSides
}

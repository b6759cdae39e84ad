package tpncounter

import "github.com/counterkit/counterkit/crdt"

// variant names a known-broken variant of the rules (mutants.go), for the
// tests that show the simulation catches each of them. Only correctVariant
// is available without the counterkit_mutants build tag.
type variant uint8

const (
	correctVariant variant = iota
	variantCountEveryCopy
	variantForgetOnFold
	variantDeferredShrinksWindow
	variantRetireShared
	variantMergeKeepsFolded
	variantLaterRetirementWins
	variantShiftKeepsSides
)

// dropEncodings forgets every entry's cached encoding, so that the next
// MarshalBinary encodes c from scratch.
func dropEncodings(c *Counter) {
	for _, g := range [2]*GCounter{&c.p, &c.n} {
		for _, e := range g.entries {
			e.enc = nil
		}
	}
}

// entryFrom builds an uninstalled entry from its parts (tests).
func entryFrom(actor crdt.ActorID, seq uint64, total, forgot int64, hist, folded []Txn) *entry {
	e := newEntry(actor, ringLen(len(hist)+len(folded)), 0)
	e.seq, e.total, e.forgot = seq, total, forgot
	for _, list := range [2][]Txn{folded, hist} {
		for _, t := range list {
			e.ring[e.tail] = item{amt: t.Amount, tag: tagOf(hashID(t.ID))}
			e.setID(e.tail, t.ID)
			e.tail++
		}
	}
	e.mid = uint32(len(folded))
	return e
}

// wake installs every dormant record as a retired entry.
func (g *GCounter) wake() {
	if g.dorm.n() == 0 {
		return
	}
	for i := 0; i < g.dorm.n(); i++ {
		g.attach(g.dorm.entry(i))
	}
	g.setDorm(dormant{})
}

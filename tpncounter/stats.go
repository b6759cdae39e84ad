package tpncounter

// Stats describes the size of a GCounter or Counter.
type Stats struct {
	// Actors counts actors with a live entry (in either half), Retired those
	// with only a retired one (see Retire).
	Actors, Retired int
	// Transactions is the number of distinct transaction ids known.
	Transactions int
	// History and Folded count every actor's items.
	History, Folded int
	// Deferred counts folded items kept beyond FoldedLength while another actor
	// holds them (room of their own, bounded by MaxEntriesPerActor).
	Deferred int
	// Conflicts counts the ids held with several amounts or signs.
	Conflicts int
}

// Stats returns the counter's size in O(actors + contested transactions).
func (g *GCounter) Stats() Stats {
	if g == nil {
		return Stats{}
	}
	s := Stats{Actors: g.live(), Retired: g.nretired, Transactions: g.tab.n}
	for _, e := range g.entries {
		nf := int(e.nf())
		s.Folded += nf
		s.History += e.size() - nf
		s.Deferred += max(0, nf-g.o.FoldedLength)
	}
	s.Conflicts = len(g.Conflicts())
	return s
}

// Stats adds up both halves, counting each actor once.
func (c *Counter) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	p, n := c.p.Stats(), c.n.Stats()
	var actors [2]int // retired, live
	for h, g := range [2]*GCounter{&c.p, &c.n} {
		g.eachActor(func(a string) {
			if _, _, inP := c.p.locate(a); h == 1 && inP {
				return // counted with the credit half
			}
			_, live, _ := c.lookup(a)
			actors[b2i(live)]++
		})
	}
	return Stats{Actors: actors[1], Retired: actors[0], Transactions: p.Transactions + n.Transactions,
		History: p.History + n.History, Folded: p.Folded + n.Folded, Deferred: p.Deferred + n.Deferred,
		Conflicts: len(c.Conflicts())}
}

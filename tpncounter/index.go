package tpncounter

// Implementation notes (cost). Rings and id arenas make the steady state
// copy and allocate nothing (see entry); the table points at a solo
// item or at a record of holders, so Apply of a new transaction reads one
// table cache line and its actor's ring (BENCHMARKS.md). Encoding and
// decoding cost what changed: entries keep their encodings, MergeBinary
// skips equal ones, and decoded retired entries stay encodings (dormant).

import (
	"math"
	"math/bits"
	"slices"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
	"github.com/counterkit/counterkit/internal/idtable"
)

// forcedHash, set by tests, forces long probe runs and equal tags.
var forcedHash func(crdt.TxnID) uint64

// hashID is x's hash for the process (items keep tags across counters).
func hashID(x crdt.TxnID) uint64 {
	if forcedHash != nil {
		return forcedHash(x)
	}
	return idtable.Hash(string(x))
}

// tagOf returns hash h's tag, its top 32 bits (which give its home).
func tagOf(h uint64) uint32 { return idtable.Tag(h) }

// A ref is soloBit plus the item's loc for a solo transaction, else its multi
// record's number (≥ 1); 0 means not found.
type ref = uint32

// A loc is an actor index (entry.aix) above posBits and a ring position below.
type loc = uint32

const (
	soloBit = 1 << 31
	// posBits holds a ring position, below MaxEntriesPerActor (4096).
	posBits = 13
	posMask = 1<<posBits - 1
)

// The layout holds every actor index and ring position.
var _ = [1]struct{}{}[((MaxActorsLimit+MaxRetired)<<posBits)>>31] // aix and position fit under soloBit
var _ = [1]struct{}{}[MaxEntriesPerActor>>posBits]                // a ring position fits in posBits

// table is the transaction index (package idtable), one entry per
// distinct id: its tag in the top 32 bits, its ref in the low 32. At most
// 80% full, stale entries included, so a miss stays in a cache line.
//
// Stale entries: a transaction its only holder forgets (every steady-state
// Apply) keeps its entry, as removing it would cost a cache miss; find
// accepts a solo entry only if its position is live and holds the id as a
// solo item, so stale ones only take room. addKey rebuilds the table when
// they would fill it, to 60% live at most and no more than twice that: a
// rebuild per a third as many forgotten transactions as live ones (O(1)
// amortised), and a table small enough for the cache (2 MB for the
// 1,000-actor benchmark).
type table struct {
	idtable.Table
	n     int // live entries: one per known transaction
	stale int // stale entries
}

// minTabLen is the length of the smallest table.
const minTabLen = 8

// newTable returns an empty table for size entries at most half full.
func newTable(size int) table {
	return table{Table: idtable.Table{Slots: make([]uint64, tableLen(size))}}
}

// tableLen returns the length of a table for size entries at most half full.
func tableLen(size int) int { return max(minTabLen, 2*size) }

func tableKey(tag uint32, r ref) uint64 { return idtable.Key(tag, r) }

func (t *table) clone() table {
	return table{Table: idtable.Table{Slots: append([]uint64(nil), t.Slots...)}, n: t.n, stale: t.stale}
}

// add inserts key k; its id must be absent.
func (t *table) add(k uint64) {
	if 5*(t.n+t.stale+1) > 4*len(t.Slots) {
		t.Resize(2 * len(t.Slots))
	}
	t.Place(k)
	t.n++
}

// replace changes an entry equal to old into nw (same tag, same run).
func (t *table) replace(old, nw uint64) { t.Slots[t.SlotOf(old)] = nw }

// remove takes out an entry equal to k, which must be present.
func (t *table) remove(k uint64) {
	t.Remove(k)
	t.n--
}

// multiRec records a contested transaction's holders (their items keep their
// own amounts, which may differ); a free record has none.
type multiRec struct {
	holders []loc
	// Kept with the holders, so adding or folding one reads no other (a hostile
	// state may have thousands): owner, folded count, folded sum.
	own   loc
	nfold int32
	fsum  exact.Int128
}

// The index keeps the value in step: a change of holders takes out a
// transaction's contribution (contrib) before and adds it after.

// notInstalled marks the items swap is installing until install sets multi.
const notInstalled = ^uint32(0)

// addKey adds table entry k, rebuilding first when stale entries would fill
// the table; k's item must not be live yet (or be notInstalled).
func (g *GCounter) addKey(k uint64) {
	if t := &g.tab; t.stale > 0 && 5*(t.n+t.stale+1) > 4*len(t.Slots) {
		g.rebuild()
	}
	g.tab.add(k)
}

// rebuild replaces the table with one of the live entries only.
func (g *GCounter) rebuild() {
	t := newTable(0)
	size := (g.tab.n + 1) * 5 / 6 // newTable makes it at least twice that: live entries ≤ 60%
	if want, have := tableLen(size), len(g.tab.Slots); want <= have && have <= 2*want {
		// Reuse the array, so that the steady state allocates nothing.
		clear(g.tab.Slots)
		t = table{Table: idtable.Table{Slots: g.tab.Slots}}
	} else {
		t = newTable(size)
	}
	for _, e := range g.ents {
		if e == nil {
			continue
		}
		for off := uint32(0); off < uint32(e.size()); off++ {
			if p := e.pos(off); e.ring[p].multi == 0 {
				t.Place(tableKey(e.ring[p].tag, soloBit|e.locAt(p)))
			}
		}
	}
	for m := 1; m < len(g.multi); m++ {
		if rec := &g.multi[m]; len(rec.holders) > 0 {
			t.Place(tableKey(g.multiTag(rec), uint32(m)))
		}
	}
	t.n = g.tab.n
	g.tab = t
}

// multiTag returns rec's tag, kept by its owner's item.
func (g *GCounter) multiTag(rec *multiRec) uint32 {
	e, p := g.itemOf(rec.own)
	return e.ring[p].tag
}

// multiID returns rec's id, kept by its owner's item.
func (g *GCounter) multiID(rec *multiRec) crdt.TxnID {
	e, p := g.itemOf(rec.own)
	return e.id(p)
}

// itemOf returns the entry and ring position of l.
func (g *GCounter) itemOf(l loc) (*entry, uint32) { return g.ents[l>>posBits], l & posMask }

// get returns the ref of x, or 0 (also without a table).
func (g *GCounter) get(x crdt.TxnID) ref {
	if g == nil || len(g.tab.Slots) == 0 {
		return 0
	}
	return g.find(x, hashID(x))
}

// find returns the ref of x, of hash (or tag<<32) h, or 0.
func (g *GCounter) find(x crdt.TxnID, h uint64) ref {
	t := &g.tab
	tag := tagOf(h)
	for i := t.Home(h); ; i = t.Next(i) {
		k := t.Slots[i]
		if k == 0 {
			return 0
		}
		if uint32(k>>32) != tag {
			continue
		}
		r := ref(k)
		if r&soloBit == 0 {
			if g.multiID(&g.multi[r]) == x {
				return r
			}
			continue
		}
		// A solo entry counts only if live: its position holds x as a solo item
		// (a stale entry that passes equals x's live one).
		if e, p := g.itemOf(r &^ soloBit); e != nil && p < uint32(len(e.ring)) && e.offOf(p) < uint32(e.size()) &&
			e.ring[p].multi == 0 && e.id(p) == x {
			return r
		}
	}
}

// amtOf returns the amount of r's counting copy (see owner).
func (g *GCounter) amtOf(r ref) int64 {
	e, p := g.owner(r)
	return e.ring[p].amt
}

// owner returns the holder whose copy counts (see Counter.Owner).
func (g *GCounter) owner(r ref) (*entry, uint32) {
	if r&soloBit != 0 {
		return g.itemOf(r &^ soloBit)
	}
	return g.itemOf(g.multi[r].own)
}

// beats reports whether holder a's copy counts before b's.
func (g *GCounter) beats(a, b loc) bool {
	ae, ap := g.itemOf(a)
	be, bp := g.itemOf(b)
	if fa, fb := ae.foldedAt(ap), be.foldedAt(bp); fa != fb {
		return fa
	}
	return ae.actor < be.actor
}

// hold adds holder l, newly joined or folded, to record m's sums and owner.
func (g *GCounter) hold(m uint32, l loc) {
	rec := &g.multi[m]
	e, p := g.itemOf(l)
	if e.foldedAt(p) {
		rec.nfold++
		rec.fsum.Add(e.ring[p].amt)
	}
	if len(rec.holders) == 1 || g.beats(l, rec.own) {
		rec.own = l
	}
}

// counts returns how many holders hold r in a history and how many folded it.
func (g *GCounter) counts(r ref) (inHist, inFolded int) {
	if r&soloBit != 0 {
		if e, p := g.itemOf(r &^ soloBit); e.foldedAt(p) {
			return 0, 1
		}
		return 1, 0
	}
	rec := &g.multi[r]
	return len(rec.holders) - int(rec.nfold), int(rec.nfold)
}

// refAt returns the ref of e's item at offset off (e installed).
func (g *GCounter) refAt(e *entry, off uint32) ref {
	p := e.pos(off)
	if m := e.ring[p].multi; m != 0 {
		return m
	}
	return soloBit | e.locAt(p)
}

// contrib adds sign times what r's transaction adds beyond the folded
// totals (nothing for r = 0): the owner's amount while only in histories;
// once folded, the owner's total counts it and every other fold is a
// double count subtracted here.
func (g *GCounter) contrib(a *exact.Int128, sign int64, r ref) {
	if r == 0 {
		return
	}
	if r&soloBit != 0 {
		if e, p := g.itemOf(r &^ soloBit); !e.foldedAt(p) {
			a.Add(sign * e.ring[p].amt)
		}
		return
	}
	rec := &g.multi[r]
	var d exact.Int128
	if brokenCountEveryCopy {
		// Every history copy counts (a broken rule for tests, O(holders)).
		for _, l := range rec.holders {
			if e, p := g.itemOf(l); !e.foldedAt(p) {
				d.Add(e.ring[p].amt)
			}
		}
	} else {
		oe, op := g.itemOf(rec.own)
		if !oe.foldedAt(op) {
			a.Add(sign * oe.ring[op].amt)
			return
		}
		d = rec.fsum // minus every folded copy but the owner's
		d.Sub(oe.ring[op].amt)
		sign = -sign
	}
	if sign > 0 {
		a.AddInt128(d)
	} else {
		a.SubInt128(d)
	}
}

// release removes e's hold of its item at off, keeping the value in step.
func (g *GCounter) release(e *entry, off uint32) {
	g.contrib(&g.val, -1, g.refAt(e, off))
	g.contrib(&g.val, 1, g.uninstall(e, off))
}

// install indexes installed e's item at off, keeping the value in step.
func (g *GCounter) install(e *entry, off uint32) {
	p := e.pos(off)
	it := &e.ring[p]
	l := e.locAt(p)
	r := g.find(e.id(p), uint64(it.tag)<<32)
	if r == 0 {
		g.addKey(tableKey(it.tag, soloBit|l)) // while it is notInstalled, for rebuild
		it.multi = 0
		g.contrib(&g.val, 1, soloBit|l)
		return
	}
	g.contrib(&g.val, -1, r)
	if r&soloBit != 0 {
		first := r &^ soloBit
		m := g.newMulti(multiRec{holders: append(make([]loc, 0, 2), first)})
		g.hold(m, first)
		g.tab.replace(tableKey(it.tag, r), tableKey(it.tag, m))
		oe, op := g.itemOf(first)
		oe.ring[op].multi = m
		r = m
	}
	g.multi[r].holders = append(g.multi[r].holders, l)
	it.multi = r
	g.hold(r, l)
	g.contrib(&g.val, 1, r)
}

// installDecoded installs the items of every entry decodeBody attached,
// with the index and value swap would give entry by entry, but with the
// multi records and holder lists allocated once at their final size. A
// first pass fills the table and numbers the records as swap would (each
// holding its first holder and a count); a second fills the records.
func (g *GCounter) installDecoded() {
	// Sized once from the estimate (see distinctTxns); either grows if short.
	m, n := distinctTxns(g.ents)
	g.tab = newTable((5*min(m, int(1.02*n)+16) + 7) / 8)
	recs := min(m, min(int(1.02*n), max(0, m-int(0.98*n)))+16)
	// Until the second pass a record holds its first holder and a count.
	counts := make([]uint32, 1)
	g.multi = make([]multiRec, 1)
	for _, e := range g.ents {
		g.val.Add(e.total)
		g.horizon = max(g.horizon, e.forgot)
		for off := uint32(0); off < uint32(e.size()); off++ {
			p := e.pos(off)
			it := &e.ring[p]
			r := g.find(e.id(p), uint64(it.tag)<<32)
			switch {
			case r == 0:
				g.tab.add(tableKey(it.tag, soloBit|e.locAt(p))) // no stale entries: nothing to rebuild
				it.multi = 0
			case r&soloBit != 0:
				if len(counts) == 1 { // the first record: room for all of them, once
					// (Not slices.Grow: under -race its make is a second array.)
					g.multi = append(make([]multiRec, 0, 1+recs), g.multi...)
					counts = append(make([]uint32, 0, 1+recs), counts...)
				}
				m := uint32(len(g.multi))
				g.multi, counts = append(g.multi, multiRec{own: r &^ soloBit}), append(counts, 2)
				g.tab.replace(tableKey(it.tag, r), tableKey(it.tag, m))
				fe, fp := g.itemOf(r &^ soloBit)
				fe.ring[fp].multi = m
				it.multi = m
			default:
				counts[r]++
				it.multi = r
			}
		}
	}
	g.nmulti = len(g.multi) - 1
	total := 0
	for _, c := range counts {
		total += int(c)
	}
	slab := make([]loc, total)
	for m := 1; m < len(g.multi); m++ {
		c := counts[m]
		g.multi[m].holders = slab[:0:c] // full at c: a later append copies it
		slab = slab[c:]
	}
	for _, e := range g.ents {
		for off := uint32(0); off < uint32(e.size()); off++ {
			p := e.pos(off)
			l := e.locAt(p)
			if m := e.ring[p].multi; m != 0 {
				g.multi[m].holders = append(g.multi[m].holders, l)
				g.hold(m, l)
			} else {
				g.contrib(&g.val, 1, soloBit|l)
			}
		}
	}
	for m := 1; m < len(g.multi); m++ {
		g.contrib(&g.val, 1, uint32(m))
	}
}

// distinctTxns returns the items m of the uninstalled entries and an
// estimate n of their distinct transactions by linear counting: m items
// with n distinct tags leave about m·e^(-n/m) of m bits unset. It only
// sizes allocations, and allocates m/8 bytes.
func distinctTxns(ents []*entry) (m int, n float64) {
	for _, e := range ents {
		m += e.size()
	}
	if m == 0 {
		return 0, 0
	}
	set := make([]uint64, (m+63)/64)
	for _, e := range ents {
		for off := uint32(0); off < uint32(e.size()); off++ {
			i := uint64(e.ring[e.pos(off)].tag) * uint64(m) >> 32
			set[i/64] |= 1 << (i % 64)
		}
	}
	ones := 0
	for _, w := range set {
		ones += bits.OnesCount64(w)
	}
	if ones == m {
		return m, float64(m)
	}
	return m, -float64(m) * math.Log(float64(m-ones)/float64(m))
}

// uninstall removes e's hold of item off and returns the remaining holders'
// ref (0: none; one holder becomes solo); the caller keeps the value.
func (g *GCounter) uninstall(e *entry, off uint32) ref {
	p := e.pos(off)
	it := &e.ring[p]
	l := e.locAt(p)
	if it.multi == 0 {
		g.tab.remove(tableKey(it.tag, soloBit|l))
		return 0
	}
	m := it.multi
	rec := &g.multi[m]
	if e.foldedAt(p) {
		rec.nfold--
		rec.fsum.Sub(it.amt)
	}
	it.multi = 0
	i := slices.Index(rec.holders, l)
	rec.holders = slices.Delete(rec.holders, i, i+1)
	if rec.own == l && len(rec.holders) > 1 {
		rec.own = rec.holders[0]
		for _, h := range rec.holders[1:] {
			if g.beats(h, rec.own) {
				rec.own = h
			}
		}
	}
	if len(rec.holders) == 1 {
		l2 := rec.holders[0]
		g.tab.replace(tableKey(it.tag, m), tableKey(it.tag, soloBit|l2))
		oe, op := g.itemOf(l2)
		oe.ring[op].multi = 0
		g.multi[m] = multiRec{}
		g.mfree = append(g.mfree, m)
		g.nmulti--
		return soloBit | l2
	}
	return m
}

func (g *GCounter) newMulti(rec multiRec) uint32 {
	g.nmulti++
	if n := len(g.mfree); n > 0 {
		m := g.mfree[n-1]
		g.mfree = g.mfree[:n-1]
		g.multi[m] = rec
		return m
	}
	g.multi = append(g.multi, rec)
	return uint32(len(g.multi) - 1)
}

// relocate points the index at it's new location to instead of from.
func (g *GCounter) relocate(it item, from, to loc) {
	if it.multi == 0 {
		g.tab.replace(tableKey(it.tag, soloBit|from), tableKey(it.tag, soloBit|to))
		return
	}
	rec := &g.multi[it.multi]
	rec.holders[slices.Index(rec.holders, from)] = to
	if rec.own == from {
		rec.own = to
	}
}

// removeItems removes uninstalled items (ascending offsets) from e's ring.
func (g *GCounter) removeItems(e *entry, removed []uint32) {
	nf, n := e.nf(), uint32(e.size())
	w, ri, below := uint32(0), 0, uint32(0)
	for off := uint32(0); off < n; off++ {
		if ri < len(removed) && removed[ri] == off {
			ri++
			if off < nf {
				below++
			}
			continue
		}
		if off != w {
			g.moveItem(e, e.pos(off), e.pos(w), e.ring, e.idAt, e.times)
		}
		w++
	}
	e.tail = e.head + w
	e.mid -= below
}

// growRing doubles e's ring, or extends a short decoded one to mask+1.
func (g *GCounter) growRing(e *entry) {
	n := int(e.mask) + 1
	if len(e.ring) == n {
		n *= 2
	}
	ring, idAt := make([]item, n), make([]uint32, n)
	var times []int64
	if e.times != nil {
		times = make([]int64, n)
	}
	nmask := uint32(n - 1)
	for off := uint32(0); off < uint32(e.size()); off++ {
		g.moveItem(e, e.pos(off), (e.head+off)&nmask, ring, idAt, times)
	}
	e.ring, e.idAt, e.times, e.mask = ring, idAt, times, nmask
}

// moveItem moves e's item from pf to pt of ring, idAt and times, reindexed.
func (g *GCounter) moveItem(e *entry, pf, pt uint32, ring []item, idAt []uint32, times []int64) {
	it := e.ring[pf]
	ring[pt], idAt[pt] = it, e.idAt[pf]
	if times != nil {
		times[pt] = e.times[pf]
	}
	if pf != pt {
		g.relocate(it, e.locAt(pf), e.locAt(pt))
	}
}

// attach gives e an actor index and installs it in the maps (not its items).
func (g *GCounter) attach(e *entry) {
	if n := len(g.afree); n > 0 {
		e.aix = g.afree[n-1]
		g.afree = g.afree[:n-1]
		g.ents[e.aix] = e
	} else {
		e.aix = uint32(len(g.ents))
		g.ents = append(g.ents, e)
	}
	g.entries[e.actor] = e
	g.order = nil
}

// detach removes e (its items already uninstalled) from the maps.
func (g *GCounter) detach(e *entry) {
	g.ents[e.aix] = nil
	g.afree = append(g.afree, e.aix)
	delete(g.entries, e.actor)
	g.order = nil
}

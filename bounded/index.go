package bounded

// The holders index: who holds each recent transaction. It refers to the
// transactions where the entries keep them, so that it costs a table slot
// of 8 bytes per transaction rather than a map slot of two strings (about
// 20x the encoding's bytes; TestIndexMemory).

import (
	"cmp"
	"iter"
	"maps"
	"slices"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/idtable"
)

// forcedHash, set by tests, forces long probe runs and equal tags.
var forcedHash func(crdt.TxnID) uint64

// hashID is x's hash for the process.
func hashID(x crdt.TxnID) uint64 {
	if forcedHash != nil {
		return forcedHash(x)
	}
	return idtable.Hash(string(x))
}

// A loc is where the index finds one holder's copy of a transaction: the
// holder's actor index above posBits and, below, the copy's position in
// its entry's recent transactions counted from the actor's base (see
// actSlot) modulo 1<<posBits.
type loc = uint32

// A ref is what the table keeps for a transaction: soloBit plus the loc
// of the one copy, or the number (≥ 1) of the record of its holders when
// two or more hold it; 0 is an empty slot.
type ref = uint32

const (
	soloBit = 1 << 31
	posBits = 15
	posMask = 1<<posBits - 1
)

// Every actor index and position fits under soloBit, and an entry's
// positions are distinct modulo 1<<posBits.
var (
	_ = [1]struct{}{}[((MaxMergedActors-1)<<posBits)>>31]
	_ = [1]struct{}{}[MaxWindow>>posBits]
)

// actSlot is one actor's place in the index: its installed entry, and
// the position (modulo 1<<posBits) of the entry's first transaction. When
// the window slides by d, base moves by d and the copies kept keep their
// locs.
type actSlot struct {
	actor crdt.ActorID
	e     *entry // nil: a free slot
	base  uint32
}

// holdIndex is the holders index. Its table (package idtable) has one
// slot per distinct transaction, its tag above its ref, at most two thirds
// full. Clones copy everything but the holder lists, which are replaced,
// never changed in place once built.
type holdIndex struct {
	idtable.Table
	n     int // transactions in the table
	acts  []actSlot
	aix   map[crdt.ActorID]uint32 // actor index of each actor with an entry
	afree []uint32                // free actor indexes
	multi [][]loc                 // holders of each record, sorted by actor; [0] and free ones empty
	mfree []uint32                // free record numbers
}

// newHoldIndex returns an empty index sized for actors and items.
func newHoldIndex(actors, items int) *holdIndex {
	return &holdIndex{
		Table: idtable.Table{Slots: make([]uint64, max(8, items+items/2+1))},
		acts:  make([]actSlot, 0, actors),
		aix:   make(map[crdt.ActorID]uint32, actors),
		multi: make([][]loc, 1),
	}
}

func (x *holdIndex) clone() *holdIndex {
	if x == nil {
		return nil
	}
	return &holdIndex{
		Table: idtable.Table{Slots: slices.Clone(x.Slots)}, n: x.n,
		acts: slices.Clone(x.acts), aix: maps.Clone(x.aix), afree: slices.Clone(x.afree),
		multi: slices.Clone(x.multi), mfree: slices.Clone(x.mfree), // lists are shared, never changed
	}
}

// add inserts key k, whose transaction must be absent.
func (x *holdIndex) add(k uint64) {
	if 3*(x.n+1) > 2*len(x.Slots) {
		x.Resize(2 * len(x.Slots))
	}
	x.Place(k)
	x.n++
}

// remove takes out key k, which must be present.
func (x *holdIndex) remove(k uint64) {
	x.Remove(k)
	x.n--
}

// at returns the actor and the copy l locates.
func (x *holdIndex) at(l loc) (crdt.ActorID, Txn) {
	s := &x.acts[l>>posBits]
	return s.actor, s.e.recent[(l-s.base)&posMask]
}

func (x *holdIndex) actorOf(l loc) crdt.ActorID { return x.acts[l>>posBits].actor }

// locOf returns the loc of the copy at position i of actor index ai's entry.
func (x *holdIndex) locOf(ai uint32, i int) loc {
	return ai<<posBits | (x.acts[ai].base+uint32(i))&posMask
}

// find returns the ref of txn, of hash h, or 0.
func (x *holdIndex) find(txn crdt.TxnID, h uint64) ref {
	if x == nil {
		return 0
	}
	tag := idtable.Tag(h)
	for i := x.Home(h); ; i = x.Next(i) {
		k := x.Slots[i]
		if k == 0 {
			return 0
		}
		if uint32(k>>32) != tag {
			continue
		}
		r := ref(k)
		l := r &^ soloBit
		if r&soloBit == 0 {
			l = x.multi[r][0]
		}
		if _, t := x.at(l); t.ID == txn {
			return r
		}
	}
}

// hold records the copy of txn (hash h) at l. When building, holders come
// in actor order and lists are not yet shared.
func (x *holdIndex) hold(txn crdt.TxnID, h uint64, l loc, building bool) {
	tag := idtable.Tag(h)
	switch r := x.find(txn, h); {
	case r == 0:
		x.add(idtable.Key(tag, soloBit|l))
	case r&soloBit != 0:
		o := r &^ soloBit
		hs := []loc{o, l}
		if x.actorOf(l) < x.actorOf(o) {
			hs[0], hs[1] = l, o
		}
		x.Slots[x.SlotOf(idtable.Key(tag, r))] = idtable.Key(tag, x.newMulti(hs))
	case building:
		x.multi[r] = append(x.multi[r], l)
	default:
		hs := x.multi[r]
		i, _ := slices.BinarySearchFunc(hs, x.actorOf(l), func(h loc, a crdt.ActorID) int { return cmp.Compare(x.actorOf(h), a) })
		x.multi[r] = slices.Insert(slices.Clip(hs), i, l) // a new array: clones share the lists
	}
}

// unhold records that the copy of txn at l is gone.
func (x *holdIndex) unhold(txn crdt.TxnID, l loc) {
	h := hashID(txn)
	tag := idtable.Tag(h)
	r := x.find(txn, h)
	if r&soloBit != 0 {
		x.remove(idtable.Key(tag, r))
		return
	}
	hs := slices.DeleteFunc(slices.Clone(x.multi[r]), func(o loc) bool { return o == l })
	if len(hs) > 1 {
		x.multi[r] = hs
		return
	}
	x.Slots[x.SlotOf(idtable.Key(tag, r))] = idtable.Key(tag, soloBit|hs[0])
	x.multi[r] = nil
	x.mfree = append(x.mfree, r)
}

func (x *holdIndex) newMulti(hs []loc) ref {
	if n := len(x.mfree); n > 0 {
		m := x.mfree[n-1]
		x.mfree = x.mfree[:n-1]
		x.multi[m] = hs
		return m
	}
	x.multi = append(x.multi, hs)
	return ref(len(x.multi) - 1)
}

// newActor returns a free actor index for actor.
func (x *holdIndex) newActor(actor crdt.ActorID) uint32 {
	var ai uint32
	if n := len(x.afree); n > 0 {
		ai = x.afree[n-1]
		x.afree = x.afree[:n-1]
	} else {
		if len(x.acts) >= MaxMergedActors {
			panic("bounded: holders index beyond MaxMergedActors")
		}
		ai = uint32(len(x.acts))
		x.acts = append(x.acts, actSlot{})
	}
	x.acts[ai] = actSlot{actor: actor}
	x.aix[actor] = ai
	return ai
}

// update replaces actor's entry old by e (either nil: none). A window
// that slid (old's transactions from some position on begin e's) costs
// what left and what came; any other change re-indexes the entry.
func (x *holdIndex) update(actor crdt.ActorID, old, e *entry) {
	var o, n []Txn
	if old != nil {
		o = old.recent
	}
	if e != nil {
		n = e.recent
	}
	ai, ok := x.aix[actor]
	if !ok {
		if e == nil {
			return
		}
		ai = x.newActor(actor)
	}
	d := len(o) // what left: o[:d]
	if len(n) > 0 {
		if i := slices.IndexFunc(o, func(t Txn) bool { return t.ID == n[0].ID }); i >= 0 {
			d = i
		}
	}
	keep := len(o) - d
	if keep > len(n) || !slices.EqualFunc(o[d:], n[:keep], func(a, b Txn) bool { return a.ID == b.ID }) {
		d, keep = len(o), 0
	}
	for i := range d {
		x.unhold(o[i].ID, x.locOf(ai, i))
	}
	s := &x.acts[ai]
	s.e = e
	s.base += uint32(d)
	for i := keep; i < len(n); i++ {
		x.hold(n[i].ID, hashID(n[i].ID), x.locOf(ai, i), false)
	}
	if e == nil {
		x.acts[ai] = actSlot{}
		delete(x.aix, actor)
		x.afree = append(x.afree, ai)
	}
}

// index builds the holders index if it is not built.
func (c *Counter) index() {
	if c.idx != nil || c.entries == nil {
		return
	}
	items := 0
	for _, e := range c.entries {
		items += len(e.recent)
	}
	x := newHoldIndex(len(c.entries), items)
	for _, a := range c.Actors() { // sorted, so each holder list is
		ai := x.newActor(a)
		e := c.entries[a]
		x.acts[ai].e = e
		for i, t := range e.recent {
			x.hold(t.ID, hashID(t.ID), x.locOf(ai, i), true)
		}
	}
	c.idx = x
}

// holding returns the actors that hold txn, sorted, with the amount each
// holds. The counter must not change while it runs.
func (c *Counter) holding(txn crdt.TxnID) iter.Seq2[crdt.ActorID, int64] {
	return func(yield func(crdt.ActorID, int64) bool) {
		if c == nil {
			return
		}
		c.index()
		x := c.idx
		r := x.find(txn, hashID(txn))
		switch {
		case r == 0:
		case r&soloBit != 0:
			a, t := x.at(r &^ soloBit)
			yield(a, t.Amount)
		default:
			for _, l := range x.multi[r] {
				if a, t := x.at(l); !yield(a, t.Amount) {
					return
				}
			}
		}
	}
}

// anyHolder reports whether f holds for some holder of txn and the amount
// it holds, asked in actor order.
func (c *Counter) anyHolder(txn crdt.TxnID, f func(crdt.ActorID, int64) bool) bool {
	for a, amt := range c.holding(txn) {
		if f(a, amt) {
			return true
		}
	}
	return false
}

package tpncounter

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
)

// Outcome says what Apply did with a transaction.
type Outcome uint8

// The outcomes of Apply, none an error; all but Applied change nothing.
const (
	// Applied means the transaction was new and is now counted once.
	Applied Outcome = iota + 1

	// Duplicate means some history holds the transaction with this amount.
	Duplicate

	// DuplicateFolded means a folded record recognised the transaction, already
	// counted in a total: the retry came late, near the window's edge (SPEC.md 6.8).
	DuplicateFolded

	// Superseded means a copy with this amount is held, but one written
	// concurrently with another amount or sign counts (see Conflicts).
	Superseded
)

// String returns the outcome's name.
func (o Outcome) String() string {
	return name(o, "Outcome", [...]string{Applied: "applied", Duplicate: "duplicate", DuplicateFolded: "duplicate (folded)", Superseded: "superseded"})
}

// name returns names[v], or typ(v) when v has no name.
func name[T ~uint8](v T, typ string, names [5]string) string {
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, uint8(v))
}

// Txn is a held transaction; Amount is its magnitude (debits are in N).
type Txn struct {
	ID     crdt.TxnID
	Amount int64
}

// Entry is a copy of one actor's entry: seq, folded total, history and folded
// record (oldest first).
type Entry struct {
	Seq     uint64
	Total   int64
	History []Txn
	Folded  []Txn
	// Forgot is the newest TxnTime this actor forgot; zero for none.
	Forgot time.Time
	// Retired reports a retired entry (see Retire): Total is all it counted.
	Retired bool
	// RetiredAt is the retirement time (RetireAllAt), zero when unknown.
	RetiredAt time.Time
}

// GCounter is a grow-only counter of transactions (the TGCounter): every
// actor owns one entry holding a folded total, its recent transactions and a
// record of recently folded ones. Its value counts every distinct transaction
// once however many actors hold it. SPEC.md 6.4 gives the rules that keep
// this exact while histories fold.
//
// The zero value is an empty counter with default Options. A GCounter is not
// safe for concurrent use; callers serialise access.
type GCounter struct {
	o       Options
	ready   bool
	entries map[crdt.ActorID]*entry
	// The index (index.go): installed entries by actor index (nil at afree's),
	// multi records (0 unused; mfree free ones, nmulti live ones).
	ents   []*entry
	afree  []uint32
	tab    table
	multi  []multiRec
	mfree  []uint32
	nmulti int
	// dorm holds decoded retired entries (see dormant); nretired counts all.
	dorm     dormant
	nretired int
	// base holds what Fold took out; its total is part of val.
	base base
	// order caches the entries by actor; nil after one is added or removed.
	order []*entry
	// segs caches order as encoding segments (see segments).
	segs []segment
	// sized + grown bound the body's encoded size (see limits.go).
	sized, grown int
	val          exact.Int128
	// In a Counter: the other half, the debit flag, and the ids in both halves.
	twin  *GCounter
	neg   bool
	cross map[crdt.TxnID]struct{}
	// horizon is the largest forgot; horizonStale says it must be recomputed.
	horizon      int64
	horizonStale bool
	// offBuf is the next plan's ageOut: steady-state folding does not allocate.
	offBuf []uint32
}

// NewGCounter returns an empty GCounter; the error wraps crdt.ErrInvalidConfig.
func NewGCounter(opts Options) (*GCounter, error) {
	o, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	g := &GCounter{o: o}
	g.reset()
	return g, nil
}

func (g *GCounter) init() {
	if g.ready {
		return
	}
	o, err := g.o.resolved()
	if err != nil {
		o, _ = Options{}.resolved()
	}
	g.o = o
	g.reset()
}

// reset makes g an empty counter with its current options.
func (g *GCounter) reset() {
	g.ready = true
	g.entries = map[crdt.ActorID]*entry{}
	g.dorm = dormant{}
	g.order = nil
	g.tab = newTable(0)
	g.multi = make([]multiRec, 1)
}

// Options returns the counter's options with defaults filled in.
func (g *GCounter) Options() Options {
	if g == nil {
		g = new(GCounter)
	}
	g.init()
	return g.o
}

// Value returns the folded totals plus each distinct history-only
// transaction once. Merged states may pass math.MaxInt64 (SPEC.md 6.5):
// Value then returns math.MaxInt64 and BigValue the exact value.
func (g *GCounter) Value() int64 {
	if g == nil {
		return 0
	}
	return g.val.Clamp()
}

// BigValue returns the exact value (see Value).
func (g *GCounter) BigValue() *big.Int {
	if g == nil {
		return new(big.Int)
	}
	return g.val.Big()
}

// Len returns the number of actors with an entry.
func (g *GCounter) Len() int {
	if g == nil {
		return 0
	}
	return g.count()
}

// Actors returns the actors with an entry, sorted.
func (g *GCounter) Actors() []crdt.ActorID {
	if g == nil {
		return nil
	}
	out := make([]crdt.ActorID, 0, g.count())
	g.eachActor(func(a string) { out = append(out, crdt.ActorID(a)) })
	slices.Sort(out)
	return out
}

// Entry returns a copy of actor's entry.
func (g *GCounter) Entry(actor crdt.ActorID) (Entry, bool) {
	if g == nil {
		return Entry{}, false
	}
	e := g.peek(actor)
	if e == nil {
		return Entry{}, false
	}
	return Entry{Seq: e.seq, Total: e.total, History: e.txns(e.nf(), uint32(e.size())), Folded: e.txns(0, e.nf()), Forgot: timeOf(e.forgot), Retired: e.retired, RetiredAt: timeOf(e.retiredAt)}, true
}

func timeOf(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// Horizon returns the newest TxnTime some actor has forgotten (zero for
// none): with Options.TxnTime, Apply refuses an unknown transaction not
// after it, as it may have been counted and forgotten.
func (g *GCounter) Horizon() time.Time {
	if g == nil {
		return time.Time{}
	}
	return timeOf(g.horizonNanos())
}

func (g *GCounter) horizonNanos() int64 {
	if g.horizonStale {
		g.horizon, g.horizonStale = g.base.forgot, false
		for _, e := range g.entries {
			g.horizon = max(g.horizon, e.forgot)
		}
		for i := 0; i < g.dorm.n(); i++ {
			_, _, forgot, _ := g.dorm.fields(i)
			g.horizon = max(g.horizon, forgot)
		}
	}
	return g.horizon
}

// checkTime returns txn's TxnTime (0 untimed), or wraps crdt.ErrInvalidTxnID.
func (g *GCounter) checkTime(txn crdt.TxnID) (int64, error) {
	if g.o.TxnTime == nil {
		return 0, nil
	}
	at, ok := g.txnTime(txn)
	if !ok {
		return 0, fmt.Errorf("%w: transaction %q has no time between 1970 and 2261 (Options.TxnTime)", crdt.ErrInvalidTxnID, txn)
	}
	if g.o.FutureSkew > 0 {
		if now := g.o.Clock(); at.After(now.Add(g.o.FutureSkew)) {
			return 0, fmt.Errorf("%w: transaction %q at %s is more than %v after now (%s)",
				crdt.ErrOutsideWindow, txn, at.Format(time.RFC3339Nano), g.o.FutureSkew, now.Format(time.RFC3339Nano))
		}
	}
	return at.UnixNano(), nil
}

// txnTime returns txn's time under Options.TxnTime when it lies in
// 1970..2261 (positive Unix nanoseconds); any other is no time, for Apply
// and forgetting alike, so a transaction without one never moves the horizon.
func (g *GCounter) txnTime(txn crdt.TxnID) (time.Time, bool) {
	at, ok := g.o.TxnTime(txn)
	if !ok || at.Year() < 1970 || at.Year() > 2261 || at.UnixNano() <= 0 {
		return time.Time{}, false
	}
	return at, true
}

// checkHorizon refuses an unknown txn whose time at is not after the horizon.
func (g *GCounter) checkHorizon(txn crdt.TxnID, at int64) error {
	if at != 0 && at <= g.horizonNanos() {
		return fmt.Errorf("%w: transaction %q at %s is not after %s, the newest transaction forgotten here: it may have been counted already",
			crdt.ErrOutsideWindow, txn, timeOf(at).Format(time.RFC3339Nano), g.Horizon().Format(time.RFC3339Nano))
	}
	return nil
}

// Status says where a transaction id is known.
type Status uint8

// The statuses reported by GCounter.Status and Counter.Status.
const (
	// Unknown means no actor holds the transaction: applying it counts it.
	Unknown Status = iota

	// InHistory means some history holds the transaction and none folded it.
	InHistory

	// Folded means some actor folded the transaction and still remembers it.
	Folded
)

// String returns the status name.
func (s Status) String() string {
	return name(s, "Status", [5]string{Unknown: "unknown", InHistory: "in history", Folded: "folded"})
}

// Status reports where txn is known, in O(1).
func (g *GCounter) Status(txn crdt.TxnID) Status {
	r := g.get(txn)
	if r == 0 {
		return Unknown
	}
	if _, f := g.counts(r); f > 0 {
		return Folded
	}
	return InHistory
}

// HasTransaction reports whether a history holds txn, in O(1) (a Folded one
// is not, though Apply recognises it).
func (g *GCounter) HasTransaction(txn crdt.TxnID) bool {
	r := g.get(txn)
	if r == 0 {
		return false
	}
	h, _ := g.counts(r)
	return h > 0
}

// Apply records transaction txn of amount (> 0) as written by actor. A
// transaction known with the same amount gives Duplicate or
// DuplicateFolded and changes nothing; else actor compacts its entry (see
// Compact) and appends txn, giving Applied. Errors (state unchanged): an
// invalid id, amount <= 0 (crdt.ErrInvalidAmount), txn known with another
// amount (crdt.ErrConflictingTransaction), overflow (crdt.ErrOverflow), too
// many actors or entries (crdt.ErrTooLarge); with Options.TxnTime, a txn
// without a time (crdt.ErrInvalidTxnID), or an unknown txn not after
// Horizon or more than FutureSkew ahead of the clock (crdt.ErrOutsideWindow).
func (g *GCounter) Apply(actor crdt.ActorID, txn crdt.TxnID, amount int64) (Outcome, error) {
	if err := validate(actor, txn, amount); err != nil {
		return 0, err
	}
	g.init()
	return g.apply(actor, txn, amount, amount)
}

// apply is Apply on g, a GCounter or a half, of magnitude mag and signed
// amount signed; a Counter's twin takes part in the checks.
func (g *GCounter) apply(actor crdt.ActorID, txn crdt.TxnID, mag, signed int64) (Outcome, error) {
	at, err := g.checkTime(txn)
	if err != nil {
		return 0, err
	}
	h := hashID(txn)
	if r := g.find(txn, h); r != 0 || g.twin.get(txn) != 0 {
		p, n, sign := g, g.twin, int64(1) // g's Counter's credit and debit halves, or g and nil
		if g.neg {
			p, n, sign = n, p, -1
		}
		var o Copy
		if r != 0 && len(g.cross) == 0 { // the common case: held in g only
			o = g.ownerCopy(r, sign)
		} else {
			o, _ = owner(p, n, txn)
		}
		return judge(p, n, txn, signed, o)
	}
	// The later horizon: a conflict's losing write may be forgotten in the twin.
	later := g
	if g.twin != nil && g.twin.horizonNanos() > g.horizonNanos() {
		later = g.twin
	}
	if err := later.checkHorizon(txn, at); err != nil {
		return 0, err
	}
	if err := g.checkSum(actor, mag, signed); err != nil {
		return 0, err
	}
	bound := applyBound(actor, txn)
	if !fitsCap(g.o.MaxEncodedSize-envelopeRoom, bound, g, g.twin) {
		return 0, tooLarge(fmt.Sprintf("applying %q", txn), g.o.MaxEncodedSize)
	}
	out, err := g.applyNew(actor, txn, h, mag, at)
	if err == nil {
		g.grown += bound
	}
	return out, err
}

func validate(actor crdt.ActorID, txn crdt.TxnID, amount int64) error {
	if err := actor.Validate(); err != nil {
		return err
	}
	if err := txn.Validate(); err != nil {
		return err
	}
	if amount <= 0 {
		return fmt.Errorf("%w: amount %d for transaction %q must be positive", crdt.ErrInvalidAmount, amount, txn)
	}
	return nil
}

// holdsAmount reports whether some holder's copy of r has amount.
func (g *GCounter) holdsAmount(r ref, amount int64) bool {
	if r&soloBit != 0 {
		return false // its only copy is the owner's
	}
	for _, l := range g.multi[r].holders {
		if e, p := g.itemOf(l); e.ring[p].amt == amount {
			return true
		}
	}
	return false
}

// applyNew applies txn (hash h, unknown to the index; time at, 0 untimed).
func (g *GCounter) applyNew(actor crdt.ActorID, txn crdt.TxnID, h uint64, amount, at int64) (Outcome, error) {
	e := g.entries[actor]
	if e == nil && g.dorm.n() > 0 {
		e = g.wakeActor(actor) // a retired actor writing again
	}
	if e == nil && (g.live() >= g.o.MaxActors || g.count() >= maxEntries) {
		return 0, fmt.Errorf("%w: adding actor %q would exceed %d live actors or %d entries", crdt.ErrTooLarge, actor, g.o.MaxActors, maxEntries)
	}
	if e != nil && e.retired && g.live() >= g.o.MaxActors {
		return 0, fmt.Errorf("%w: writing again as retired actor %q would exceed %d live actors", crdt.ErrTooLarge, actor, g.o.MaxActors)
	}
	if e != nil {
		if err := e.checkSeq(); err != nil {
			return 0, err
		}
		p, err := g.plan(e)
		if err != nil {
			return 0, err
		}
		if e.size()-len(p.drop)-len(p.unfold)-len(p.ageOut)+1 > MaxEntriesPerActor {
			return 0, fmt.Errorf("%w: actor %q would hold more than %d transactions", crdt.ErrTooLarge, actor, MaxEntriesPerActor)
		}
		g.commit(e, p)
	} else {
		e = newEntry(actor, 2, 0)
		g.attach(e)
	}
	// txn is unknown: it becomes a solo transaction of actor, counted once.
	p := e.tail & e.mask
	if e.size() == len(e.ring) || p >= uint32(len(e.ring)) { // full, or a decoded ring at its end
		g.growRing(e)
		p = e.tail & e.mask
	}
	g.addKey(tableKey(tagOf(h), soloBit|e.locAt(p))) // before the item is live, for rebuild
	e.ring[p] = item{amt: amount, tag: tagOf(h)}
	e.setID(p, txn)
	if at != 0 && e.times == nil {
		e.times = make([]int64, len(e.ring))
	}
	if e.times != nil {
		e.times[p] = at // so that forgetting txn need not parse its id again
	}
	e.tail++
	g.val.Add(amount)
	g.bump(e)
	return Applied, nil
}

// Compact does actor's housekeeping without adding a transaction: it drops
// duplicates another actor owns or counted, folds transactions beyond
// HistoryLength and forgets folded ids beyond FoldedLength no other actor
// holds. The value does not change. It reports whether the entry changed
// (its seq then increases). Only the entry's owner may call it.
func (g *GCounter) Compact(actor crdt.ActorID) (bool, error) {
	if err := actor.Validate(); err != nil {
		return false, err
	}
	g.init()
	return compactHalves(actor, g)
}

// checkSeq refuses to take e's seq past MaxSeq (wrapped, it would lose merges).
func (e *entry) checkSeq() error {
	if e.seq >= MaxSeq {
		return fmt.Errorf("%w: actor %q has sequence number %d, the largest allowed (MaxSeq); use another actor id", crdt.ErrOverflow, e.actor, e.seq)
	}
	return nil
}

// Clone returns a deep copy.
func (g *GCounter) Clone() *GCounter {
	if g == nil {
		g = new(GCounter)
	}
	g.init()
	c := &GCounter{o: g.o, ready: true, val: g.val, base: g.base, horizon: g.horizon, horizonStale: g.horizonStale, nretired: g.nretired, sized: g.sized, grown: g.grown,
		entries: make(map[crdt.ActorID]*entry, len(g.entries)),
		ents:    make([]*entry, len(g.ents)),
		afree:   slices.Clone(g.afree),
		tab:     g.tab.clone(),
		multi:   slices.Clone(g.multi),
		mfree:   slices.Clone(g.mfree),
		nmulti:  g.nmulti,
		dorm:    g.dorm, // never changed in place
	}
	for i, e := range g.ents {
		if e != nil {
			ce := e.clone() // same positions, so the index copies stay valid
			c.ents[i] = ce
			c.entries[ce.actor] = ce
		}
	}
	for m := range c.multi {
		c.multi[m].holders = slices.Clone(c.multi[m].holders)
	}
	return c
}

// Equal reports whether g and other hold the same entries.
func (g *GCounter) Equal(other *GCounter) bool {
	if g == nil || other == nil {
		return g.Len() == other.Len()
	}
	if g.count() != other.count() || g.base != other.base {
		return false
	}
	for e := range g.all() {
		if o := other.peek(e.actor); o == nil || compareEntries(e, o) != 0 {
			return false
		}
	}
	return true
}

// Leq reports whether g ≤ other in the merge order (each entry present in
// other, not newer): Merge(g, other) then equals other.
func (g *GCounter) Leq(other *GCounter) bool {
	if g == nil || other == nil {
		return g.Len() == 0 || other != nil
	}
	if g.base.compare(other.base) > 0 {
		return false
	}
	for e := range g.all() {
		o := other.peek(e.actor)
		if (o == nil && !e.inBase(other.base.cut)) || (o != nil && compareEntries(e, o) > 0) {
			return false // absent from other (and its base), or newer than other's
		}
	}
	return true
}

// mergePlan lists the entries of other that win over the receiver's.
type mergePlan struct {
	actors []crdt.ActorID
	newer  []*entry // clones from other
	// from's records picks (ascending, actors g lacks) join g's; prev: g's before.
	from  *dormant
	picks []int
	prev  dormant
	// With bases (Fold): the winning base, the actors whose entry it holds, and
	// whether retired entries below its cutoff go.
	base   base
	remove []crdt.ActorID
	drop   bool
}

// rebase reports a base change or removal: Merge then snapshots to undo.
func (mp *mergePlan) rebase(g *GCounter) bool {
	return mp.base != g.base || len(mp.remove) > 0
}

// prepareMerge finds other's winning entries and checks the limits;
// conflicting amounts are left to the owner rule (see Conflicts).
func (g *GCounter) prepareMerge(other *GCounter) (mergePlan, error) {
	g.init()
	var mp mergePlan
	live, retired := g.live(), g.nretired
	// The base with the larger cutoff wins (SPEC.md 6.10).
	mp.base = g.base
	if other.base.compare(g.base) > 0 {
		mp.base = other.base
	}
	cut := mp.base.cut
	if cut > g.base.cut {
		mp.drop = true
		for e := range g.all() {
			retired -= b2i(e.mergeDrops(cut))
		}
	}
	// win takes other's oe over de (nil: none) unless dropped; a base holding oe drops de.
	win := func(a crdt.ActorID, oe, de *entry) {
		kept := de != nil && !(mp.drop && de.mergeDrops(cut))
		if kept {
			live, retired = live-b2i(!de.retired), retired-b2i(de.retired)
		}
		if oe.mergeDrops(cut) {
			if kept {
				mp.remove = append(mp.remove, a)
			}
			return
		}
		live, retired = live+b2i(!oe.retired), retired+b2i(oe.retired)
		mp.actors = append(mp.actors, a)
		mp.newer = append(mp.newer, oe)
	}
	for a, oe := range other.entries {
		de := g.peek(a)
		if de != nil && compareEntries(oe, de) <= 0 {
			continue
		}
		if oe.size() > MaxEntriesPerActor {
			return mergePlan{}, fmt.Errorf("%w: actor %q holds %d transactions, limit %d", crdt.ErrTooLarge, a, oe.size(), MaxEntriesPerActor)
		}
		win(a, oe.clone(), de)
	}
	mp.from = &other.dorm
	for k := 0; k < other.dorm.n(); k++ {
		de, i, ok := g.locate(string(other.dorm.actor(k)))
		if ok && de == nil && bytes.Equal(g.dorm.rec(i), other.dorm.rec(k)) {
			continue // the same record: the same entry
		}
		if !ok {
			if _, _, _, at := other.dorm.fields(k); at == 0 || at >= cut || brokenMergeKeepsFolded {
				mp.picks = append(mp.picks, k)
				retired++
			}
			continue
		}
		oe := other.dorm.entry(k)
		if de == nil {
			de = g.dorm.entry(i)
		}
		if compareEntries(oe, de) > 0 {
			win(oe.actor, oe, de)
		}
	}
	if live+retired > maxEntries { // not MaxActors: siblings' union stays readable
		return mergePlan{}, fmt.Errorf("%w: merge would hold %d entries, limit %d", crdt.ErrTooLarge, live+retired, maxEntries)
	}
	return mp, nil
}

// applyMerge installs the winning entries (waking dormant losers first)
// and returns those they replaced (nil for new actors), for undoMerge.
func (g *GCounter) applyMerge(mp *mergePlan) []*entry {
	if mp.rebase(g) {
		for _, a := range mp.remove {
			e := g.entries[a]
			if e == nil {
				e = g.wakeActor(a)
			}
			g.swap(a, e, nil)
		}
		if mp.drop && !brokenMergeKeepsFolded {
			g.dropRetired(mp.base.cut) // the winning base holds them
		}
		g.val.SubInt128(g.base.total)
		g.val.AddInt128(mp.base.total)
		g.base = mp.base
		g.horizonStale = true
	}
	if g.dorm.n() > 0 {
		for _, a := range mp.actors {
			if g.entries[a] == nil {
				g.wakeActor(a)
			}
		}
	}
	mp.prev = g.dorm
	old := make([]*entry, len(mp.actors))
	for i, a := range mp.actors {
		old[i] = g.entries[a]
		g.swap(a, old[i], mp.newer[i])
	}
	if len(mp.picks) > 0 {
		for _, k := range mp.picks {
			_, total, forgot, _ := mp.from.fields(k)
			g.val.Add(total)
			g.horizon = max(g.horizon, forgot)
		}
		g.nretired += len(mp.picks)
		g.setDorm(g.dorm.with(mp.from, mp.picks))
	}
	return old
}

func (g *GCounter) undoMerge(mp *mergePlan, old []*entry) {
	if len(mp.picks) > 0 {
		for _, k := range mp.picks {
			_, total, _, _ := mp.from.fields(k)
			g.val.Sub(total)
		}
		g.nretired -= len(mp.picks)
		g.horizonStale = true
		g.setDorm(mp.prev)
	}
	for i := len(mp.actors) - 1; i >= 0; i-- {
		g.swap(mp.actors[i], mp.newer[i], old[i])
	}
}

// swap replaces actor's entry from with uninstalled to (either may be nil),
// keeping index and value in step.
func (g *GCounter) swap(actor crdt.ActorID, from, to *entry) {
	if from != nil {
		if from.forgot != 0 && from.forgot >= g.horizon {
			g.horizonStale = true
		}
		g.val.Sub(from.total)
		g.nretired -= b2i(from.retired)
		for off := uint32(0); off < uint32(from.size()); off++ {
			g.release(from, off)
		}
		if to == nil {
			g.detach(from)
		}
	}
	if to != nil {
		g.horizon = max(g.horizon, to.forgot)
		g.val.Add(to.total)
		g.nretired += b2i(to.retired)
		to.actor = actor
		g.order = nil
		to.times = nil // cached under another counter's options, perhaps
		if from != nil {
			to.aix = from.aix
			g.ents[to.aix] = to
			g.entries[actor] = to
		} else {
			g.attach(to)
		}
		for off := uint32(0); off < uint32(to.size()); off++ {
			to.ring[to.pos(off)].multi = notInstalled // so that find skips them
		}
		for off := uint32(0); off < uint32(to.size()); off++ {
			g.install(to, off)
		}
	}
}

// Merge sets g to the join of g and other, per actor the entry with the
// larger sequence number; other is never modified, and nil (or g) changes
// nothing. With a Base it is a join only among states that keep the
// grace-period assumption of SPEC.md 6.10 (see Fold). An id held with two
// amounts is not an error: the owner's copy counts (see Conflicts), and a
// value past int64 is kept (see Value). The
// one error, g unchanged: more than MaxActorsLimit + MaxRetired entries
// (crdt.ErrTooLarge).
func (g *GCounter) Merge(other *GCounter) error {
	if other == nil || other == g {
		return nil
	}
	_, err := mergeHalves([]*GCounter{g}, []*GCounter{other})
	return err
}

// mergeHalves merges from into into half by half, all or nothing.
func mergeHalves(into, from []*GCounter) (newer [2][]*entry, err error) {
	var plans [2]mergePlan
	rebase := false
	for i, g := range into {
		if plans[i], err = g.prepareMerge(from[i]); err != nil {
			return newer, err
		}
		rebase = rebase || plans[i].rebase(g)
	}
	var snaps [2]*GCounter
	if rebase { // rare: a base changes (see Fold)
		for i, g := range into {
			snaps[i] = g.Clone()
		}
	}
	var old [2][]*entry
	for i, g := range into {
		old[i] = g.applyMerge(&plans[i])
	}
	grown := 0
	for i := range into {
		grown += plans[i].bound()
	}
	if !fitsCap(bodyLimit, grown, into...) {
		err = tooLarge("merging", crdt.DefaultMaxEncodedSize)
	}
	for i := len(into) - 1; i >= 0; i-- {
		switch g := into[i]; {
		case err == nil:
			g.grown += plans[i].bound()
			newer[i] = plans[i].newer
		case rebase:
			twin, neg, cross := g.twin, g.neg, g.cross // Clone leaves them out
			*g = *snaps[i]
			g.twin, g.neg, g.cross = twin, neg, cross
		default:
			g.undoMerge(&plans[i], old[i])
		}
	}
	return newer, err
}

// bound bounds the encoding the winning entries add.
func (mp mergePlan) bound() int {
	n := baseBound
	for _, e := range mp.newer {
		n += entryBound(e)
	}
	for _, k := range mp.picks {
		n += len(mp.from.rec(k))
	}
	return n
}

var _ crdt.State[*GCounter] = (*GCounter)(nil)
var _ crdt.Valuer = (*GCounter)(nil)

func (g *GCounter) live() int { return g.count() - g.nretired }

// fits reports whether a 128-bit value is representable as an int64.
func fits(a exact.Int128) bool { _, ok := a.Int64(); return ok }

// add adds v to a and returns it.
func add(a *exact.Int128, v int64) exact.Int128 { a.Add(v); return *a }

// checkSum refuses (crdt.ErrOverflow) an Apply of a new transaction of
// magnitude mag (signed: its sign) by actor after which actor's own sum
// (its total and history) would not fit in int64, or the counter's value
// (a Counter's, for a half) would not, unless it was already out of range
// and the change moves it towards int64 (SPEC.md 6.3 step 5).
func (g *GCounter) checkSum(actor crdt.ActorID, mag, signed int64) error {
	v := g.val
	if g.twin != nil {
		p, n := g, g.twin
		if g.neg {
			p, n = n, p
		}
		v = value(p, n, g.cross)
	}
	if next := v; !fits(add(&next, signed)) && (fits(v) || (v.Clamp() > 0) == (signed > 0)) {
		return fmt.Errorf("%w: adding %d to %s", crdt.ErrOverflow, signed, v.Big())
	}
	if w := g.val; g.solo() && fits(add(&w, mag)) {
		return nil // each item counted once: actor's sum is at most the half's value
	}
	sum := exact.Int128{}
	if e, i, ok := g.locate(string(actor)); e != nil {
		sum.Add(e.total)
		for off := e.nf(); off < uint32(e.size()); off++ {
			sum.Add(e.ring[e.pos(off)].amt)
		}
	} else if ok {
		_, t, _, _ := g.dorm.fields(i)
		sum.Add(t)
	}
	if !fits(add(&sum, mag)) {
		return fmt.Errorf("%w: actor %q would hold more than %d in total", crdt.ErrOverflow, actor, int64(math.MaxInt64))
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sorted returns the entries by actor, cached until one is added or removed.
func (g *GCounter) sorted() []*entry {
	if g.order == nil || len(g.order) != len(g.entries) {
		g.order = slices.AppendSeq(make([]*entry, 0, len(g.entries)), maps.Values(g.entries))
		slices.SortFunc(g.order, func(a, b *entry) int { return strings.Compare(string(a.actor), string(b.actor)) })
		g.segs = nil
	}
	return g.order
}

// bump records an owner's change of e (entry.bump), reviving a retired e.
func (g *GCounter) bump(e *entry) {
	if e.retired {
		g.nretired--
		g.segs = nil
	}
	e.bump()
}

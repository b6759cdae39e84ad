package tpncounter

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
)

// Outcome says what Apply did with a transaction.
type Outcome uint8

// The outcomes of Apply. Every outcome other than Applied leaves the state
// unchanged; none of them is an error, because a retry is expected.
const (
	// Applied means the transaction was new and is now counted once.
	Applied Outcome = iota + 1

	// Duplicate means the transaction is already held in some actor's
	// history with the same amount; it is counted once and nothing changed.
	Duplicate

	// DuplicateFolded means the transaction was recognised through a folded
	// record: it is already counted in an actor's total and nothing changed.
	// It also warns that the retry arrived late, near the edge of the window
	// (see the package documentation).
	DuplicateFolded
)

// String returns the outcome's name.
func (o Outcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Duplicate:
		return "duplicate"
	case DuplicateFolded:
		return "duplicate (folded)"
	default:
		return fmt.Sprintf("Outcome(%d)", uint8(o))
	}
}

// Txn is one transaction held in an actor's history or folded record. Amount
// is the magnitude (always positive; a Counter keeps debits in its N half).
type Txn struct {
	ID     crdt.TxnID
	Amount int64
}

// Entry is a copy of one actor's part of a GCounter: its sequence number, the
// total of the transactions it folded, its recent history (oldest first) and
// its record of recently folded transactions (oldest first).
type Entry struct {
	Seq     uint64
	Total   int64
	History []Txn
	Folded  []Txn
	// Forgot is the newest time (Options.TxnTime) of a transaction this
	// actor has forgotten; zero when it has forgotten none with a time.
	Forgot time.Time
}

type entry struct {
	seq    uint64
	total  int64
	forgot int64 // Unix nanoseconds; 0 for none (see Entry.Forgot)
	hist   []item
	folded []item
	// hbuf and fbuf are the whole backing arrays of hist and folded when
	// appendItem allocated them (nil otherwise), so that a full slice whose
	// front was sliced off can slide back instead of reallocating.
	hbuf, fbuf []item
}

// item is a transaction in an entry together with its index record, so that
// folding and forgetting need no index lookup.
type item struct {
	Txn
	r   slot
	tag uint32 // the top half of the id's hash: with r, its index table entry
}

// key returns the index table entry of t (see index).
func (t item) key() uint64 { return uint64(t.tag)<<32 | uint64(t.r) }

// setKey sets t's record from its index table entry k.
func (t *item) setKey(k uint64) { t.r, t.tag = slot(k), uint32(k>>32) }

// clone copies e; its slots stay valid in a clone of the index
// (GCounter.Clone) and are reassigned by swap.
func (e *entry) clone() *entry {
	return &entry{seq: e.seq, total: e.total, forgot: e.forgot, hist: slices.Clone(e.hist), folded: slices.Clone(e.folded)}
}

// appendItem appends x to s, which lives at the tail of *buf when appendItem
// allocated it. Histories are queues (folding slices off the front,
// appending at the back), so when s is full it first slides back to the
// start of *buf if that frees at least half of it, and otherwise moves to a
// new array twice its length; either way the cost per append is O(1)
// amortised with no allocation in the steady state.
func appendItem(s []item, buf *[]item, x item) []item {
	if len(s) < cap(s) {
		return append(s, x)
	}
	b := *buf
	if n := len(s); cap(b) > 2*n && cap(s) > 0 && &s[:cap(s)][cap(s)-1] == &b[:cap(b)][cap(b)-1] {
		b = b[:cap(b)]
		copy(b, s)
		clear(b[n:]) // drop stale references for the collector
		return append(b[:n], x)
	}
	b = make([]item, len(s), 2*len(s)+4)
	copy(b, s)
	*buf = b
	return append(b, x)
}

func txns(items []item) []Txn {
	out := make([]Txn, len(items))
	for i, it := range items {
		out[i] = it.Txn
	}
	return out
}

func (e *entry) size() int { return len(e.hist) + len(e.folded) }

// compareEntries orders two entries of one actor: by seq, then (only when an
// actor has forked, see the package documentation) by content, so that Merge
// picks the same winner in every order.
func compareEntries(a, b *entry) int {
	if c := cmp.Compare(a.seq, b.seq); c != 0 {
		return c
	}
	if c := cmp.Compare(a.total, b.total); c != 0 {
		return c
	}
	if c := cmp.Compare(a.forgot, b.forgot); c != 0 {
		return c
	}
	if c := slices.CompareFunc(a.hist, b.hist, compareItem); c != 0 {
		return c
	}
	return slices.CompareFunc(a.folded, b.folded, compareItem)
}

func compareItem(a, b item) int {
	if c := cmp.Compare(a.ID, b.ID); c != 0 {
		return c
	}
	return cmp.Compare(a.Amount, b.Amount)
}

// holding records that one actor holds a transaction, in its history or in
// its folded record.
type holding struct {
	actor  crdt.ActorID
	folded bool
}

// ref is the index record of one transaction: its amount and every actor
// that holds it. An actor holds a transaction at most once.
//
// It lives in index.recs (see index) and is 64 bytes, one cache line.
type ref struct {
	amt  int64
	h    uint64     // hash of id
	id   crdt.TxnID // "" in a free slot
	next slot       // the next free slot, in a free slot
	// The holder when there is exactly one; empty when two or more actors
	// hold the record (index.more has them).
	one [1]holding
}

func (ix *index) counts(s slot) (inHist, inFolded int) {
	for _, h := range ix.holders(s) {
		if h.folded {
			inFolded++
		} else {
			inHist++
		}
	}
	return
}

// addContrib adds sign times the transaction's contribution to the value: its
// amount when it is held only in histories; when actors folded it, their
// totals already count it, and every fold beyond the first is a double count
// that is corrected here.
func (ix *index) addContrib(s slot, a *exact.Int128, sign int64, v variant) {
	h, f := ix.counts(s)
	r := ix.at(s)
	if v == variantCountEveryCopy {
		a.Add(sign * int64(h) * r.amt)
		return
	}
	switch {
	case f == 0 && h > 0:
		a.Add(sign * r.amt)
	case f > 1:
		for i := 1; i < f; i++ {
			a.Add(-sign * r.amt)
		}
	}
}

// GCounter is a grow-only counter of transactions (the TGCounter): every
// actor owns one entry holding a folded total, its recent transactions and a
// record of recently folded ones. Its value counts every distinct transaction
// once however many actors hold it. See the package documentation for the
// rules that keep this exact while histories fold.
//
// The zero value is an empty counter with default Options. A GCounter is not
// safe for concurrent use; callers serialise access.
type GCounter struct {
	o         Options
	ready     bool
	entries   map[crdt.ActorID]*entry
	ix        index
	contested map[crdt.TxnID]struct{} // held by two or more actors
	val       exact.Int128
	variant   variant
	// horizon is the largest entry.forgot; horizonStale says it must be
	// recomputed because an entry holding it was replaced.
	horizon      int64
	horizonStale bool
	// ageBuf and agedBuf are reused as plan.ageOut and plan.aged by the
	// next plan, so that steady-state folding does not allocate. A plan is
	// used before the next one is made on the same counter.
	ageBuf  []crdt.TxnID
	agedBuf []uint64
}

// variant selects a deliberately broken rule set. It exists only so that the
// tests can show the simulation catches the failures the package
// documentation describes; it is never set outside tests.
type variant uint8

const (
	correctRules variant = iota
	// variantCountEveryCopy counts a transaction once per actor holding it,
	// as the gem does by adding the amount to the total at apply time.
	variantCountEveryCopy
	// variantForgetOnFold forgets a transaction as soon as it is folded,
	// even while another actor still holds it (no deferred forgetting).
	variantForgetOnFold
)

// NewGCounter returns an empty GCounter with the given options. The error
// wraps crdt.ErrInvalidConfig.
func NewGCounter(opts Options) (*GCounter, error) {
	o, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	return &GCounter{o: o, ready: true, entries: map[crdt.ActorID]*entry{}, ix: newIndex(0), contested: map[crdt.TxnID]struct{}{}}, nil
}

func (g *GCounter) init() {
	if g.ready {
		return
	}
	o, err := g.o.resolved()
	if err != nil {
		o, _ = Options{}.resolved()
	}
	g.o, g.ready = o, true
	g.entries = map[crdt.ActorID]*entry{}
	g.ix = newIndex(0)
	g.contested = map[crdt.TxnID]struct{}{}
}

// Options returns the counter's options with defaults filled in.
func (g *GCounter) Options() Options {
	g.init()
	return g.o
}

// Value returns the sum of every actor's folded total plus every distinct
// transaction held only in histories, each counted once. It never overflows:
// Apply and Merge refuse states whose value would not fit in an int64.
func (g *GCounter) Value() int64 { v, _ := g.val.Int64(); return v } // Apply and Merge keep it in range

// Len returns the number of actors with an entry.
func (g *GCounter) Len() int { return len(g.entries) }

// Actors returns the actors with an entry, sorted.
func (g *GCounter) Actors() []crdt.ActorID {
	out := make([]crdt.ActorID, 0, len(g.entries))
	for a := range g.entries {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// Entry returns a copy of actor's entry.
func (g *GCounter) Entry(actor crdt.ActorID) (Entry, bool) {
	e, ok := g.entries[actor]
	if !ok {
		return Entry{}, false
	}
	return Entry{Seq: e.seq, Total: e.total, History: txns(e.hist), Folded: txns(e.folded), Forgot: timeOf(e.forgot)}, true
}

func timeOf(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// Horizon returns the newest time (Options.TxnTime) of a transaction some
// actor has forgotten, or the zero time when none has been. With
// Options.TxnTime set, Apply refuses a transaction it does not know whose
// time is not after the horizon, since it may be one that was counted and
// forgotten.
func (g *GCounter) Horizon() time.Time { return timeOf(g.horizonNanos()) }

func (g *GCounter) horizonNanos() int64 {
	if g.horizonStale {
		g.horizon, g.horizonStale = 0, false
		for _, e := range g.entries {
			g.horizon = max(g.horizon, e.forgot)
		}
	}
	return g.horizon
}

// checkTime returns the time of txn when Options.TxnTime is set (0
// otherwise), and an error wrapping crdt.ErrInvalidTxnID when it gives none.
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

// txnTime returns txn's time under Options.TxnTime when it gives one in
// 1970..2261 (so that its Unix nanoseconds are a positive int64); any other
// answer is no time. Apply and forgetting use the same rule, so a
// transaction that reached the counter without a valid time (by Merge or
// decoding) never moves the horizon.
func (g *GCounter) txnTime(txn crdt.TxnID) (time.Time, bool) {
	at, ok := g.o.TxnTime(txn)
	if !ok || at.Year() < 1970 || at.Year() > 2261 || at.UnixNano() <= 0 {
		return time.Time{}, false
	}
	return at, true
}

// checkHorizon refuses a transaction the counter does not know whose time
// at (from checkTime) is not after the horizon.
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
	// Unknown means no actor holds the transaction: it was never applied or
	// it has left every history and folded record. Applying it counts it.
	Unknown Status = iota

	// InHistory means some actor holds the transaction in its history and
	// none has folded it yet.
	InHistory

	// Folded means some actor has folded the transaction into its total and
	// still remembers it; a retry is recognised as DuplicateFolded.
	Folded
)

// String returns the status name.
func (s Status) String() string {
	switch s {
	case Unknown:
		return "unknown"
	case InHistory:
		return "in history"
	case Folded:
		return "folded"
	default:
		return fmt.Sprintf("Status(%d)", uint8(s))
	}
}

// Status reports where txn is known, in O(1).
func (g *GCounter) Status(txn crdt.TxnID) Status {
	s := g.ix.get(txn)
	if s == 0 {
		return Unknown
	}
	if _, f := g.ix.counts(s); f > 0 {
		return Folded
	}
	return InHistory
}

// HasTransaction reports whether txn is held in some actor's history, in
// O(1). A transaction that was folded (Status Folded) is not "in history",
// matching the gem's has_transaction?; Apply still recognises it.
func (g *GCounter) HasTransaction(txn crdt.TxnID) bool {
	s := g.ix.get(txn)
	if s == 0 {
		return false
	}
	for _, h := range g.ix.holders(s) {
		if !h.folded {
			return true
		}
	}
	return false
}

// amountOf returns the amount recorded for txn, if any actor holds it.
func (g *GCounter) amountOf(txn crdt.TxnID) (int64, bool) {
	if s := g.ix.get(txn); s != 0 {
		return g.ix.at(s).amt, true
	}
	return 0, false
}

// Apply records transaction txn of amount (> 0) as written by actor. The
// duplicate check is one index lookup. When the transaction is already known
// with the same amount, Apply returns Duplicate or DuplicateFolded and changes
// nothing. Otherwise actor first compacts its own entry (see Compact) and then
// appends txn to its history, returning Applied.
//
// Errors (state unchanged): an invalid actor or txn id, amount <= 0
// (crdt.ErrInvalidAmount), txn known with another amount
// (crdt.ErrConflictingTransaction), a value that would overflow
// (crdt.ErrOverflow), too many actors or entries (crdt.ErrTooLarge). With
// Options.TxnTime: a txn without a time (crdt.ErrInvalidTxnID), and an
// unknown txn whose time is not after Horizon or more than FutureSkew ahead
// of the clock (crdt.ErrOutsideWindow).
func (g *GCounter) Apply(actor crdt.ActorID, txn crdt.TxnID, amount int64) (Outcome, error) {
	if err := validate(actor, txn, amount); err != nil {
		return 0, err
	}
	g.init()
	at, err := g.checkTime(txn)
	if err != nil {
		return 0, err
	}
	h := hashID(txn)
	if s := g.ix.find(txn, h); s != 0 {
		return known(txn, &g.ix, s, amount)
	}
	if err := g.checkHorizon(txn, at); err != nil {
		return 0, err
	}
	return g.applyNew(actor, txn, h, amount)
}

func validate(actor crdt.ActorID, txn crdt.TxnID, amount int64) error {
	if !printableASCII(string(actor)) {
		if err := actor.Validate(); err != nil {
			return err
		}
	}
	if !printableASCII(string(txn)) {
		if err := txn.Validate(); err != nil {
			return err
		}
	}
	if amount <= 0 {
		return fmt.Errorf("%w: amount %d for transaction %q must be positive", crdt.ErrInvalidAmount, amount, txn)
	}
	return nil
}

// printableASCII is a fast path of crdt id validation: a non-empty id of at
// most crdt.MaxIDLen printable ASCII bytes is valid. Anything else goes
// through the full check.
func printableASCII(s string) bool {
	if len(s) == 0 || len(s) > crdt.MaxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

func known(txn crdt.TxnID, ix *index, s slot, amount int64) (Outcome, error) {
	r := ix.at(s)
	if r.amt != amount {
		return 0, fmt.Errorf("%w: transaction %q has amount %d, retried with %d", crdt.ErrConflictingTransaction, txn, r.amt, amount)
	}
	if _, f := ix.counts(s); f > 0 {
		return DuplicateFolded, nil
	}
	return Duplicate, nil
}

// applyNew applies txn, whose hash is h and which the index does not hold.
func (g *GCounter) applyNew(actor crdt.ActorID, txn crdt.TxnID, h uint64, amount int64) (Outcome, error) {
	e := g.entries[actor]
	if e == nil && len(g.entries) >= g.o.MaxActors {
		return 0, fmt.Errorf("%w: adding actor %q would exceed %d actors", crdt.ErrTooLarge, actor, g.o.MaxActors)
	}
	next := g.val
	next.Add(amount)
	if _, ok := next.Int64(); !ok {
		return 0, fmt.Errorf("%w: adding %d to %d", crdt.ErrOverflow, amount, g.Value())
	}
	var p plan
	if e != nil {
		var err error
		if p, err = g.plan(actor, e); err != nil {
			return 0, err
		}
		if e.size()-len(p.drop)-len(p.unfold)-len(p.ageOut)+1 > MaxEntriesPerActor {
			return 0, fmt.Errorf("%w: actor %q would hold more than %d transactions", crdt.ErrTooLarge, actor, MaxEntriesPerActor)
		}
		g.commit(actor, e, p)
	} else {
		e = &entry{}
		g.entries[actor] = e
	}
	// txn is absent from the index (Apply looked).
	s := g.ix.insert(txn, h, amount, holding{actor: actor})
	g.val.Add(amount)
	e.hist = appendItem(e.hist, &e.hbuf, item{Txn{ID: txn, Amount: amount}, s, uint32(h >> 32)})
	e.seq++
	return Applied, nil
}

// Compact performs actor's housekeeping on its own entry without adding a
// transaction, as a Find does: it drops duplicates that another actor owns
// or has counted, folds the oldest transactions beyond HistoryLength into its
// total, and forgets folded ids beyond FoldedLength that no other actor still
// holds. The value does not change. It reports whether the entry changed (its
// sequence number then increases). Only the entry's owner may call it.
func (g *GCounter) Compact(actor crdt.ActorID) (bool, error) {
	if err := actor.Validate(); err != nil {
		return false, err
	}
	g.init()
	e := g.entries[actor]
	if e == nil {
		return false, nil
	}
	p, err := g.plan(actor, e)
	if err != nil {
		return false, err
	}
	if p.empty() {
		return false, nil
	}
	g.commit(actor, e, p)
	e.seq++
	return true, nil
}

// plan is the housekeeping an actor is about to do on its entry.
type plan struct {
	drop   []crdt.TxnID // history items owned or counted by another actor
	unfold []crdt.TxnID // folded items another (smaller) actor also folded
	fold   int          // how many of the oldest remaining history items to fold
	ageOut []crdt.TxnID // folded ids to forget
	aged   []uint64     // their index table entries (item.key)
	total  int64        // the entry's total afterwards
	forgot int64        // the entry's forgot afterwards
}

func (p plan) empty() bool {
	return len(p.drop) == 0 && len(p.unfold) == 0 && p.fold == 0 && len(p.ageOut) == 0
}

// plan computes actor's housekeeping without changing anything.
func (g *GCounter) plan(actor crdt.ActorID, e *entry) (plan, error) {
	p := plan{ageOut: g.ageBuf[:0], aged: g.agedBuf[:0]}
	defer func() { g.ageBuf, g.agedBuf = p.ageOut[:0], p.aged[:0] }()
	if len(g.contested) > 0 {
		if len(g.contested) <= e.size() {
			for x := range g.contested {
				g.classify(actor, x, &p)
			}
		} else {
			for _, t := range e.hist {
				g.classify(actor, t.ID, &p)
			}
			for _, t := range e.folded {
				g.classify(actor, t.ID, &p)
			}
		}
	}
	if n := len(e.hist) - len(p.drop) - g.o.HistoryLength; n > 0 {
		p.fold = n
	}
	var total exact.Int128
	total.Add(e.total)
	for _, x := range p.unfold {
		total.Sub(g.ix.at(g.ix.get(x)).amt)
	}
	// The folded record after unfolding and folding, oldest first: the old
	// record minus the unfolded items, then the newly folded items.
	excess := len(e.folded) - len(p.unfold) + p.fold - g.o.FoldedLength
	forgetAll := g.variant == variantForgetOnFold
	solo := g.solo()
	if forgetAll {
		excess = len(e.folded) + p.fold
	}
	for _, t := range e.folded {
		if excess <= 0 {
			break
		}
		if slices.Contains(p.unfold, t.ID) {
			continue
		}
		if forgetAll || solo || g.ix.single(t.r) {
			p.ageOut, p.aged = append(p.ageOut, t.ID), append(p.aged, t.key())
			excess--
		}
	}
	folded := 0
	for _, t := range e.hist {
		if folded == p.fold {
			break
		}
		if len(p.drop) > 0 && slices.Contains(p.drop, t.ID) {
			continue
		}
		folded++
		total.Add(t.Amount)
		if excess > 0 && (forgetAll || solo || g.ix.single(t.r)) {
			p.ageOut, p.aged = append(p.ageOut, t.ID), append(p.aged, t.key())
			excess--
		}
	}
	t, ok := total.Int64()
	if !ok || t < 0 {
		return plan{}, fmt.Errorf("%w: folding into the total of actor %q", crdt.ErrOverflow, actor)
	}
	p.total = t
	p.forgot = e.forgot
	if g.o.TxnTime != nil {
		for _, x := range p.ageOut {
			if at, ok := g.txnTime(x); ok {
				p.forgot = max(p.forgot, at.UnixNano())
			}
		}
	}
	return p, nil
}

// classify applies the duplicate rules to one contested transaction x, if
// actor holds it:
//   - held in actor's history and folded by another actor: drop it (that
//     actor's total counts it);
//   - held in actor's history and in the history of a smaller actor id:
//     drop it (the smallest holder owns it);
//   - folded by actor and by a smaller actor id: unfold it (the smaller
//     actor's total counts it).
func (g *GCounter) classify(actor crdt.ActorID, x crdt.TxnID, p *plan) {
	hold := g.ix.holders(g.ix.get(x))
	if len(hold) < 2 {
		return
	}
	own := -1
	for i, h := range hold {
		if h.actor == actor {
			own = i
			break
		}
	}
	if own < 0 {
		return
	}
	mine := hold[own]
	for i, h := range hold {
		if i == own {
			continue
		}
		switch {
		case !mine.folded && h.folded, !mine.folded && h.actor < actor:
			p.drop = append(p.drop, x)
			return
		case mine.folded && h.folded && h.actor < actor:
			p.unfold = append(p.unfold, x)
			return
		}
	}
}

// commit carries out p on actor's entry e and keeps the index and value in
// step. The value does not change.
func (g *GCounter) commit(actor crdt.ActorID, e *entry, p plan) {
	solo := g.solo()
	if len(p.drop) > 0 {
		e.hist = slices.DeleteFunc(e.hist, func(t item) bool { return slices.Contains(p.drop, t.ID) })
		for _, x := range p.drop {
			g.dropHold(x, actor)
		}
	}
	if len(p.unfold) > 0 {
		e.folded = slices.DeleteFunc(e.folded, func(t item) bool { return slices.Contains(p.unfold, t.ID) })
		for _, x := range p.unfold {
			g.dropHold(x, actor)
		}
	}
	g.val.Add(p.total - e.total)
	e.total = p.total
	e.forgot = p.forgot
	if !g.horizonStale {
		g.horizon = max(g.horizon, p.forgot)
	}
	for _, t := range e.hist[:p.fold] {
		e.folded = appendItem(e.folded, &e.fbuf, t)
		if solo {
			// actor is the only holder: its total now counts t, which
			// no longer counts on its own (see addContrib).
			g.ix.recs[t.r].one[0].folded = true
			g.val.Sub(t.Amount)
		} else {
			g.setFolded(t.r, actor)
		}
	}
	e.hist = e.hist[p.fold:]
	if len(p.ageOut) > 0 {
		// The common case forgets a prefix; slice it off without copying.
		k := 0
		for k < len(e.folded) && k < len(p.ageOut) && e.folded[k].ID == p.ageOut[k] {
			k++
		}
		rest := p.ageOut[k:]
		e.folded = e.folded[k:]
		if len(rest) > 0 {
			e.folded = slices.DeleteFunc(e.folded, func(t item) bool { return slices.Contains(rest, t.ID) })
		}
		for i, x := range p.ageOut {
			if solo {
				// actor is the only holder and has folded x: forgetting it
				// changes neither the value nor the contested set.
				g.ix.removeKey(p.aged[i])
			} else {
				g.dropRef(x, p.aged[i], actor)
			}
		}
	}
}

// addHold, dropHold and setFolded change one transaction's holders and keep
// the value and the contested set in step. addHold returns the index table
// entry of x (see item.key).
func (g *GCounter) addHold(x crdt.TxnID, amt int64, h holding) uint64 {
	hx := hashID(x)
	s := g.ix.find(x, hx)
	if s == 0 {
		s = g.ix.insert(x, hx, amt, h)
		g.ix.addContrib(s, &g.val, 1, g.variant)
		return tagOf(hx) | uint64(s)
	}
	g.ix.addContrib(s, &g.val, -1, g.variant)
	g.ix.addHolder(s, h)
	g.ix.addContrib(s, &g.val, 1, g.variant)
	g.contest(x, s)
	return tagOf(hx) | uint64(s)
}

func (g *GCounter) dropHold(x crdt.TxnID, actor crdt.ActorID) {
	if s := g.ix.get(x); s != 0 {
		g.dropRef(x, g.ix.key(s), actor)
	}
}

// dropRef drops actor's hold of x, whose index table entry is k.
func (g *GCounter) dropRef(x crdt.TxnID, k uint64, actor crdt.ActorID) {
	s := slot(k)
	g.ix.addContrib(s, &g.val, -1, g.variant)
	left := g.ix.dropHolder(s, actor)
	g.ix.addContrib(s, &g.val, 1, g.variant)
	if left == 0 {
		g.ix.removeKey(k)
		if len(g.contested) > 0 {
			delete(g.contested, x)
		}
		return
	}
	g.contest(x, s)
}

func (g *GCounter) setFolded(s slot, actor crdt.ActorID) {
	g.ix.addContrib(s, &g.val, -1, g.variant)
	hold := g.ix.holders(s)
	for i := range hold {
		if hold[i].actor == actor {
			hold[i].folded = true
		}
	}
	g.ix.addContrib(s, &g.val, 1, g.variant)
}

// solo reports whether every transaction has exactly one holder (none is
// contested) under the correct rules: the housekeeping of an entry then
// needs to read no index record to know who holds its transactions, which
// saves cache misses on a large index.
func (g *GCounter) solo() bool { return len(g.contested) == 0 && g.variant == correctRules }

// contest keeps x in the contested set exactly while two or more actors
// hold it.
func (g *GCounter) contest(x crdt.TxnID, s slot) {
	if !g.ix.single(s) {
		g.contested[x] = struct{}{}
	} else if len(g.contested) > 0 {
		delete(g.contested, x)
	}
}

// Clone returns a deep copy.
func (g *GCounter) Clone() *GCounter {
	g.init()
	c := &GCounter{o: g.o, ready: true, val: g.val, variant: g.variant, horizon: g.horizon, horizonStale: g.horizonStale,
		entries:   make(map[crdt.ActorID]*entry, len(g.entries)),
		ix:        g.ix.clone(),
		contested: make(map[crdt.TxnID]struct{}, len(g.contested)),
	}
	for a, e := range g.entries {
		c.entries[a] = e.clone() // the slots are the same in c.ix
	}
	for x := range g.contested {
		c.contested[x] = struct{}{}
	}
	return c
}

// Equal reports whether g and other hold the same entries.
func (g *GCounter) Equal(other *GCounter) bool {
	if len(g.entries) != len(other.entries) {
		return false
	}
	for a, e := range g.entries {
		o, ok := other.entries[a]
		if !ok || compareEntries(e, o) != 0 {
			return false
		}
	}
	return true
}

// Leq reports whether g ≤ other in the merge order: every entry of g is
// present in other with a sequence number at least as large (and the same
// content when equal). Merge(g, other) then equals other.
func (g *GCounter) Leq(other *GCounter) bool {
	for a, e := range g.entries {
		o, ok := other.entries[a]
		if !ok || compareEntries(e, o) > 0 {
			return false
		}
	}
	return true
}

// mergePlan lists the entries of other that win over the receiver's.
type mergePlan struct {
	actors []crdt.ActorID
	newer  []*entry // clones from other
}

// prepareMerge finds the winning entries of other and checks that taking
// them keeps the counter within its limits and free of conflicting amounts.
// conflict reports whether a transaction id is also used by the other half
// of a Counter.
func (g *GCounter) prepareMerge(other *GCounter, conflict func(crdt.TxnID) bool) (mergePlan, error) {
	g.init()
	var mp mergePlan
	added := 0
	for a, oe := range other.entries {
		de, ok := g.entries[a]
		if ok && compareEntries(oe, de) <= 0 {
			continue
		}
		if !ok {
			added++
		}
		if oe.size() > MaxEntriesPerActor {
			return mergePlan{}, fmt.Errorf("%w: actor %q holds %d transactions, limit %d", crdt.ErrTooLarge, a, oe.size(), MaxEntriesPerActor)
		}
		for _, list := range [2][]item{oe.hist, oe.folded} {
			for _, t := range list {
				if s := g.ix.get(t.ID); s != 0 && g.ix.at(s).amt != t.Amount {
					return mergePlan{}, fmt.Errorf("%w: transaction %q has amount %d here and %d in actor %q", crdt.ErrConflictingTransaction, t.ID, g.ix.at(s).amt, t.Amount, a)
				}
				if conflict != nil && conflict(t.ID) {
					return mergePlan{}, fmt.Errorf("%w: transaction %q is both a credit and a debit", crdt.ErrConflictingTransaction, t.ID)
				}
			}
		}
		mp.actors = append(mp.actors, a)
		mp.newer = append(mp.newer, oe.clone())
	}
	if len(g.entries)+added > g.o.MaxActors {
		return mergePlan{}, fmt.Errorf("%w: merge would hold %d actors, limit %d", crdt.ErrTooLarge, len(g.entries)+added, g.o.MaxActors)
	}
	return mp, nil
}

// applyMerge installs the winning entries and returns the entries they
// replaced (nil for new actors), for undoMerge.
func (g *GCounter) applyMerge(mp mergePlan) []*entry {
	old := make([]*entry, len(mp.actors))
	for i, a := range mp.actors {
		old[i] = g.entries[a]
		g.swap(a, old[i], mp.newer[i])
	}
	return old
}

func (g *GCounter) undoMerge(mp mergePlan, old []*entry) {
	for i := len(mp.actors) - 1; i >= 0; i-- {
		g.swap(mp.actors[i], mp.newer[i], old[i])
	}
}

// swap replaces actor's entry from with to (either may be nil).
func (g *GCounter) swap(actor crdt.ActorID, from, to *entry) {
	if from != nil {
		if from.forgot != 0 && from.forgot >= g.horizon {
			g.horizonStale = true
		}
		g.val.Sub(from.total)
		for _, t := range from.hist {
			g.dropHold(t.ID, actor)
		}
		for _, t := range from.folded {
			g.dropHold(t.ID, actor)
		}
		delete(g.entries, actor)
	}
	if to != nil {
		if !g.horizonStale {
			g.horizon = max(g.horizon, to.forgot)
		}
		g.val.Add(to.total)
		for i, t := range to.hist {
			to.hist[i].setKey(g.addHold(t.ID, t.Amount, holding{actor: actor}))
		}
		for i, t := range to.folded {
			to.folded[i].setKey(g.addHold(t.ID, t.Amount, holding{actor: actor, folded: true}))
		}
		g.entries[actor] = to
	}
}

// Merge sets g to the join of g and other: for every actor, the entry with
// the larger sequence number. It never modifies other. Errors (g unchanged):
// one transaction id with two amounts (crdt.ErrConflictingTransaction), a
// value that would not fit in an int64 (crdt.ErrOverflow), more actors than
// Options.MaxActors (crdt.ErrTooLarge).
func (g *GCounter) Merge(other *GCounter) error {
	mp, err := g.prepareMerge(other, nil)
	if err != nil {
		return err
	}
	old := g.applyMerge(mp)
	if _, ok := g.val.Int64(); !ok {
		g.undoMerge(mp, old)
		return fmt.Errorf("%w: merged value does not fit in int64", crdt.ErrOverflow)
	}
	return nil
}

var _ crdt.State[*GCounter] = (*GCounter)(nil)
var _ crdt.Valuer = (*GCounter)(nil)

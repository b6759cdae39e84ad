package bounded

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
)

// Limits of one counter.
const (
	// DefaultWindow is the default Options.Window.
	DefaultWindow = 64

	// MaxWindow is the largest accepted Options.Window, and the most
	// transactions one entry may hold in an encoding.
	MaxWindow = 1024

	// MaxActors is the most actor entries an operation leaves: a new
	// actor beyond it is crdt.ErrTooLarge. Writers that could not see
	// each other may pass it together without either passing it, so
	// Merge and the decoder accept up to MaxMergedActors (SPEC.md 13.2).
	MaxActors = 4096

	// MaxMergedActors bounds, for memory, the entries Merge and the
	// decoder accept (crdt.ErrTooLarge beyond it).
	MaxMergedActors = 1 << 16
)

// Options configure a Counter. Bound and Origin are part of the state and
// its encoding (Merge refuses others); Window is not.
type Options struct {
	// Bound is the lower bound of the value: zero or negative. The counter
	// starts at 0 with −Bound rights, all of them Origin's.
	Bound int64

	// Origin holds the starting −Bound rights: required when Bound is below
	// zero, empty when it is zero.
	Origin crdt.ActorID

	// Window is how many of its own recent transactions an actor keeps, so
	// that a retry of one, on any actor, is recognised (0: DefaultWindow).
	Window int
}

func (o Options) resolved() (Options, error) {
	switch {
	case o.Bound > 0:
		return o, fmt.Errorf("%w: Bound %d is above zero (the counter starts at 0)", crdt.ErrInvalidConfig, o.Bound)
	case o.Bound < 0 && o.Origin == "":
		return o, fmt.Errorf("%w: Bound %d needs an Origin to hold its %d rights", crdt.ErrInvalidConfig, o.Bound, uint64(-o.Bound))
	case o.Bound == 0 && o.Origin != "":
		return o, fmt.Errorf("%w: Origin %q with Bound 0 (an origin holds the rights of a negative bound)", crdt.ErrInvalidConfig, o.Origin)
	case o.Bound == math.MinInt64:
		return o, fmt.Errorf("%w: Bound %d cannot be negated", crdt.ErrInvalidConfig, o.Bound)
	case o.Window < 0 || o.Window > MaxWindow:
		return o, fmt.Errorf("%w: Window %d outside 0..%d", crdt.ErrInvalidConfig, o.Window, MaxWindow)
	}
	if o.Origin != "" {
		if err := o.Origin.Validate(); err != nil {
			return o, fmt.Errorf("%w: Origin: %v", crdt.ErrInvalidConfig, err)
		}
	}
	o.Window = cmp.Or(o.Window, DefaultWindow)
	return o, nil
}

// Validate reports whether o is usable. The error wraps crdt.ErrInvalidConfig.
func (o Options) Validate() error {
	_, err := o.resolved()
	return err
}

// Outcome is what Apply did with a transaction.
type Outcome uint8

// The outcomes of Apply.
const (
	Applied   Outcome = iota + 1 // added to the actor's entry
	Duplicate                    // some actor holds it with this amount: nothing changed
)

// String names the outcome.
func (o Outcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Duplicate:
		return "duplicate"
	}
	return "outcome?"
}

// InsufficientRightsError is the error of a debit, a transfer or a
// retraction that would take an actor's rights below zero. It wraps
// crdt.ErrInsufficientRights; Available is what the actor could debit
// when the operation was refused (an Account's refused debit may grant
// some of it away in the same call: see Account.Debit).
type InsufficientRightsError struct {
	Actor     crdt.ActorID
	Amount    int64 // what was asked for
	Available int64 // the actor's rights when refused (an Account's: what it may spend), never below zero
}

func (e *InsufficientRightsError) Error() string {
	return fmt.Sprintf("%v: actor %q may debit %d now, not %d", crdt.ErrInsufficientRights, e.Actor, e.Available, e.Amount)
}

// Unwrap returns crdt.ErrInsufficientRights.
func (e *InsufficientRightsError) Unwrap() error { return crdt.ErrInsufficientRights }

// Txn is one transaction an entry holds: a credit (Amount > 0) or a debit
// (Amount < 0).
type Txn struct {
	ID     crdt.TxnID
	Amount int64
}

// entry is what one actor wrote. Entries in a Counter are never changed (a
// change makes a new one), so Clone and Merge share them.
type entry struct {
	seq     uint64
	credits int64 // every credit the actor applied, including recent ones
	debits  int64 // every debit, as a magnitude
	asked   int64 // the rights it has asked for, counted like received (see Request)
	sent    []grant
	recent  []Txn  // oldest first, at most the window
	enc     []byte // the entry's encoding, set before it is installed
}

// grant is the total of rights an actor has given one other actor.
type grant struct {
	to     crdt.ActorID
	amount int64
}

func (e *entry) sentTo(to crdt.ActorID) int64 {
	if e == nil {
		return 0
	}
	if i, ok := slices.BinarySearchFunc(e.sent, to, func(g grant, to crdt.ActorID) int { return cmp.Compare(g.to, to) }); ok {
		return e.sent[i].amount
	}
	return 0
}

// next returns a copy of e (or a new entry) with the next sequence number.
func (e *entry) next() (*entry, error) {
	if e == nil {
		return &entry{seq: 1}, nil
	}
	if e.seq == math.MaxInt64 {
		return nil, fmt.Errorf("%w: sequence number at its limit", crdt.ErrOverflow)
	}
	n := *e
	n.seq++
	n.sent = slices.Clone(e.sent)
	n.recent = slices.Clone(e.recent)
	n.enc = nil
	return &n, nil
}

// Counter is a bounded counter: a PN counter whose value never goes below
// Options.Bound, as every debit is within its actor's rights. The zero
// value is an empty counter with Bound 0. It is not safe for concurrent
// use, not even by its read methods alone: the first of Holders, Known
// or Doubled after a decode builds an index of the transactions.
type Counter struct {
	o       Options // resolved; the zero value means the defaults
	entries map[crdt.ActorID]*entry
	// Derived from entries, kept up to date by install.
	recv map[crdt.ActorID]exact.Int128 // rights every actor gave each actor
	// The holders index, who holds each recent transaction (index.go).
	// Built when first needed (nil: not yet, and install leaves it so),
	// as it costs a table slot per transaction, about 1.7 times the
	// transaction's bytes in an encoding: decoding does not build it
	// (TestDecodeMemory, TestIndexMemory), and a reader that only asks
	// for the value never does.
	idx   *holdIndex
	value exact.Int128
}

// New returns an empty Counter. The error wraps crdt.ErrInvalidConfig.
func New(opts Options) (*Counter, error) {
	o, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	return &Counter{o: o}, nil
}

// Options returns the counter's options with defaults filled in.
func (c *Counter) Options() Options {
	if c == nil {
		return Options{Window: DefaultWindow}
	}
	o := c.o
	o.Window = c.window()
	return o
}

// Bound returns the lower bound of the value.
func (c *Counter) Bound() int64 {
	if c == nil {
		return 0
	}
	return c.o.Bound
}

func (c *Counter) window() int { return cmp.Or(c.o.Window, DefaultWindow) }

// Value returns every actor's credits minus every actor's debits, never
// below Bound in a state this package built. Writers that could not see
// each other may credit past math.MaxInt64 (SPEC.md 13.1): Value then
// returns math.MaxInt64, BigValue the exact value.
func (c *Counter) Value() int64 {
	if c == nil {
		return 0
	}
	return c.value.Clamp()
}

// BigValue returns the value exactly (see Value).
func (c *Counter) BigValue() *big.Int {
	if c == nil {
		return new(big.Int)
	}
	return c.value.Big()
}

// Len returns the number of actor entries.
func (c *Counter) Len() int {
	if c == nil {
		return 0
	}
	return len(c.entries)
}

// Actors returns the actors with an entry, sorted.
func (c *Counter) Actors() []crdt.ActorID {
	if c == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(c.entries))
}

// rights returns actor's rights exactly.
func (c *Counter) rights(actor crdt.ActorID) exact.Int128 {
	r := c.recv[actor]
	if actor == c.o.Origin && actor != "" {
		r.Sub(c.o.Bound)
	}
	if e := c.entries[actor]; e != nil {
		r.Add(e.credits)
		r.Sub(e.debits)
		for _, g := range e.sent {
			r.Sub(g.amount)
		}
	}
	return r
}

// Rights returns what actor may debit now: its credits and the rights it
// received (and −Bound for Origin), minus its debits and the rights it
// gave; math.MaxInt64 past it (as Value).
func (c *Counter) Rights(actor crdt.ActorID) int64 {
	if c == nil {
		return 0
	}
	return c.rights(actor).Clamp()
}

// Received returns the rights every other actor has given actor;
// math.MaxInt64 past it (as Value).
func (c *Counter) Received(actor crdt.ActorID) int64 {
	if c == nil {
		return 0
	}
	return c.recv[actor].Clamp()
}

// Sent returns the rights from has given to.
func (c *Counter) Sent(from, to crdt.ActorID) int64 {
	if c == nil {
		return 0
	}
	return c.entries[from].sentTo(to)
}

// Entry is one actor's part of the state, as Entry reports it.
type Entry struct {
	Seq              uint64
	Credits, Debits  int64
	Asked            int64
	Sent             map[crdt.ActorID]int64
	Recent           []Txn // oldest first
	Rights, Received int64 // as Rights and Received report them
}

// Entry returns actor's entry, if it has one.
func (c *Counter) Entry(actor crdt.ActorID) (Entry, bool) {
	if c == nil || c.entries[actor] == nil {
		return Entry{}, false
	}
	e := c.entries[actor]
	out := Entry{Seq: e.seq, Credits: e.credits, Debits: e.debits, Asked: e.asked,
		Recent: slices.Clone(e.recent), Rights: c.Rights(actor), Received: c.Received(actor)}
	if len(e.sent) > 0 {
		out.Sent = make(map[crdt.ActorID]int64, len(e.sent))
		for _, g := range e.sent {
			out.Sent[g.to] = g.amount
		}
	}
	return out, true
}

// Outstanding returns how much of what actor asked for (Request) no one has
// given it yet.
func (c *Counter) Outstanding(actor crdt.ActorID) int64 {
	if c == nil || c.entries[actor] == nil {
		return 0
	}
	// Both are in 0..2^63-1 (Received clamps): no overflow.
	return max(0, c.entries[actor].asked-c.Received(actor))
}

// Ask is one actor's outstanding request for rights.
type Ask struct {
	Actor  crdt.ActorID
	Amount int64
}

// Requests returns every outstanding request, sorted by actor.
func (c *Counter) Requests() []Ask {
	var out []Ask // none for a nil c: it has no Actors
	for _, a := range c.Actors() {
		if o := c.Outstanding(a); o > 0 {
			out = append(out, Ask{a, o})
		}
	}
	return out
}

// Holder is one actor's copy of a transaction.
type Holder struct {
	Actor  crdt.ActorID
	Amount int64 // signed: > 0 a credit, < 0 a debit
}

// Holders returns the actors that hold txn among their recent
// transactions, sorted, with the amount each holds (each copy counts).
func (c *Counter) Holders(txn crdt.TxnID) []Holder {
	if c == nil {
		return nil
	}
	var out []Holder
	for a, amt := range c.holding(txn) {
		out = append(out, Holder{a, amt})
	}
	return out
}

// Doubled returns, sorted, the transactions two or more actors hold, each
// copy counting. An Account takes its copy back when a smaller actor also
// holds one and it has the rights; what stays after every holder wrote
// again counts twice for good, for an operator to settle (a compensating
// debit).
func (c *Counter) Doubled() []crdt.TxnID {
	if c == nil {
		return nil
	}
	c.index()
	if c.idx == nil {
		return nil
	}
	var out []crdt.TxnID
	for _, hs := range c.idx.multi {
		if len(hs) > 0 {
			_, t := c.idx.at(hs[0])
			out = append(out, t.ID)
		}
	}
	slices.Sort(out)
	return out
}

// Known reports whether some actor holds txn, and what Apply would answer
// for it with the given signed amount: Duplicate when a holder's copy has
// that amount, crdt.ErrConflictingTransaction when none has. An invalid
// txn (crdt.ErrInvalidTxnID) or amount (crdt.ErrInvalidAmount: zero or
// math.MinInt64) is refused as Apply refuses it, and is not known.
func (c *Counter) Known(txn crdt.TxnID, amount int64) (bool, error) {
	if err := txn.Validate(); err != nil {
		return false, err
	}
	if amount == 0 || amount == math.MinInt64 {
		return false, fmt.Errorf("%w: amount %d for transaction %q", crdt.ErrInvalidAmount, amount, txn)
	}
	known, first := false, int64(0)
	for _, amt := range c.holding(txn) {
		if amt == amount {
			return true, nil
		}
		if !known {
			known, first = true, amt
		}
	}
	if !known {
		return false, nil
	}
	return true, fmt.Errorf("%w: transaction %q has amount %d, retried with %d", crdt.ErrConflictingTransaction, txn, first, amount)
}

// Holds reports whether actor holds txn among its recent transactions, and
// with what amount.
func (c *Counter) Holds(actor crdt.ActorID, txn crdt.TxnID) (int64, bool) {
	if c == nil || c.entries[actor] == nil {
		return 0, false
	}
	recent := c.entries[actor].recent
	if i := slices.IndexFunc(recent, func(t Txn) bool { return t.ID == txn }); i >= 0 {
		return recent[i].Amount, true
	}
	return 0, false
}

func (c *Counter) init() {
	if c.entries == nil {
		c.entries = map[crdt.ActorID]*entry{}
		c.recv = map[crdt.ActorID]exact.Int128{}
		c.idx = newHoldIndex(0, 0)
	}
}

// Apply records transaction txn by actor: a credit when amount is
// positive, a debit when negative. A txn some actor holds is Duplicate when
// a copy has this amount, crdt.ErrConflictingTransaction otherwise. A debit
// beyond actor's rights is an *InsufficientRightsError. Other errors:
// crdt.ErrInvalidActor, crdt.ErrInvalidTxnID, crdt.ErrInvalidAmount (zero
// or math.MinInt64), crdt.ErrOverflow (actor's credits or debits past
// int64, or a total moving further past it: SPEC.md 13.2),
// crdt.ErrTooLarge; the state is then unchanged.
func (c *Counter) Apply(actor crdt.ActorID, txn crdt.TxnID, amount int64) (Outcome, error) {
	if err := actor.Validate(); err != nil {
		return 0, err
	}
	if err := txn.Validate(); err != nil {
		return 0, err
	}
	if amount == 0 || amount == math.MinInt64 {
		return 0, fmt.Errorf("%w: amount %d for transaction %q", crdt.ErrInvalidAmount, amount, txn)
	}
	if known, err := c.Known(txn, amount); known {
		if err != nil {
			return 0, err
		}
		return Duplicate, nil
	}
	if amount < 0 {
		if err := c.canSpend(actor, -amount); err != nil {
			return 0, err
		}
	}
	e, err := c.entries[actor].next()
	if err != nil {
		return 0, err
	}
	if amount > 0 {
		if e.credits > math.MaxInt64-amount {
			return 0, fmt.Errorf("%w: actor %q's credits", crdt.ErrOverflow, actor)
		}
		e.credits += amount
	} else {
		if e.debits > math.MaxInt64+amount {
			return 0, fmt.Errorf("%w: actor %q's debits", crdt.ErrOverflow, actor)
		}
		e.debits -= amount
	}
	e.recent = append(e.recent, Txn{txn, amount})
	if over := len(e.recent) - c.window(); over > 0 {
		e.recent = slices.Delete(e.recent, 0, over)
	}
	if err := c.put(actor, e); err != nil {
		return 0, err
	}
	return Applied, nil
}

// canSpend reports whether actor holds at least amount rights.
func (c *Counter) canSpend(actor crdt.ActorID, amount int64) error {
	r := c.rights(actor)
	if r.Sub(amount); r.Clamp() >= 0 { // exact: the rights may pass int64
		return nil
	}
	return &InsufficientRightsError{Actor: actor, Amount: amount, Available: max(0, c.Rights(actor))}
}

// Transfer gives amount (> 0) of from's rights to another actor; only from
// may call it. Errors, with the state unchanged: *InsufficientRightsError,
// crdt.ErrInvalidActor (also for from == to), crdt.ErrInvalidAmount,
// crdt.ErrOverflow, crdt.ErrTooLarge (from would be a new actor beyond
// MaxActors, or to a new recipient after the MaxActors an entry holds).
func (c *Counter) Transfer(from, to crdt.ActorID, amount int64) error {
	if err := from.Validate(); err != nil {
		return err
	}
	if err := to.Validate(); err != nil {
		return err
	}
	if from == to {
		return fmt.Errorf("%w: %q transfers to itself", crdt.ErrInvalidActor, from)
	}
	if amount <= 0 {
		return fmt.Errorf("%w: transfer of %d", crdt.ErrInvalidAmount, amount)
	}
	if err := c.canSpend(from, amount); err != nil {
		return err
	}
	e, err := c.entries[from].next()
	if err != nil {
		return err
	}
	i, found := slices.BinarySearchFunc(e.sent, to, func(g grant, to crdt.ActorID) int { return cmp.Compare(g.to, to) })
	if !found {
		if len(e.sent) >= MaxActors {
			// The encoding holds at most MaxActors recipients per entry
			// (SPEC.md 13.4): one more would make the state undecodable.
			return fmt.Errorf("%w: %q already gave rights to %d actors, the most an entry holds", crdt.ErrTooLarge, from, MaxActors)
		}
		e.sent = slices.Insert(e.sent, i, grant{to: to})
	}
	if e.sent[i].amount > math.MaxInt64-amount {
		return fmt.Errorf("%w: rights %q gave %q", crdt.ErrOverflow, from, to)
	}
	e.sent[i].amount += amount
	return c.put(from, e)
}

// Request records that actor asks for need (> 0) more rights than it has
// received: Outstanding(actor) becomes at least need. A request within
// what is outstanding changes nothing and returns false. Errors, with the
// state unchanged: crdt.ErrInvalidActor, crdt.ErrInvalidAmount,
// crdt.ErrOverflow, crdt.ErrTooLarge.
func (c *Counter) Request(actor crdt.ActorID, need int64) (bool, error) {
	if err := actor.Validate(); err != nil {
		return false, err
	}
	if need <= 0 {
		return false, fmt.Errorf("%w: request of %d", crdt.ErrInvalidAmount, need)
	}
	want := c.recv[actor]
	want.Add(need)
	w, ok := want.Int64()
	if !ok {
		return false, fmt.Errorf("%w: actor %q's request", crdt.ErrOverflow, actor)
	}
	old := c.entries[actor]
	if old != nil && old.asked >= w {
		return false, nil
	}
	e, err := old.next()
	if err != nil {
		return false, err
	}
	e.asked = w
	return true, c.put(actor, e)
}

// Withdraw ends actor's outstanding request and reports whether anything
// changed. Errors, with the state unchanged: crdt.ErrInvalidActor,
// crdt.ErrOverflow.
func (c *Counter) Withdraw(actor crdt.ActorID) (bool, error) {
	if err := actor.Validate(); err != nil {
		return false, err
	}
	if c.Outstanding(actor) == 0 {
		return false, nil
	}
	e, err := c.entries[actor].next()
	if err != nil {
		return false, err
	}
	e.asked = c.Received(actor)
	return true, c.put(actor, e)
}

// Retract takes txn out of actor's recent transactions, as if never
// applied, and reports whether actor held it: for a driver whose
// unacknowledged txn another actor holds. Retracting a credit needs the
// rights it gave (*InsufficientRightsError, state unchanged).
func (c *Counter) Retract(actor crdt.ActorID, txn crdt.TxnID) (bool, error) {
	amount, ok := c.Holds(actor, txn)
	if !ok {
		return false, nil
	}
	if amount > 0 {
		if err := c.canSpend(actor, amount); err != nil {
			return false, err
		}
	}
	e, err := c.entries[actor].next()
	if err != nil {
		return false, err
	}
	if amount > 0 {
		e.credits -= amount
	} else {
		e.debits += amount
	}
	e.recent = slices.DeleteFunc(e.recent, func(t Txn) bool { return t.ID == txn })
	return true, c.put(actor, e)
}

// put installs e as actor's entry, or returns an error with c unchanged
// (checkTotals).
func (c *Counter) put(actor crdt.ActorID, e *entry) error {
	c.init()
	old := c.entries[actor]
	if old == nil && len(c.entries) >= MaxActors {
		return fmt.Errorf("%w: more than %d actors", crdt.ErrTooLarge, MaxActors)
	}
	actors := append([]crdt.ActorID{actor}, recipients(old, e)...)
	var buf [8]exact.Int128
	before := c.totals(actors, buf[:0])
	c.install(actor, e)
	if err := c.checkTotals(actors, before); err != nil {
		c.install(actor, old)
		return err
	}
	e.enc = encodeEntry(actor, e)
	return nil
}

// recipients lists the actors to whom entries a and b gave different
// amounts: only their totals can change when b replaces a. Both lists of
// grants are sorted by recipient.
func recipients(a, b *entry) []crdt.ActorID {
	var x, y []grant
	if a != nil {
		x = a.sent
	}
	if b != nil {
		y = b.sent
	}
	var out []crdt.ActorID
	for len(x) > 0 || len(y) > 0 {
		switch {
		case len(y) == 0 || len(x) > 0 && x[0].to < y[0].to:
			out, x = append(out, x[0].to), x[1:]
		case len(x) == 0 || y[0].to < x[0].to:
			out, y = append(out, y[0].to), y[1:]
		default:
			if x[0].amount != y[0].amount {
				out = append(out, x[0].to)
			}
			x, y = x[1:], y[1:]
		}
	}
	return out
}

// totals appends to dst the value, then the received and rights totals
// of each of actors.
func (c *Counter) totals(actors []crdt.ActorID, dst []exact.Int128) []exact.Int128 {
	dst = append(dst, c.value)
	for _, a := range actors {
		dst = append(dst, c.recv[a], c.rights(a))
	}
	return dst
}

// checkTotals reports crdt.ErrOverflow when the total actors[0] gave does
// not fit in int64, or when one of the totals (see totals) does not and
// is further from int64 than before, its value before the change: a
// merge of writers that could not see each other may have taken it out
// already, and a change that moves it back applies (SPEC.md 13.2).
func (c *Counter) checkTotals(actors []crdt.ActorID, before []exact.Int128) error {
	var given exact.Int128
	for _, g := range c.entries[actors[0]].sent {
		given.Add(g.amount)
	}
	if !fitsInt64(given) {
		return fmt.Errorf("%w: rights %q gave", crdt.ErrOverflow, actors[0])
	}
	var buf [8]exact.Int128
	for i, v := range c.totals(actors, buf[:0]) {
		d := v
		d.SubInt128(before[i])
		if !fitsInt64(v) && d != (exact.Int128{}) && (d.Clamp() > 0) == (v.Clamp() > 0) {
			what := "the value"
			if i > 0 {
				what = fmt.Sprintf("%s %q", [2]string{"the rights of", "the rights received by"}[i%2], actors[(i-1)/2])
			}
			return fmt.Errorf("%w: %s would move further past int64", crdt.ErrOverflow, what)
		}
	}
	return nil
}

// install replaces actor's entry by e (nil: none) and updates the derived
// totals. It checks nothing.
func (c *Counter) install(actor crdt.ActorID, e *entry) {
	c.init()
	old := c.entries[actor]
	c.count(old, -1)
	if e == nil {
		delete(c.entries, actor)
	} else {
		c.entries[actor] = e
	}
	c.count(e, 1)
	if c.idx != nil { // else index builds it from the entries
		c.idx.update(actor, old, e)
	}
}

// count adds sign (±1) times e's credits, debits and grants to the value
// and the received totals; a nil e counts nothing.
func (c *Counter) count(e *entry, sign int64) {
	if e == nil {
		return
	}
	c.value.Add(sign * e.credits)
	c.value.Sub(sign * e.debits)
	for _, g := range e.sent {
		r := c.recv[g.to]
		r.Add(sign * g.amount)
		c.recv[g.to] = r
	}
}

// newer reports whether entry a wins over entry b in Merge: the larger
// sequence number, then (a forked actor) the larger contents.
func newer(a, b *entry) bool {
	if b == nil {
		return a != nil
	}
	if a == nil || a.seq != b.seq {
		return a != nil && a.seq > b.seq
	}
	return compareEntries(a, b) > 0
}

func compareEntries(a, b *entry) int {
	if c := cmp.Compare(a.seq, b.seq); c != 0 {
		return c
	}
	if c := cmp.Compare(a.credits, b.credits); c != 0 {
		return c
	}
	if c := cmp.Compare(a.debits, b.debits); c != 0 {
		return c
	}
	if c := cmp.Compare(a.asked, b.asked); c != 0 {
		return c
	}
	if c := slices.CompareFunc(a.sent, b.sent, func(x, y grant) int {
		return cmp.Or(cmp.Compare(x.to, y.to), cmp.Compare(x.amount, y.amount))
	}); c != 0 {
		return c
	}
	return slices.CompareFunc(a.recent, b.recent, func(x, y Txn) int {
		return cmp.Or(cmp.Compare(x.ID, y.ID), cmp.Compare(x.Amount, y.Amount))
	})
}

// sameConfig reports whether two counters have one bound and origin.
func (c *Counter) sameConfig(o *Counter) error {
	if c.o.Bound != o.o.Bound || c.o.Origin != o.o.Origin {
		return fmt.Errorf("%w: bound %d (origin %q) merged with bound %d (origin %q)", crdt.ErrInvalidConfig, c.o.Bound, c.o.Origin, o.o.Bound, o.o.Origin)
	}
	return nil
}

// Merge sets c to the join of c and other: per actor, the newer entry. It
// never modifies other. Errors, with c unchanged: another bound or origin
// (crdt.ErrInvalidConfig), more than MaxMergedActors actors (crdt.ErrTooLarge).
// A value, received or rights total past int64 is kept (see Value).
func (c *Counter) Merge(other *Counter) error {
	if other == nil || other == c {
		return nil
	}
	if err := c.sameConfig(other); err != nil {
		return err
	}
	var win []actorEntry
	for a, e := range other.entries {
		if newer(e, c.entries[a]) {
			win = append(win, actorEntry{a, e})
		}
	}
	return c.mergeEntries(win)
}

// actorEntry is one actor's entry.
type actorEntry struct {
	a crdt.ActorID
	e *entry
}

// mergeEntries installs entries that win over c's, all or none.
func (c *Counter) mergeEntries(win []actorEntry) error {
	if len(win) == 0 {
		return nil
	}
	added := 0
	for _, w := range win {
		if c.entries[w.a] == nil {
			added++
		}
	}
	if len(c.entries)+added > MaxMergedActors {
		return fmt.Errorf("%w: merge would hold %d actors, limit %d", crdt.ErrTooLarge, len(c.entries)+added, MaxMergedActors)
	}
	for _, w := range win {
		c.install(w.a, w.e) // totals past int64 are kept (SPEC.md 13.1)
	}
	return nil
}

// restore puts back the entries c held when orig was taken, undoing a
// merge since (a merge only adds and replaces entries).
func (c *Counter) restore(orig map[crdt.ActorID]*entry) {
	for a, e := range c.entries {
		if orig[a] != e {
			c.install(a, orig[a])
		}
	}
}

// Clone returns a copy that shares no mutable memory with c.
func (c *Counter) Clone() *Counter {
	n := &Counter{o: c.o, value: c.value}
	if c.entries != nil {
		n.entries = maps.Clone(c.entries) // entries are immutable
		n.recv = maps.Clone(c.recv)
		n.idx = c.idx.clone()
	}
	return n
}

// Equal reports whether c and other have one bound and origin and the same
// entries.
func (c *Counter) Equal(other *Counter) bool {
	if c == nil || other == nil {
		return c.Len() == 0 && other.Len() == 0 && c.Bound() == other.Bound()
	}
	// Merge's order is total: each ≤ the other means every entry is equal.
	return c.sameConfig(other) == nil && len(c.entries) == len(other.entries) && c.Leq(other) && other.Leq(c)
}

// Leq reports whether c ≤ other in the merge order: every entry of c is
// other's entry for that actor or loses to it.
func (c *Counter) Leq(other *Counter) bool {
	if c.Len() == 0 {
		return true
	}
	if other == nil {
		return false
	}
	for a, e := range c.entries {
		o := other.entries[a]
		if o == nil || (o != e && compareEntries(e, o) > 0) {
			return false
		}
	}
	return true
}

var _ crdt.State[*Counter] = (*Counter)(nil)
var _ crdt.Valuer = (*Counter)(nil)

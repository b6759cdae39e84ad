package tpncounter

import (
	"fmt"
	"maps"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
)

// Counter is a transactional PN counter (the TPNCounter): credits live in a
// positive GCounter P, debits in a negative GCounter N, and the value is
// P − N. One transaction id is either a credit or a debit: Apply refuses to
// reuse one with the other sign, and when writers that could not see each
// other did, only the owner's copy counts (see Owner and Conflicts).
//
// The zero value is an empty counter with default Options. A Counter is not
// safe for concurrent use; callers serialise access.
type Counter struct {
	p, n GCounter
	// cross lists the ids held in both halves (see GCounter.cross).
	cross map[crdt.TxnID]struct{}
	// merge is MergeBinary's scratch memory, made when first needed.
	merge *mergeScratch
}

// link readies both halves and points each at the other.
func (c *Counter) link() {
	if c.p.twin == &c.n && c.p.ready && c.n.ready {
		return // the common case: nothing to write
	}
	c.p.init()
	c.n.init()
	c.p.twin, c.n.twin, c.n.neg = &c.n, &c.p, true
	c.p.cross, c.n.cross = c.cross, c.cross
}

// findCross records the ids both halves hold and forgets stale ones.
func (c *Counter) findCross(newP, newN []*entry) {
	for x := range c.cross {
		if c.p.get(x) == 0 || c.n.get(x) == 0 {
			delete(c.cross, x)
		}
	}
	for _, side := range [2]struct {
		es    []*entry
		other *GCounter
	}{{newP, &c.n}, {newN, &c.p}} {
		if side.other.tab.n == 0 {
			continue
		}
		for _, e := range side.es {
			if e == nil {
				continue
			}
			for off := uint32(0); off < uint32(e.size()); off++ {
				if x := e.id(e.pos(off)); side.other.get(x) != 0 {
					if c.cross == nil { // made only when needed: almost never
						c.cross = map[crdt.TxnID]struct{}{}
						c.p.cross, c.n.cross = c.cross, c.cross
					}
					c.cross[crdt.TxnID(strings.Clone(string(x)))] = struct{}{} // x is only valid until e's next Apply
				}
			}
		}
	}
}

// New returns an empty Counter; the error wraps crdt.ErrInvalidConfig.
func New(opts Options) (*Counter, error) {
	o, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	c := &Counter{}
	c.p.o, c.n.o = o, o
	c.link()
	return c, nil
}

// orEmpty returns c, or a new empty Counter with the default options for
// a nil c, so that read-only methods answer on nil as on an empty state.
func (c *Counter) orEmpty() *Counter {
	if c != nil {
		return c
	}
	e, _ := New(Options{}) // the default options are valid
	return e
}

// Options returns the counter's options with defaults filled in.
func (c *Counter) Options() Options { return c.orEmpty().p.Options() }

// Value returns P − N, an id in both halves counted once, by its owner's
// copy. Merged states may leave int64 (SPEC.md 6.6): Value then returns
// math.MaxInt64 or math.MinInt64, and BigValue the exact value.
func (c *Counter) Value() int64 {
	if c == nil {
		return 0
	}
	return value(&c.p, &c.n, c.cross).Clamp()
}

// BigValue returns the exact value (see Value).
func (c *Counter) BigValue() *big.Int {
	if c == nil {
		return new(big.Int)
	}
	v := value(&c.p, &c.n, c.cross)
	return v.Big()
}

// value is P − N of the halves p and n, each id in both (cross) counted once.
func value(p, n *GCounter, cross map[crdt.TxnID]struct{}) exact.Int128 {
	v := p.val
	v.SubInt128(n.val)
	for x := range cross {
		r, tr := p.get(x), n.get(x)
		if r == 0 || tr == 0 {
			continue
		}
		// The losing half's owner copy is what that half counts for x.
		if debitOwns(p, r, n, tr) {
			v.Sub(p.amtOf(r))
		} else {
			v.Add(n.amtOf(tr))
		}
	}
	return v
}

// Positive returns a copy of the credit half.
func (c *Counter) Positive() *GCounter { return c.orEmpty().p.Clone() }

// Negative returns a copy of the debit half (amounts are magnitudes).
func (c *Counter) Negative() *GCounter { return c.orEmpty().n.Clone() }

// HasTransaction reports whether either half's histories hold txn, in O(1).
func (c *Counter) HasTransaction(txn crdt.TxnID) bool {
	if c == nil {
		return false
	}
	return c.p.HasTransaction(txn) || c.n.HasTransaction(txn)
}

// Status reports where txn is known, in O(1).
func (c *Counter) Status(txn crdt.TxnID) Status {
	if c == nil {
		return Unknown
	}
	if s := c.p.Status(txn); s != Unknown {
		return max(s, c.n.Status(txn))
	}
	return c.n.Status(txn)
}

// Amount returns the signed amount of txn's counting copy (see Owner).
func (c *Counter) Amount(txn crdt.TxnID) (int64, bool) {
	o, ok := c.Owner(txn)
	return o.Amount, ok
}

// Owner returns the copy of txn that counts, if some actor holds txn: the
// smallest actor id's among those that folded it, else among those holding
// it (a credit wins a tie with a debit of the same actor). Every duplicate
// rule keeps that copy, so merge order does not matter; but a copy not yet
// merged may take over, so run side effects from an outbox keyed by the
// transaction id (package ledger, "Side effects"), not from Owner.
func (c *Counter) Owner(txn crdt.TxnID) (Copy, bool) {
	if c == nil {
		return Copy{}, false
	}
	return owner(&c.p, &c.n, txn)
}

// owner returns txn's counting copy in halves p and n (nil for a GCounter).
func owner(p, n *GCounter, txn crdt.TxnID) (Copy, bool) {
	pr := p.get(txn)
	if pr != 0 && len(p.cross) == 0 {
		return p.ownerCopy(pr, 1), true // held in P only: the common case
	}
	nr := n.get(txn)
	switch {
	case pr == 0 && nr == 0:
		return Copy{}, false
	case nr == 0 || (pr != 0 && !debitOwns(p, pr, n, nr)):
		return p.ownerCopy(pr, 1), true
	default:
		return n.ownerCopy(nr, -1), true
	}
}

// Conflicts lists the ids held with several amounts or both signs, sorted,
// with every copy and the counting one; empty unless writers reused an id.
func (c *Counter) Conflicts() []Conflict {
	if c == nil {
		return nil
	}
	return conflicts(&c.p, &c.n)
}

// Apply records transaction txn with a signed amount (a credit when
// positive, a debit when negative) as written by actor, as GCounter.Apply
// on the matching half with a known transaction judged against the copy
// that counts (see Known). amount must be non-zero and not math.MinInt64
// (crdt.ErrInvalidAmount). With Options.TxnTime an unknown transaction
// must be after Horizon. The state is unchanged on error.
func (c *Counter) Apply(actor crdt.ActorID, txn crdt.TxnID, amount int64) (Outcome, error) {
	if amount == 0 || amount == math.MinInt64 {
		return 0, fmt.Errorf("%w: amount %d for transaction %q", crdt.ErrInvalidAmount, amount, txn)
	}
	half, mag := &c.p, amount
	if amount < 0 {
		half, mag = &c.n, -amount
	}
	if err := validate(actor, txn, mag); err != nil {
		return 0, err
	}
	c.link()
	return half.apply(actor, txn, mag, amount)
}

// Known says, without changing anything, what Apply would answer for a
// known transaction, with the copy that counts (see Owner): Duplicate or
// DuplicateFolded for its amount, Superseded for the amount of a copy that
// lost a conflict, crdt.ErrConflictingTransaction for any other. For an
// unknown txn it returns 0, a zero Copy and no error.
func (c *Counter) Known(txn crdt.TxnID, amount int64) (Outcome, Copy, error) {
	if c == nil {
		return 0, Copy{}, nil
	}
	o, ok := owner(&c.p, &c.n, txn)
	if !ok {
		return 0, Copy{}, nil
	}
	out, err := judge(&c.p, &c.n, txn, amount, o)
	return out, o, err
}

// judge is the verdict on a retry of known txn with signed amount (o counts).
func judge(p, n *GCounter, txn crdt.TxnID, amount int64, o Copy) (Outcome, error) {
	if o.Amount == amount {
		return duplicate(o.Folded), nil
	}
	half, mag := p, amount
	if amount < 0 {
		half, mag = n, -amount
	}
	if r := half.get(txn); r != 0 && (half.amtOf(r) == mag || half.holdsAmount(r, mag)) {
		return Superseded, nil
	}
	return 0, fmt.Errorf("%w: transaction %q has amount %d, retried with %d", crdt.ErrConflictingTransaction, txn, o.Amount, amount)
}

// duplicate is the verdict on a retry with the counting amount.
func duplicate(folded bool) Outcome {
	if folded {
		return DuplicateFolded
	}
	return Duplicate
}

// Horizon returns the later of both halves' horizons (GCounter.Horizon).
func (c *Counter) Horizon() time.Time {
	if c == nil {
		return time.Time{}
	}
	return timeOf(max(c.p.horizonNanos(), c.n.horizonNanos()))
}

// Compact is GCounter.Compact in both halves.
func (c *Counter) Compact(actor crdt.ActorID) (bool, error) {
	if err := actor.Validate(); err != nil {
		return false, err
	}
	c.link()
	changed, err := compactHalves(actor, &c.p, &c.n)
	if changed && len(c.cross) > 0 {
		c.findCross(nil, nil)
	}
	return changed, err
}

// compactHalves does actor's housekeeping in every half, all or nothing.
func compactHalves(actor crdt.ActorID, halves ...*GCounter) (bool, error) {
	type job struct {
		g *GCounter
		e *entry
		p plan
	}
	var jobs []job
	for _, g := range halves {
		e := g.entries[actor]
		if e == nil {
			continue // none, or a dormant record: nothing to do
		}
		p, err := g.plan(e)
		if err != nil {
			return false, err
		}
		if !p.empty() {
			if err := e.checkSeq(); err != nil {
				return false, err
			}
			jobs = append(jobs, job{g, e, p})
		}
	}
	for _, j := range jobs {
		j.g.commit(j.e, j.p)
		j.g.bump(j.e)
		j.g.grown += changeBound
	}
	return len(jobs) > 0, nil
}

// Merge sets c to the join of c and other in both halves, as GCounter.Merge
// (an id held with two signs is not an error either: see Owner).
func (c *Counter) Merge(other *Counter) error {
	c.link()
	if other == nil || other == c {
		return nil
	}
	newer, err := mergeHalves([]*GCounter{&c.p, &c.n}, []*GCounter{&other.p, &other.n})
	if err != nil {
		return err
	}
	c.findCross(newer[0], newer[1])
	return nil
}

// Clone returns a deep copy.
func (c *Counter) Clone() *Counter {
	c = c.orEmpty()
	n := &Counter{p: *c.p.Clone(), n: *c.n.Clone(), cross: maps.Clone(c.cross)}
	n.link()
	return n
}

// Equal reports whether c and other hold the same entries.
func (c *Counter) Equal(other *Counter) bool {
	if c == nil || other == nil {
		return c.Stats().Actors == other.Stats().Actors
	}
	return c.p.Equal(&other.p) && c.n.Equal(&other.n)
}

// Leq reports whether c ≤ other in the merge order (both halves).
func (c *Counter) Leq(other *Counter) bool {
	if c == nil || other == nil {
		return c.Stats().Actors == 0 || other != nil
	}
	return c.p.Leq(&other.p) && c.n.Leq(&other.n)
}

var _ crdt.State[*Counter] = (*Counter)(nil)
var _ crdt.Valuer = (*Counter)(nil)

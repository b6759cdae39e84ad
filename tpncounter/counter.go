package tpncounter

import (
	"fmt"
	"math"
	"time"

	"github.com/counterkit/counterkit/crdt"
)

// Counter is a transactional PN counter (the TPNCounter): credits live in a
// positive GCounter P, debits in a negative GCounter N, and the value is
// P − N. One transaction id is either a credit or a debit, never both.
//
// The zero value is an empty counter with default Options. A Counter is not
// safe for concurrent use; callers serialise access.
type Counter struct {
	p, n GCounter
}

// New returns an empty Counter with the given options. The error wraps
// crdt.ErrInvalidConfig.
func New(opts Options) (*Counter, error) {
	o, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	c := &Counter{}
	c.p.o, c.n.o = o, o
	c.p.init()
	c.n.init()
	return c, nil
}

// Options returns the counter's options with defaults filled in.
func (c *Counter) Options() Options { return c.p.Options() }

// Value returns P − N. Both halves are at most math.MaxInt64, so the
// difference always fits.
func (c *Counter) Value() int64 { return c.p.Value() - c.n.Value() }

// Positive returns a copy of the credit half.
func (c *Counter) Positive() *GCounter { return c.p.Clone() }

// Negative returns a copy of the debit half (amounts are magnitudes).
func (c *Counter) Negative() *GCounter { return c.n.Clone() }

// HasTransaction reports whether txn is held in some actor's history, in
// either half, in O(1).
func (c *Counter) HasTransaction(txn crdt.TxnID) bool {
	return c.p.HasTransaction(txn) || c.n.HasTransaction(txn)
}

// Status reports where txn is known, in O(1).
func (c *Counter) Status(txn crdt.TxnID) Status {
	if s := c.p.Status(txn); s != Unknown {
		return s
	}
	return c.n.Status(txn)
}

// Amount returns the signed amount recorded for txn, if it is known.
func (c *Counter) Amount(txn crdt.TxnID) (int64, bool) {
	if a, ok := c.p.amountOf(txn); ok {
		return a, true
	}
	if a, ok := c.n.amountOf(txn); ok {
		return -a, true
	}
	return 0, false
}

// Apply records transaction txn with a signed amount (a credit when
// positive, a debit when negative) as written by actor. It behaves as
// GCounter.Apply on the matching half; a transaction id already used with
// the other sign is a conflict. amount must be non-zero and not
// math.MinInt64 (crdt.ErrInvalidAmount). With Options.TxnTime the horizon
// checked is the half's own (see GCounter.Apply). The state is unchanged on
// error.
func (c *Counter) Apply(actor crdt.ActorID, txn crdt.TxnID, amount int64) (Outcome, error) {
	if amount == 0 || amount == math.MinInt64 {
		return 0, fmt.Errorf("%w: amount %d for transaction %q", crdt.ErrInvalidAmount, amount, txn)
	}
	half, other, mag := &c.p, &c.n, amount
	if amount < 0 {
		half, other, mag = &c.n, &c.p, -amount
	}
	if err := validate(actor, txn, mag); err != nil {
		return 0, err
	}
	c.p.init()
	c.n.init()
	at, err := half.checkTime(txn)
	if err != nil {
		return 0, err
	}
	h := hashID(txn)
	if r := half.find(txn, h); r != 0 {
		return half.known(txn, r, mag)
	}
	if a, ok := other.amountOf(txn); ok {
		if amount > 0 {
			a = -a
		}
		return 0, fmt.Errorf("%w: transaction %q has amount %d, retried with %d", crdt.ErrConflictingTransaction, txn, a, amount)
	}
	// A credit is checked against P's horizon and a debit against N's: a
	// retry keeps its sign, so it was forgotten, if at all, in its own half.
	if err := half.checkHorizon(txn, at); err != nil {
		return 0, err
	}
	return half.applyNew(actor, txn, h, mag, at)
}

// Horizon returns the later of the two halves' horizons (see
// GCounter.Horizon).
func (c *Counter) Horizon() time.Time {
	p, n := c.p.Horizon(), c.n.Horizon()
	if n.After(p) {
		return n
	}
	return p
}

// Compact performs actor's housekeeping in both halves (see
// GCounter.Compact). The value does not change.
func (c *Counter) Compact(actor crdt.ActorID) (bool, error) {
	if err := actor.Validate(); err != nil {
		return false, err
	}
	c.p.init()
	c.n.init()
	type job struct {
		g *GCounter
		e *entry
		p plan
	}
	var jobs []job
	for _, g := range []*GCounter{&c.p, &c.n} {
		e := g.entries[actor]
		if e == nil {
			continue
		}
		p, err := g.plan(e)
		if err != nil {
			return false, err
		}
		if !p.empty() {
			jobs = append(jobs, job{g, e, p})
		}
	}
	for _, j := range jobs {
		j.g.commit(j.e, j.p)
		j.e.seq++
	}
	return len(jobs) > 0, nil
}

// Merge sets c to the join of c and other (both halves). It never modifies
// other. Errors (c unchanged): a transaction id with two amounts or signs
// (crdt.ErrConflictingTransaction), overflow (crdt.ErrOverflow), too many
// actors (crdt.ErrTooLarge).
func (c *Counter) Merge(other *Counter) error {
	c.p.init()
	c.n.init()
	pp, err := c.p.prepareMerge(&other.p, func(x crdt.TxnID) bool { return c.n.get(x) != 0 })
	if err != nil {
		return err
	}
	np, err := c.n.prepareMerge(&other.n, func(x crdt.TxnID) bool { return c.p.get(x) != 0 })
	if err != nil {
		return err
	}
	oldP := c.p.applyMerge(pp)
	oldN := c.n.applyMerge(np)
	if !fits(c.p.val) || !fits(c.n.val) {
		c.n.undoMerge(np, oldN)
		c.p.undoMerge(pp, oldP)
		return fmt.Errorf("%w: merged value does not fit in int64", crdt.ErrOverflow)
	}
	return nil
}

// Clone returns a deep copy.
func (c *Counter) Clone() *Counter {
	return &Counter{p: *c.p.Clone(), n: *c.n.Clone()}
}

// Equal reports whether c and other hold the same entries.
func (c *Counter) Equal(other *Counter) bool {
	return c.p.Equal(&other.p) && c.n.Equal(&other.n)
}

// Leq reports whether c ≤ other in the merge order (both halves).
func (c *Counter) Leq(other *Counter) bool {
	return c.p.Leq(&other.p) && c.n.Leq(&other.n)
}

var _ crdt.State[*Counter] = (*Counter)(nil)
var _ crdt.Valuer = (*Counter)(nil)

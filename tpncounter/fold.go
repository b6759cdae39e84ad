package tpncounter

import (
	"cmp"
	"fmt"
	"math/big"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
)

// Base is what Fold took out of one half's retired entries: Cutoff, the
// latest cutoff folded; Total, the sum of the folded entries' totals; and
// Forgot, the latest of their forgot times (so the horizon stays). The
// zero Base is a half that never folded.
type Base struct {
	Cutoff time.Time
	// Total is math.MaxInt64 when the sum passes int64, which the lifetime
	// credits (or debits) of a long-lived account may: BigTotal is exact.
	Total  int64
	Forgot time.Time

	// past is the exact total when Total does not hold it (zero otherwise).
	past exact.Int128
}

// BigTotal returns the exact total as a new big.Int (see Total).
func (b Base) BigTotal() *big.Int {
	if b.past == (exact.Int128{}) {
		return big.NewInt(b.Total)
	}
	return b.past.Big()
}

// base is Base in Unix nanoseconds (cut 0: none), its total exact.
type base struct {
	cut    int64
	total  exact.Int128
	forgot int64
}

// compare orders bases by cutoff, total, forgot (SPEC.md 6.10).
func (b base) compare(o base) int {
	return cmp.Or(cmp.Compare(b.cut, o.cut), b.total.Cmp(o.total), cmp.Compare(b.forgot, o.forgot))
}

// baseFields is an encoded base's length (version 4); baseBound bounds it:
// its header, cutoff and forgot, and a total past int64 in a bin of 16
// bytes (wire.Encoder.Int128).
const (
	baseFields = 3
	baseBound  = 1 + 9 + (2 + 16) + 9
)

// maxBaseTotal is 2^126, which a base's total stays below (SPEC.md 6.10):
// 2^63 times the largest total a retired entry holds, so never reached in
// practice, and low enough that a half's value (the base and at most
// MaxActorsLimit + MaxRetired entries of less than 2^63 each) and a
// Counter's, summed in 128 bits, never wrap.
var maxBaseTotal = exact.FromBytes([16]byte{0x40})

// inBase reports whether a base of cutoff cut holds e.
func (e *entry) inBase(cut int64) bool {
	return e.retired && e.retiredAt != 0 && e.retiredAt < cut
}

// mergeDrops is inBase for Merge.
func (e *entry) mergeDrops(cut int64) bool { return !brokenMergeKeepsFolded && e.inBase(cut) }

// Base returns g's base (see Fold).
func (g *GCounter) Base() Base {
	if g == nil {
		return Base{}
	}
	b := Base{Cutoff: timeOf(g.base.cut), Total: g.base.total.Clamp(), Forgot: timeOf(g.base.forgot)}
	if !fits(g.base.total) {
		b.past = g.base.total
	}
	return b
}

// Bases returns the bases of the credit and the debit half (see Fold).
func (c *Counter) Bases() (p, n Base) {
	if c == nil {
		return Base{}, Base{}
	}
	return c.p.Base(), c.n.Base()
}

// Fold moves every entry retired (RetireAllAt) before cutoff into the base,
// so that a state written by many short-lived actors stays small; the value
// does not change. The base's cutoff becomes the later of its own and
// cutoff, its Forgot the latest of what it holds, and its Total may pass
// int64 (Base.BigTotal). Entries retired without a time are never folded,
// and a fold that would take the base's total to 2^126 (never in practice)
// folds nothing: those entries stay retired. It returns how many it folded.
// Merge keeps the later-cutoff base and drops entries retired before it:
// exact under the grace period of SPEC.md 6.10 (fold only a grace period in
// the past: every older retirement has reached every folding state, no
// older state is merged, and no actor writes again after being retired that
// long).
func (g *GCounter) Fold(cutoff time.Time) int {
	g.init()
	if cutoff.UnixNano() <= 0 {
		return 0
	}
	cut := min(max(cutoff.UnixNano(), g.base.cut), maxForgotNanos)
	if !g.foldFits(cut) {
		return 0
	}
	total, forgot, n := g.dropRetired(cut)
	if n == 0 {
		return 0
	}
	g.val.AddInt128(total)
	g.base.total.AddInt128(total)
	g.base.forgot = max(g.base.forgot, forgot)
	g.base.cut = cut
	g.horizon = max(g.horizon, g.base.forgot)
	g.grown += baseBound
	return n
}

// Fold folds both halves and returns how many entries it folded.
func (c *Counter) Fold(cutoff time.Time) int {
	c.link()
	return c.p.Fold(cutoff) + c.n.Fold(cutoff)
}

// foldFits reports whether the base's total plus those of the entries
// retired before cut stays below maxBaseTotal (SPEC.md 6.10).
func (g *GCounter) foldFits(cut int64) bool {
	t := g.base.total
	for _, e := range g.entries {
		if e.inBase(cut) {
			t.Add(e.total)
		}
	}
	for i := range g.dorm.n() {
		if _, total, _, at := g.dorm.fields(i); at != 0 && at < cut {
			t.Add(total)
		}
	}
	return t.Cmp(maxBaseTotal) < 0
}

// dropRetired removes the entries a base of cutoff cut holds, and their
// totals from the value; it returns their sum, latest forgot and number.
func (g *GCounter) dropRetired(cut int64) (total exact.Int128, forgot int64, n int) {
	var gone []*entry
	for _, e := range g.entries {
		if e.inBase(cut) {
			gone = append(gone, e)
		}
	}
	for _, e := range gone {
		total.Add(e.total)
		forgot = max(forgot, e.forgot)
		g.swap(e.actor, e, nil)
	}
	n = len(gone)
	if g.dorm.n() > 0 {
		k := 0
		d := g.dorm.filter(func(i int) bool {
			_, t, f, at := g.dorm.fields(i)
			if at == 0 || at >= cut {
				return false
			}
			g.val.Sub(t)
			total.Add(t)
			forgot = max(forgot, f)
			k++
			return true
		})
		if k > 0 {
			g.nretired -= k
			g.horizonStale = true
			g.setDorm(d)
			n += k
		}
	}
	return total, forgot, n
}

// RetireAllAt is RetireAll writing the retirement time now (at least the base
// cutoff) for Fold (SPEC.md 6.10); now must lie in 1970..MaxForgot (crdt.ErrInvalidConfig).
func (c *Counter) RetireAllAt(now time.Time, actors ...crdt.ActorID) (bool, error) {
	at, err := retireTime(now)
	if err != nil {
		return false, err
	}
	c.link()
	return retireHalves(at, nil, actors, &c.p, &c.n)
}

// RetireLateAt is RetireAllAt in which each copy of a transaction of late
// that one entry alone holds leaves without counting: another writer
// counted that transaction and no longer holds it, so the copy is a late
// one, which its own writer would take out (SPEC.md 6.10, 6.11 step 3).
func (c *Counter) RetireLateAt(now time.Time, late []crdt.TxnID, actors ...crdt.ActorID) (bool, error) {
	at, err := retireTime(now)
	if err != nil {
		return false, err
	}
	set := make(map[crdt.TxnID]bool, len(late))
	for _, x := range late {
		set[x] = true
	}
	c.link()
	return retireHalves(at, set, actors, &c.p, &c.n)
}

// RetireAt is Retire with the retirement time now (Counter.RetireAllAt).
func (g *GCounter) RetireAt(now time.Time, actor crdt.ActorID) (bool, error) {
	at, err := retireTime(now)
	if err != nil {
		return false, err
	}
	g.init()
	return retireHalves(at, nil, []crdt.ActorID{actor}, g)
}

func retireTime(now time.Time) (int64, error) {
	at := now.UnixNano()
	if now.Year() < 1970 || at <= 0 || at > maxForgotNanos {
		return 0, fmt.Errorf("%w: retirement time %s outside 1970..%s", crdt.ErrInvalidConfig, now.Format(time.RFC3339Nano), MaxForgot.Format(time.RFC3339))
	}
	return at, nil
}

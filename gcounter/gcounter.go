package gcounter

import (
	"cmp"
	"fmt"
	"iter"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
)

// MaxActors is the most actors Increment adds (a new one past it is
// crdt.ErrTooLarge), so that even a PNCounter of MaxIDLen-byte ids and
// nine-byte counts stays under crdt.DefaultMaxEncodedSize. Needing more is
// almost always "actor explosion" (a fresh ActorID per process start).
const MaxActors = 30000

// MaxMergedActors bounds, for memory, the actors Merge and the decoder
// accept (crdt.ErrTooLarge): not MaxActors, which writers that could not
// see each other may pass together without either passing it (SPEC.md 4.2).
const MaxMergedActors = 1 << 16

// entry is one actor's contribution.
type entry struct {
	actor crdt.ActorID
	count int64
}

// Counter is a grow-only counter: each actor owns one non-negative count,
// and the value is their sum. Only positive counts are stored, so counters
// with the same count per actor are Equal and encode alike.
//
// The zero value is an empty counter. A Counter is not safe for concurrent
// use, and copying one aliases its storage; use Clone.
type Counter struct {
	index   index        // actor -> position in entries
	entries []entry      // in the order actors were added
	total   exact.Int128 // cached sum of counts: past int64 only by Merge
}

// Compile-time check that *Counter satisfies the shared contracts.
var (
	_ crdt.State[*Counter] = (*Counter)(nil)
	_ crdt.Valuer          = (*Counter)(nil)
	_ crdt.Codec           = (*Counter)(nil)
)

// New returns an empty counter. It is equivalent to new(Counter).
func New() *Counter { return new(Counter) }

// orEmpty returns c, or an empty counter for a nil c.
func (c *Counter) orEmpty() *Counter {
	if c == nil {
		return &Counter{}
	}
	return c
}

// Increment adds n to actor's count: n must be non-negative (ErrInvalidAmount);
// zero changes nothing but validates the actor (ErrInvalidActor). A total past
// math.MaxInt64 is ErrOverflow (zero included, once a merge took the total
// past it: SPEC.md 4.2), a new actor past MaxActors ErrTooLarge; on error c is
// unchanged. A known actor does not allocate.
func (c *Counter) Increment(actor crdt.ActorID, n int64) error {
	if n < 0 {
		return fmt.Errorf("gcounter: increment of %d by %q: %w (must be >= 0)", n, actor, crdt.ErrInvalidAmount)
	}
	i, ok, tag := c.index.find(c.entries, string(actor))
	if !ok {
		// Stored actors were validated on the way in: check only new ones.
		if err := actor.Validate(); err != nil {
			return fmt.Errorf("gcounter: increment: %w", err)
		}
	}
	if !c.fits(n) {
		return fmt.Errorf("gcounter: increment of %d by %q: %w (total %s)", n, actor, crdt.ErrOverflow, c.BigValue())
	}
	if n == 0 {
		return nil
	}
	if ok {
		// count <= total, so count+n cannot overflow either.
		c.entries[i].count += n
		c.total.Add(n)
		return nil
	}
	if len(c.entries) >= MaxActors {
		return fmt.Errorf("gcounter: new actor %q: %w (%d actors, limit %d)", actor, crdt.ErrTooLarge, len(c.entries), MaxActors)
	}
	c.add(actor, n, tag)
	c.total.Add(n)
	return nil
}

// fits reports whether total + n (n >= 0) fits in int64.
func (c *Counter) fits(n int64) bool {
	t, ok := c.total.Int64()
	return ok && t <= math.MaxInt64-n
}

// Grow reserves room for n more actors (capped at MaxMergedActors), like
// slices.Grow: capacity only, never the state; exact on an empty counter.
func (c *Counter) Grow(n int) {
	n = min(n, MaxMergedActors-len(c.entries))
	if n <= 0 {
		return
	}
	c.index.resize(len(c.entries) + n)
	c.entries = slices.Grow(c.entries, n)
}

// Handle adds to one actor's count without a lookup (see Counter.Handle);
// its zero value is not usable.
type Handle struct {
	c     *Counter
	actor crdt.ActorID
	i     int // the position of actor's entry in c.entries, when it has one
}

// Handle returns a Handle for actor, whose Add is Increment(actor, n) without
// the lookup, for a writer incrementing its own actor. It stays valid (after
// a replacing UnmarshalBinary it looks up again); c must not be nil.
func (c *Counter) Handle(actor crdt.ActorID) Handle {
	h := Handle{c: c, actor: actor, i: -1}
	h.find()
	return h
}

// find sets h.i to the actor's position and h.actor to the entry's id, so
// that Add compares two pointers to one string.
func (h *Handle) find() {
	if i, ok, _ := h.c.index.find(h.c.entries, string(h.actor)); ok {
		h.i, h.actor = i, h.c.entries[i].actor
	} else {
		h.i = -1
	}
}

// Add is Increment(actor, n) for the handle's actor, with the same errors.
func (h *Handle) Add(n int64) error {
	c := h.c
	if i := h.i; uint(i) < uint(len(c.entries)) && n >= 0 && c.fits(n) && c.entries[i].actor == h.actor {
		c.entries[i].count += n // count <= total: no overflow
		c.total.Add(n)
		return nil
	}
	return h.slowAdd(n)
}

// slowAdd is Add off the fast path: Increment, then find.
func (h *Handle) slowAdd(n int64) error {
	if err := h.c.Increment(h.actor, n); err != nil {
		return err
	}
	h.find()
	return nil
}

// Actor returns the handle's actor.
func (h *Handle) Actor() crdt.ActorID { return h.actor }

// add appends a new, validated actor of tag tag; the caller updates total.
func (c *Counter) add(actor crdt.ActorID, n int64, tag uint32) {
	c.index.insert(tag, len(c.entries))
	c.entries = append(c.entries, entry{actor: actor, count: n})
}

// CheckMerge returns Merge(other)'s error without changing c, for types
// that merge several Counters all or none.
func (c *Counter) CheckMerge(other *Counter) error {
	_, err := c.orEmpty().checkMerge(other)
	return err
}

// checkMerge is CheckMerge, also returning how many actors Merge adds.
func (c *Counter) checkMerge(other *Counter) (int, error) {
	if other == nil || other == c || c.mergeFits(other) {
		return 0, nil
	}
	added := 0
	for _, e := range other.entries {
		if _, ok, _ := c.index.find(c.entries, string(e.actor)); !ok {
			added++
		}
	}
	if n := len(c.entries) + added; n > MaxMergedActors {
		return 0, fmt.Errorf("gcounter: merge: %w (%d actors, limit %d)", crdt.ErrTooLarge, n, MaxMergedActors)
	}
	return added, nil
}

// Merge sets c to the join of both counters, the larger count per actor:
// commutative, associative, idempotent; other is never modified and nil is
// empty. More than MaxMergedActors actors is ErrTooLarge, and c is unchanged; a
// merged total past math.MaxInt64 is kept (see Value).
func (c *Counter) Merge(other *Counter) error {
	if other == nil || other == c {
		return nil
	}
	if !c.mergeFits(other) {
		added, err := c.checkMerge(other)
		if err != nil {
			return err
		}
		c.Grow(added)
	}
	c.merge(other)
	return nil
}

// mergeFits reports, in O(1), whether merging other cannot fail: both
// actor counts added up fit.
func (c *Counter) mergeFits(other *Counter) bool {
	return len(c.entries)+len(other.entries) <= MaxMergedActors
}

// merge is Merge known not to fail. Counters often share actor order (decoded,
// cloned), so each actor is looked for after the previous one, hashed only if not there.
func (c *Counter) merge(other *Counter) {
	es := c.entries
	next := 0       // where other's next actor is expected in es
	aligned := true // the last actor found was where expected
	for k := range other.entries {
		e := &other.entries[k]
		i := next
		if !aligned || i >= len(es) || es[i].actor != e.actor {
			var ok bool
			var tag uint32
			if i, ok, tag = c.index.find(es, string(e.actor)); !ok {
				if len(es) == cap(es) {
					c.entries = slices.Grow(c.entries, len(other.entries)-k) // at most the rest are new
				}
				c.add(e.actor, e.count, tag)
				c.total.Add(e.count)
				es = c.entries
				continue
			}
			// Unrelated orders stop comparing (each compare would read an id
			// out of cache) until an actor is found where expected.
			aligned = i == next
		}
		if d := e.count - es[i].count; d > 0 {
			c.total.Add(d)
			es[i].count = e.count
		}
		next = i + 1
	}
}

// Value returns the sum of all counts, in O(1). Writers that could not see
// each other may pass math.MaxInt64 (SPEC.md 4.1): Value then returns
// math.MaxInt64, BigValue the exact sum, and Increment refuses.
func (c *Counter) Value() int64 { return c.orEmpty().total.Clamp() }

// BigValue returns the exact sum of all counts (see Value).
func (c *Counter) BigValue() *big.Int { return c.orEmpty().total.Big() }

// Get returns actor's count, zero if the counter does not hold actor.
func (c *Counter) Get(actor crdt.ActorID) int64 {
	c = c.orEmpty()
	if i, ok, _ := c.index.find(c.entries, string(actor)); ok {
		return c.entries[i].count
	}
	return 0
}

// Len returns the number of actors with a positive count.
func (c *Counter) Len() int {
	if c == nil {
		return 0
	}
	return len(c.entries)
}

// Actors returns the actors with a positive count, sorted by byte order.
func (c *Counter) Actors() []crdt.ActorID {
	c = c.orEmpty()
	out := make([]crdt.ActorID, len(c.entries))
	for i, e := range c.sorted() {
		out[i] = e.actor
	}
	return out
}

// All iterates over (actor, count) pairs in actor byte order, the order of
// the encoding. The counter must not be changed during the iteration.
func (c *Counter) All() iter.Seq2[crdt.ActorID, int64] {
	c = c.orEmpty()
	return func(yield func(crdt.ActorID, int64) bool) {
		for _, e := range c.sorted() {
			if !yield(e.actor, e.count) {
				return
			}
		}
	}
}

// sorted returns a copy of the entries in actor order.
func (c *Counter) sorted() []entry {
	s := slices.Clone(c.entries)
	slices.SortFunc(s, func(a, b entry) int { return cmp.Compare(a.actor, b.actor) })
	return s
}

// Clone returns a deep copy.
func (c *Counter) Clone() *Counter {
	c = c.orEmpty()
	out := &Counter{total: c.total}
	if len(c.entries) > 0 {
		out.entries = slices.Clone(c.entries)
		out.index = index{slots: slices.Clone(c.index.slots), n: c.index.n} // same positions
	}
	return out
}

// Equal reports whether both counters hold the same count for every actor
// (so the same value and encoding); nil equals empty.
func (c *Counter) Equal(other *Counter) bool {
	if c == nil || other == nil {
		return c.Len() == other.Len()
	}
	if c.total != other.total || len(c.entries) != len(other.entries) {
		return false
	}
	return !slices.ContainsFunc(c.entries, func(e entry) bool { return other.Get(e.actor) != e.count })
}

// String formats the counter for debugging, actors in order.
func (c *Counter) String() string {
	c = c.orEmpty()
	rows := make([]string, 0, len(c.entries))
	for a, n := range c.All() {
		rows = append(rows, fmt.Sprintf("%q:%d", a, n))
	}
	return fmt.Sprintf("gcounter(%s){%s}", c.BigValue(), strings.Join(rows, " "))
}

// Stats describes a counter's size.
type Stats struct {
	// Actors is the number of actors with a positive count.
	Actors int
	// EncodedSize is len(MarshalBinary()) in bytes.
	EncodedSize int
}

// Stats returns the counter's size without encoding it, in O(actors log
// actors): the front coding needs the actors sorted.
func (c *Counter) Stats() Stats {
	c = c.orEmpty()
	return Stats{Actors: c.Len(), EncodedSize: envelopeSize + c.bodySize()}
}

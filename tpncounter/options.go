package tpncounter

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"

	"github.com/counterkit/counterkit/crdt"
)

// Defaults and hard limits; SPEC.md 6.8 gives the retry window they bound.
const (
	// DefaultHistoryLength is the HistoryLength of a zero option; with the
	// default FoldedLength a retry is recognised while its owner has made
	// fewer than 20 later writes, in an entry of about 300 bytes (short
	// ids) to 450 (UUIDs).
	DefaultHistoryLength = 10

	// MaxHistoryLength is the largest accepted HistoryLength or FoldedLength.
	MaxHistoryLength = 1024

	// DefaultMaxActors is the actor limit when Options.MaxActors is zero.
	DefaultMaxActors = 4096

	// MaxActorsLimit is the largest accepted Options.MaxActors.
	MaxActorsLimit = 1 << 16

	// MaxEntriesPerActor bounds an actor's items (Apply, Merge, decoder); beyond
	// HistoryLength+FoldedLength only while a folded one is held elsewhere.
	MaxEntriesPerActor = 4096
)

// Options configure a GCounter or Counter. The zero value selects every
// default. Options are not part of the encoding: replicas that exchange
// states should use the same lengths, although states encoded under other
// lengths still decode and merge (within the size limits).
type Options struct {
	// HistoryLength is how many recent transactions an actor keeps before folding
	// the oldest (one more right after Apply). Zero means DefaultHistoryLength.
	HistoryLength int

	// FoldedLength is how many folded ids an actor remembers for late retries (zero:
	// HistoryLength), each until no other actor visibly holds it.
	FoldedLength int

	// TxnTime, when set, gives every transaction a time: its creation, carried
	// by every retry (a version 1 UUID has one; see TimeUUID). Apply then
	// refuses ids without one (crdt.ErrInvalidTxnID), and unknown transactions
	// not after the horizon, the newest time forgotten (crdt.ErrOutsideWindow):
	// it may have been counted and forgotten, so a late retry is refused
	// rather than counted twice. Every writer of a counter must use the same
	// TxnTime. Nil keeps the window stated in writes only.
	TxnTime func(crdt.TxnID) (time.Time, bool)

	// FutureSkew, with TxnTime, refuses (crdt.ErrOutsideWindow) times more than it after
	// Clock(), which would move the horizon that far. Zero: unchecked.
	FutureSkew time.Duration

	// Clock returns the current time for FutureSkew. Nil means time.Now.
	Clock func() time.Time

	// MaxActors bounds one GCounter's live actors in Apply only: a new or
	// retired actor is refused (crdt.ErrTooLarge) at MaxActors live ones,
	// while Merge and the decoder accept more (see MaxRetired). Zero means DefaultMaxActors.
	MaxActors int

	// MaxEncodedSize caps the encoding Apply may grow the state to
	// (crdt.ErrTooLarge, state unchanged; SPEC.md 6.3 step 3): a driver
	// gives the largest value its store accepts, less what it changes
	// after Apply (Compact, Retract, retirement, Fold are not capped). Merge and the decoder accept up to
	// crdt.DefaultMaxEncodedSize, so states that each fit can always be
	// read together. Zero means crdt.DefaultMaxEncodedSize, the largest.
	MaxEncodedSize int
}

// resolved fills in defaults, or wraps crdt.ErrInvalidConfig.
func (o Options) resolved() (Options, error) {
	if o.HistoryLength < 0 || o.HistoryLength > MaxHistoryLength {
		return o, fmt.Errorf("%w: HistoryLength %d outside 0..%d", crdt.ErrInvalidConfig, o.HistoryLength, MaxHistoryLength)
	}
	if o.FoldedLength < 0 || o.FoldedLength > MaxHistoryLength {
		return o, fmt.Errorf("%w: FoldedLength %d outside 0..%d", crdt.ErrInvalidConfig, o.FoldedLength, MaxHistoryLength)
	}
	if o.FutureSkew < 0 {
		return o, fmt.Errorf("%w: negative FutureSkew %v", crdt.ErrInvalidConfig, o.FutureSkew)
	}
	if o.MaxActors < 0 || o.MaxActors > MaxActorsLimit {
		return o, fmt.Errorf("%w: MaxActors %d outside 0..%d", crdt.ErrInvalidConfig, o.MaxActors, MaxActorsLimit)
	}
	if o.MaxEncodedSize < 0 || o.MaxEncodedSize > crdt.DefaultMaxEncodedSize {
		return o, fmt.Errorf("%w: MaxEncodedSize %d outside 0..%d", crdt.ErrInvalidConfig, o.MaxEncodedSize, crdt.DefaultMaxEncodedSize)
	}
	o.MaxEncodedSize = cmp.Or(o.MaxEncodedSize, crdt.DefaultMaxEncodedSize)
	o.HistoryLength = cmp.Or(o.HistoryLength, DefaultHistoryLength)
	o.FoldedLength = cmp.Or(o.FoldedLength, o.HistoryLength)
	o.MaxActors = cmp.Or(o.MaxActors, DefaultMaxActors)
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o, nil
}

// Validate reports whether o is usable. The error wraps crdt.ErrInvalidConfig.
func (o Options) Validate() error {
	_, err := o.resolved()
	return err
}

// TimeUUID is an Options.TxnTime for transaction ids that are version 1
// (time-based) UUIDs in their canonical text form, such as
// "6ba7b810-9dad-11d1-80b4-00c04fd430c8": it returns the time the UUID
// encodes. Other ids have no time. Uppercase hex digits are accepted too,
// but ids compare byte by byte: a retry that writes a transaction's UUID
// in another case is a different transaction (and, not being canonical
// lowercase text, is kept as text rather than as 16 bytes, SPEC.md 6.7).
func TimeUUID(txn crdt.TxnID) (time.Time, bool) {
	u, err := uuid.Parse(string(txn))
	if err != nil || u.Version() != 1 || u.Variant() != uuid.RFC4122 || len(txn) != 36 {
		return time.Time{}, false
	}
	// Only times a Unix-nanosecond int64 holds (1970 to 2262) are times.
	const gregorianToUnix = 122192928000000000 // 100 ns intervals, 1582-10-15 to 1970-01-01
	ticks := int64(u.Time())
	if ticks <= gregorianToUnix || ticks-gregorianToUnix > math.MaxInt64/100 {
		return time.Time{}, false
	}
	return time.Unix(0, (ticks-gregorianToUnix)*100).UTC(), true
}

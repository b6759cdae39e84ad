package tpncounter

import (
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"

	"github.com/counterkit/counterkit/crdt"
)

// Defaults and hard limits. SPEC.md 6.8 gives how the two lengths bound
// the retry window.
const (
	// DefaultHistoryLength is the number of recent transactions an actor keeps
	// in its history when Options.HistoryLength is zero: 10 recognises a
	// retry across ten later writes by the same actor while keeping an
	// entry under ~400 bytes.
	DefaultHistoryLength = 10

	// MaxHistoryLength is the largest accepted HistoryLength or FoldedLength.
	MaxHistoryLength = 1024

	// DefaultMaxActors is the actor limit when Options.MaxActors is zero.
	DefaultMaxActors = 4096

	// MaxActorsLimit is the largest accepted Options.MaxActors.
	MaxActorsLimit = 1 << 16

	// MaxEntriesPerActor bounds one actor's history plus folded record, in
	// Apply, Merge and the decoder. Entries beyond HistoryLength+FoldedLength
	// exist only while a folded transaction is still held elsewhere.
	MaxEntriesPerActor = 4096
)

// Options configure a GCounter or Counter. The zero value selects every
// default. Options are not part of the encoding: replicas that exchange
// states should use the same lengths, although states encoded under other
// lengths still decode and merge (within the size limits).
type Options struct {
	// HistoryLength is how many of its own recent transactions an actor keeps
	// before the oldest is folded into its total.
	// Apply folds before it appends, so right after an Apply an actor holds up
	// to HistoryLength+1 transactions; Compact brings it back to
	// HistoryLength. Zero means DefaultHistoryLength.
	HistoryLength int

	// FoldedLength is how many folded transaction ids an actor remembers after
	// folding them, so that late retries and stale duplicates are still
	// recognised. Zero means the same as HistoryLength. A folded id is
	// forgotten only once no other actor visibly holds it.
	FoldedLength int

	// TxnTime, when set, gives every transaction a time: the moment the
	// client created it, carried unchanged by every retry (a version 1 UUID
	// id carries one; see TimeUUID). Apply then refuses ids it gives no
	// time for (crdt.ErrInvalidTxnID), and refuses a transaction it does not
	// know whose time is not after the horizon, the newest time among the
	// transactions actors have forgotten (crdt.ErrOutsideWindow): that
	// transaction may be one that was counted and forgotten, so a retry
	// beyond the window is refused instead of counted twice. Every replica
	// that writes a counter must use the same TxnTime. Nil (the default)
	// keeps transactions untimed and the window stated in writes only.
	TxnTime func(crdt.TxnID) (time.Time, bool)

	// FutureSkew, with TxnTime, makes Apply refuse (crdt.ErrOutsideWindow)
	// a transaction whose time is more than FutureSkew after Clock(). Set
	// it: a transaction stamped far in the future moves the horizon that
	// far once it is forgotten, and every transaction older than it is then
	// refused. Zero leaves times unchecked.
	FutureSkew time.Duration

	// Clock returns the current time for FutureSkew. Nil means time.Now.
	Clock func() time.Time

	// MaxActors bounds the number of actors in one GCounter. Apply and Merge
	// return an error wrapping crdt.ErrTooLarge instead of exceeding it, and
	// the decoder rejects larger encodings. Zero means DefaultMaxActors.
	MaxActors int
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
	if o.HistoryLength == 0 {
		o.HistoryLength = DefaultHistoryLength
	}
	if o.FoldedLength == 0 {
		o.FoldedLength = o.HistoryLength
	}
	if o.MaxActors == 0 {
		o.MaxActors = DefaultMaxActors
	}
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
// encodes. Other ids have no time.
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

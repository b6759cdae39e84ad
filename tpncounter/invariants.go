package tpncounter

import (
	"fmt"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
)

// InvariantError is the decoder's error (wrapping crdt.ErrCorruptEncoding) for
// an entry no writer produces; Invariant names the rule (SPEC.md 6.7).
type InvariantError struct {
	Invariant string // e.g. "forgot-within-txn-times"
	Detail    string
}

// The invariants the decoder checks beyond the layout (SPEC.md 6.7).
const (
	// InvForgotWithinTxnTimes: forgot is 0 or before MaxForgot.
	InvForgotWithinTxnTimes = "forgot-within-txn-times"
	// InvSeqCountsItems: a live entry's seq is at least its transactions.
	InvSeqCountsItems = "seq-counts-items"
	// InvTotalCoversFolded: a live entry's total covers its folded record.
	InvTotalCoversFolded = "total-covers-folded"
	// InvHistoryWithinCap: a history holds at most MaxHistoryLength + 1.
	InvHistoryWithinCap = "history-within-cap"
	// InvSumFits: a live entry's total plus its history's amounts fits in
	// int64 (so its folds and retirement do).
	InvSumFits = "sum-fits"
	// InvBaseCutoff: a base's cutoff is a time in 1970..MaxForgot.
	InvBaseCutoff = "base-cutoff"
	// InvBaseTotal: a base's total is below 2^126 (see Fold).
	InvBaseTotal = "base-total"
	// InvRetiredAfterCutoff: a retirement time is in 1970..MaxForgot and not
	// before its half's base cutoff.
	InvRetiredAfterCutoff = "retired-after-cutoff"
)

func (e *InvariantError) Error() string {
	return fmt.Sprintf("%v: invariant %s: %s", crdt.ErrCorruptEncoding, e.Invariant, e.Detail)
}

// Unwrap returns crdt.ErrCorruptEncoding.
func (e *InvariantError) Unwrap() error { return crdt.ErrCorruptEncoding }

func invariantf(name, format string, args ...any) error {
	return &InvariantError{Invariant: name, Detail: fmt.Sprintf(format, args...)}
}

// MaxForgot is the latest forgot (and horizon) an entry may carry: the end
// of 2261, the last year a TxnTime may give, plus a day for time zones. The
// decoder refuses later ones (InvForgotWithinTxnTimes): no writer produces
// them, and they would make the counter refuse every timed transaction.
var MaxForgot = time.Date(2262, 1, 2, 0, 0, 0, 0, time.UTC)

var maxForgotNanos = MaxForgot.UnixNano()

// checkForgot refuses a forgot no writer produces.
func checkForgot(a crdt.ActorID, forgot int64) error {
	if forgot > maxForgotNanos {
		return invariantf(InvForgotWithinTxnTimes, "actor %q: forgot %d ns is after %s, the latest time a transaction may have", a, forgot, MaxForgot.Format(time.RFC3339))
	}
	return nil
}

// checkCounts refuses a live entry e, its lists read into l, whose counts
// no writes produce.
func checkCounts(e *rawEntry, l *txnList) error {
	n := uint32(len(l.items))
	nf := n - uint32(l.nh)
	if h := n - nf; h > MaxHistoryLength+1 {
		return invariantf(InvHistoryWithinCap, "actor %q holds %d transactions in its history, more than MaxHistoryLength + 1 (%d)", e.name(), h, MaxHistoryLength+1)
	}
	if e.seq < uint64(n) {
		return invariantf(InvSeqCountsItems, "actor %q: sequence number %d below the %d transactions its entry holds", e.name(), e.seq, n)
	}
	sum := exact.Int128{}
	sum.Add(e.total)
	for _, t := range l.items[:l.nh] {
		sum.Add(t.amt)
	}
	if !fits(sum) {
		return invariantf(InvSumFits, "actor %q: total %d and history sum past int64", e.name(), e.total)
	}
	left := e.total // what the folded items may still take
	for _, t := range l.items[l.nh:] {
		amt := t.amt
		if amt > left {
			return invariantf(InvTotalCoversFolded, "actor %q: total %d below the sum of its folded record", e.name(), e.total)
		}
		left -= amt
	}
	return nil
}

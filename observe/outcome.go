package observe

import (
	"context"
	"errors"
	"strings"

	"github.com/counterkit/counterkit/crdt"
)

// OutcomeOf maps an operation's error to an Outcome: OK for nil, else the
// outcome of the sentinel it wraps, in ErrorType's order. A write that may
// have landed is Ambiguous even when the context ended or the update's
// window passed (a tally flush whose outcome stays unknown for good); a
// context that ended otherwise is Canceled or Timeout, not Unavailable.
func OutcomeOf(err error) string {
	switch {
	case err == nil:
		return OK
	case errors.Is(err, crdt.ErrAmbiguousWrite):
		return Ambiguous
	case errors.Is(err, context.Canceled):
		return Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	case errors.Is(err, crdt.ErrUnavailable):
		return Unavailable
	case errors.Is(err, crdt.ErrOutsideWindow):
		return OutsideWindow
	case errors.Is(err, crdt.ErrExpired):
		return Expired
	case errors.Is(err, crdt.ErrInvalidActor), errors.Is(err, crdt.ErrInvalidTxnID), errors.Is(err, crdt.ErrInvalidAmount),
		errors.Is(err, crdt.ErrConflictingTransaction), errors.Is(err, crdt.ErrOverflow), errors.Is(err, crdt.ErrInvalidIdentifier),
		errors.Is(err, crdt.ErrInvalidConfig):
		return Invalid
	}
	return Error
}

// StoreCall reports whether e is a store call reported by Siblings or
// Partitions.
func (e Event) StoreCall() bool { return strings.HasPrefix(e.Component, "store.") }

// Failed reports whether e has an error that is neither a refusal
// (Invalid, OutsideWindow, Expired) nor Canceled by its caller.
func (e Event) Failed() bool {
	return e.Err != nil && e.Outcome != Invalid && e.Outcome != Canceled && !IsWindowRefusal(e.Outcome)
}

// IsDuplicate reports whether outcome is a retry recognised as already
// counted: Duplicate or DuplicateFolded.
func IsDuplicate(outcome string) bool { return outcome == Duplicate || outcome == DuplicateFolded }

// IsWindowRefusal reports whether outcome refuses an update for its age:
// OutsideWindow or Expired.
func IsWindowRefusal(outcome string) bool { return outcome == OutsideWindow || outcome == Expired }

// Counts calls fn with the name and value of each non-zero count of e, in
// the order of Event's fields (Lag, a duration, is not a count).
func (e Event) Counts(fn func(name string, n int)) {
	for _, c := range [...]struct {
		name string
		n    int
	}{
		{"attempts", e.Attempts}, {"ambiguous", e.Ambiguous}, {"refused", e.Refused},
		{"siblings", e.Siblings}, {"conflicts", e.Conflicts}, {"folded", e.Folded}, {"retired", e.Retired},
		{"bytes", e.Bytes}, {"actors", e.Actors}, {"rows", e.Rows},
	} {
		if c.n != 0 {
			fn(c.name, c.n)
		}
	}
}

// OtherError is what ErrorType returns for an error it cannot name.
const OtherError = "_OTHER"

// errorTypes names the sentinels, most specific first: an error that wraps
// two (an ambiguous write whose context ended) is named by the first.
var errorTypes = []struct {
	err  error
	name string
}{
	{crdt.ErrAmbiguousWrite, "ambiguous_write"},
	{context.Canceled, "canceled"},
	{context.DeadlineExceeded, "timeout"},
	{crdt.ErrUnavailable, "unavailable"},
	{crdt.ErrOutsideWindow, "outside_window"},
	{crdt.ErrExpired, "expired"},
	{crdt.ErrInvalidKey, "invalid_key"},
	{crdt.ErrInvalidIdentifier, "invalid_identifier"},
	{crdt.ErrInvalidActor, "invalid_actor"},
	{crdt.ErrInvalidTxnID, "invalid_txn_id"},
	{crdt.ErrInvalidAmount, "invalid_amount"},
	{crdt.ErrConflictingTransaction, "conflicting_transaction"},
	{crdt.ErrOverflow, "overflow"},
	{crdt.ErrInvalidConfig, "invalid_config"},
	{crdt.ErrTooLarge, "too_large"},
	{crdt.ErrInsufficientRights, "insufficient_rights"},
	{crdt.ErrCorruptEncoding, "corrupt_encoding"},
	{crdt.ErrUnsupportedVersion, "unsupported_version"},
	{crdt.ErrTypeMismatch, "type_mismatch"},
	{crdt.ErrNotFound, "not_found"},
	{crdt.ErrMisconfiguredStore, "misconfigured_store"},
}

// ErrorSummary is err's message without what it says of the call: the
// text of the sentinel ErrorType names (no key, id or amount), else
// ErrorType's name; "" for nil.
func ErrorSummary(err error) string {
	if err == nil {
		return ""
	}
	for _, t := range errorTypes {
		if errors.Is(err, t.err) {
			return t.err.Error()
		}
	}
	return ErrorType(err)
}

// ErrorType names err for OpenTelemetry's error.type: the crdt sentinel it
// wraps ("ambiguous_write", "invalid_key", ...), "canceled" or "timeout",
// else what an ErrorType() method in its chain returns, else OtherError;
// "" for nil.
func ErrorType(err error) string {
	if err == nil {
		return ""
	}
	for _, t := range errorTypes {
		if errors.Is(err, t.err) {
			return t.name
		}
	}
	var typed interface{ ErrorType() string }
	if errors.As(err, &typed) {
		if s := typed.ErrorType(); s != "" {
			return s
		}
	}
	return OtherError
}

package observe

import (
	"context"
	"errors"

	"github.com/counterkit/counterkit/crdt"
)

// OutcomeOf maps an operation's error to an Outcome: OK for nil, and the
// outcome of the sentinel it wraps otherwise. Drivers with richer outcomes
// (a ledger's duplicate kinds) report those instead on success.
func OutcomeOf(err error) string {
	switch {
	case err == nil:
		return OK
	case errors.Is(err, crdt.ErrOutsideWindow):
		return OutsideWindow
	case errors.Is(err, crdt.ErrExpired):
		return Expired
	case errors.Is(err, crdt.ErrAmbiguousWrite):
		return Ambiguous
	case errors.Is(err, crdt.ErrUnavailable), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return Unavailable
	case errors.Is(err, crdt.ErrInvalidActor), errors.Is(err, crdt.ErrInvalidTxnID), errors.Is(err, crdt.ErrInvalidAmount),
		errors.Is(err, crdt.ErrConflictingTransaction), errors.Is(err, crdt.ErrOverflow), errors.Is(err, crdt.ErrInvalidIdentifier),
		errors.Is(err, crdt.ErrInvalidConfig):
		return Invalid
	}
	return Error
}

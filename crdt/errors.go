package crdt

import (
	"errors"
	"fmt"
)

// Sentinel errors, grouped by the operation that returns them. Every error
// returned by counterkit wraps one of these, so callers test with
// errors.Is and never compare strings; a few join two, as their
// operation's doc says (a write whose outcome is unknown and whose resend
// was refused is ErrAmbiguousWrite and ErrUnavailable). The exception is a
// call stopped by its context, which may return the context's error
// (context.Canceled, context.DeadlineExceeded) as it is: test for those
// with errors.Is too. Adapters wrap driver errors so that
// errors.Is(err, crdt.ErrX) and errors.As(err, &driverErr) both work.

// Errors returned when validating input to Apply-style operations.
var (
	// ErrInvalidActor is returned when an ActorID is empty, too long, not
	// valid UTF-8 or contains control characters.
	ErrInvalidActor = errors.New("counterkit: invalid actor id")

	// ErrInvalidTxnID is returned when a transaction or update id is empty,
	// too long, not valid UTF-8 or contains control characters.
	ErrInvalidTxnID = errors.New("counterkit: invalid transaction id")

	// ErrInvalidAmount is returned when an amount is out of the domain an
	// operation accepts (a negative increment of a grow-only counter, zero
	// where zero is meaningless, math.MinInt64 where it cannot be negated).
	ErrInvalidAmount = errors.New("counterkit: invalid amount")

	// ErrOverflow is returned when an exact int64 result would not fit. The
	// receiver is left unchanged; counterkit never wraps silently.
	ErrOverflow = errors.New("counterkit: integer overflow")

	// ErrConflictingTransaction is returned when one transaction id is seen
	// with two different amounts or signs. The receiver is left unchanged.
	ErrConflictingTransaction = errors.New("counterkit: conflicting amounts for one transaction id")

	// ErrInvalidConfig is returned when options are out of range (a zero
	// history length, a negative window).
	ErrInvalidConfig = errors.New("counterkit: invalid configuration")
)

// Errors returned when an update falls outside a type's stated guarantee.
var (
	// ErrOutsideWindow is returned when an update is older than the type's
	// write or retry window, so exactly-once can no longer be promised, or
	// further ahead of the clock than the type's FutureSkew allows.
	ErrOutsideWindow = errors.New("counterkit: update outside the write window")

	// ErrExpired is returned by a sharded-tally mutator that is past its
	// refuse-before-expiry margin; the caller must start a fresh mutator.
	ErrExpired = errors.New("counterkit: mutator expired")

	// ErrTooLarge is returned when a state would exceed a configured size
	// bound (actors, history entries, shards, encoded bytes).
	ErrTooLarge = errors.New("counterkit: state exceeds size limit")

	// ErrInsufficientRights is returned when a bounded counter's actor
	// debits or gives away more than the rights it holds, so the write
	// could take the value below its bound. Nothing is changed; the error
	// says how much the actor may debit now.
	ErrInsufficientRights = errors.New("counterkit: insufficient rights")
)

// Errors returned by decoders.
var (
	// ErrCorruptEncoding is returned when bytes are not a well-formed
	// encoding of the expected type (truncated, wrong msgpack kind, trailing
	// bytes, invalid field values, non-canonical ordering).
	ErrCorruptEncoding = errors.New("counterkit: corrupt encoding")

	// ErrUnsupportedVersion is returned when the envelope carries a format
	// version this build cannot read.
	ErrUnsupportedVersion = errors.New("counterkit: unsupported format version")

	// ErrTypeMismatch is returned when the envelope's type tag names a
	// different type than the one being decoded.
	ErrTypeMismatch = errors.New("counterkit: encoded type does not match")
)

// Errors returned by stores and the storage-independent drivers above them.
var (
	// ErrNotFound is returned when a key has no stored state and the
	// operation requires one.
	ErrNotFound = errors.New("counterkit: not found")

	// ErrAmbiguousWrite is returned when a write may or may not have landed
	// (a timeout after send, a connection reset, a 5xx) and retries were
	// exhausted. What is safe to send again is each driver's to say: a
	// ledger call, a deltalog or balance update (same id) and a tally
	// Mutator's Retry count once; a gcounter or pncounter increment
	// through statestore.Update is not idempotent: send the state it
	// returned again with statestore.Save instead (statestore's doc).
	ErrAmbiguousWrite = errors.New("counterkit: write outcome unknown")

	// ErrUnavailable is returned when the store refused the operation
	// before it could take effect (not enough replicas, connection refused).
	// The write is known not to have landed, unless the error also wraps
	// ErrAmbiguousWrite (an earlier attempt's write may still land, then
	// the store refused the rest): test for ErrAmbiguousWrite first.
	ErrUnavailable = errors.New("counterkit: store unavailable")

	// ErrInvalidIdentifier is returned when a keyspace, table or bucket name
	// is not a safe identifier for the store.
	ErrInvalidIdentifier = errors.New("counterkit: invalid identifier")

	// ErrInvalidKey is returned by every driver (ledger, tally, deltalog,
	// balance) and adapter for a storage key that breaks the rules of
	// ValidateKey. It wraps ErrInvalidIdentifier.
	ErrInvalidKey = fmt.Errorf("%w: invalid key", ErrInvalidIdentifier)

	// ErrMisconfiguredStore is returned when the store's settings would break
	// a guarantee (a Riak bucket with last_write_wins=true, allow_mult=false).
	ErrMisconfiguredStore = errors.New("counterkit: store misconfigured")
)

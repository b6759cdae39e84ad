package cassandra

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/counterkit/counterkit/crdt"
)

// Error is returned for every failure that comes from the driver. It wraps
// both a counterkit sentinel (Kind) and the driver's error (Err), so that
// errors.Is and errors.As reach both; README.md ("Errors") has the mapping.
// An Error is immutable and safe to share between goroutines.
type Error struct {
	// Op names the adapter operation that failed, for example "siblings put".
	Op string
	// Kind is the counterkit sentinel the failure maps to.
	Kind error
	// Err is the driver's (or the context's) error, unchanged.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("cassandra: %s: %v: %v", e.Op, e.Kind, e.Err)
}

// Unwrap returns the sentinel and the driver error, so errors.Is and
// errors.As reach both.
func (e *Error) Unwrap() []error { return []error{e.Kind, e.Err} }

// wrapErr maps a driver error from operation op (write: one that could
// have changed stored data). A nil err stays nil.
func wrapErr(op string, write bool, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Kind: classify(err, write), Err: err}
}

// wrapWrite is wrapErr for a write the driver executed (classifyWrite).
func wrapWrite(op string, err error, attempts int, batchlog bool) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Kind: classifyWrite(err, attempts, batchlog), Err: err}
}

// classifyWrite picks the sentinel for the error of a write that the
// driver sent attempts times (Iter.Attempts). A "not applied" answer
// (crdt.ErrUnavailable) or a refusal for what the write is
// (crdt.ErrTooLarge) is only trusted when it describes the write's only
// attempt and, for "not applied", no batchlog entry (batchlog: a LOGGED
// batch over several partitions) can replay it; otherwise the write is
// ambiguous (package store, "Errors": a refusal for what it is means
// nothing was written).
func classifyWrite(err error, attempts int, batchlog bool) error {
	kind := classify(err, true)
	if kind == crdt.ErrTooLarge && attempts > 1 {
		return crdt.ErrAmbiguousWrite // an earlier attempt, at another coordinator, may have landed
	}
	if kind != crdt.ErrUnavailable {
		return kind
	}
	if attempts > 1 {
		return crdt.ErrAmbiguousWrite
	}
	if batchlog && is[*gocql.RequestErrOverloaded](err) {
		return crdt.ErrAmbiguousWrite
	}
	return kind
}

// tooLargeMessages are the InvalidRequest messages Cassandra uses when it
// refuses a write for its size, before applying any of it: a
// multi-partition batch above batch_size_fail_threshold_in_kb (4.0:
// BatchStatement.verifyBatchSize); in versions that check it on the
// coordinator, a mutation above max_mutation_size (half of
// commitlog_segment_size_in_mb); and a request frame above
// native_transport_max_frame_size_in_mb (protocol v4, and v5 in versions
// that limit its messages).
var tooLargeMessages = []string{"Batch too large", "Rejected an oversized mutation", "Request is too big"}

// isTooLarge reports whether err is one of Cassandra's size refusals.
func isTooLarge(err error) bool {
	var invalid *gocql.RequestErrInvalid
	if !errors.As(err, &invalid) {
		return false
	}
	return slices.ContainsFunc(tooLargeMessages, func(m string) bool { return strings.Contains(invalid.Message(), m) })
}

// classify picks the sentinel for a driver error; see Error for the table.
func classify(err error, write bool) error {
	switch {
	case is[*gocql.RequestErrUnavailable](err), is[*gocql.RequestErrOverloaded](err), is[*gocql.RequestErrBootstrapping](err),
		errors.Is(err, gocql.ErrNoConnections), errors.Is(err, gocql.ErrNoStreams),
		errors.Is(err, gocql.ErrSessionClosed), errors.Is(err, gocql.ErrUnavailable),
		is[*gocql.RequestErrReadTimeout](err), is[*gocql.RequestErrReadFailure](err):
		return crdt.ErrUnavailable
	case isTooLarge(err), errors.Is(err, gocql.ErrTooManyStmts), errors.Is(err, gocql.ErrFrameTooBig):
		return crdt.ErrTooLarge
	case is[*gocql.RequestErrSyntax](err), is[*gocql.RequestErrInvalid](err), is[*gocql.RequestErrConfig](err),
		is[*gocql.RequestErrUnauthorized](err), is[*gocql.RequestErrCredentials](err),
		is[*gocql.RequestErrAlreadyExists](err), is[*gocql.RequestErrFunctionFailure](err):
		return crdt.ErrMisconfiguredStore
	case write:
		// Write timeouts and failures, the context's end, anything else
		// (see Error): the statement may have been applied.
		return crdt.ErrAmbiguousWrite
	}
	return crdt.ErrUnavailable
}

// is reports whether err has an error of type T in its chain.
func is[T error](err error) bool {
	var t T
	return errors.As(err, &t)
}

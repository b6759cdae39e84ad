package cassandra

import (
	"context"
	"errors"
	"fmt"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/counterkit/counterkit/crdt"
)

// Error is returned for every failure that comes from the driver. It wraps
// both a counterkit sentinel (Kind) and the driver's own error (Err), so that
// errors.Is(err, crdt.ErrAmbiguousWrite) and
// errors.As(err, new(*gocql.RequestErrWriteTimeout)) both work on the same
// value.
//
// The mapping, for a statement that writes (W) or only reads (R):
//
//	*gocql.RequestErrUnavailable, Overloaded, Bootstrapping,
//	gocql.ErrNoConnections, ErrNoStreams, ErrSessionClosed   W,R: crdt.ErrUnavailable (not applied)
//	*gocql.RequestErrWriteTimeout, WriteFailure, CASWriteUnknown,
//	gocql.ErrTimeoutNoResponse, ErrConnectionClosed,
//	context.DeadlineExceeded, context.Canceled               W: crdt.ErrAmbiguousWrite  R: crdt.ErrUnavailable
//	*gocql.RequestErrReadTimeout, ReadFailure                R,W: crdt.ErrUnavailable
//	Syntax, Invalid, Config, Unauthorized, Credentials,
//	AlreadyExists, FunctionFailure                           W,R: crdt.ErrMisconfiguredStore
//	anything else                                            W: crdt.ErrAmbiguousWrite  R: crdt.ErrUnavailable
//
// Every write the adapter sends is idempotent, so an ErrAmbiguousWrite can
// always be resolved by retrying the same call.
//
// An Error is immutable and safe to share between goroutines.
type Error struct {
	// Op names the adapter operation that failed, for example "ledger put".
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

// wrapErr maps a driver error from operation op. write reports whether the
// failed statement could have changed stored data. A nil err stays nil.
func wrapErr(op string, write bool, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Kind: classify(err, write), Err: err}
}

// classify picks the sentinel for a driver error; see Error for the table.
func classify(err error, write bool) error {
	var (
		unavailable   *gocql.RequestErrUnavailable
		overloaded    *gocql.RequestErrOverloaded
		bootstrapping *gocql.RequestErrBootstrapping
		writeTimeout  *gocql.RequestErrWriteTimeout
		writeFailure  *gocql.RequestErrWriteFailure
		casUnknown    *gocql.RequestErrCASWriteUnknown
		readTimeout   *gocql.RequestErrReadTimeout
		readFailure   *gocql.RequestErrReadFailure
		syntax        *gocql.RequestErrSyntax
		invalid       *gocql.RequestErrInvalid
		config        *gocql.RequestErrConfig
		unauthorized  *gocql.RequestErrUnauthorized
		credentials   *gocql.RequestErrCredentials
		exists        *gocql.RequestErrAlreadyExists
		function      *gocql.RequestErrFunctionFailure
	)
	ambiguous := crdt.ErrUnavailable
	if write {
		ambiguous = crdt.ErrAmbiguousWrite
	}
	switch {
	case errors.As(err, &unavailable), errors.As(err, &overloaded), errors.As(err, &bootstrapping),
		errors.Is(err, gocql.ErrNoConnections), errors.Is(err, gocql.ErrNoStreams),
		errors.Is(err, gocql.ErrSessionClosed), errors.Is(err, gocql.ErrUnavailable):
		return crdt.ErrUnavailable
	case errors.As(err, &readTimeout), errors.As(err, &readFailure):
		return crdt.ErrUnavailable
	case errors.As(err, &syntax), errors.As(err, &invalid), errors.As(err, &config),
		errors.As(err, &unauthorized), errors.As(err, &credentials), errors.As(err, &exists),
		errors.As(err, &function):
		return crdt.ErrMisconfiguredStore
	case errors.As(err, &writeTimeout), errors.As(err, &writeFailure), errors.As(err, &casUnknown),
		errors.Is(err, gocql.ErrTimeoutNoResponse), errors.Is(err, gocql.ErrConnectionClosed),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return ambiguous
	default:
		return ambiguous
	}
}

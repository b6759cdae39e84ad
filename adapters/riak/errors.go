package riak

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	riakc "github.com/basho/riak-go-client"

	"github.com/counterkit/counterkit/crdt"
)

// Error is the error every Store and StateStore method returns when the
// store or the driver fails. It wraps both a counterkit sentinel (Kind) and
// the driver's error, so that
//
//	errors.Is(err, crdt.ErrAmbiguousWrite)   // what happened, portably
//	errors.As(err, &riakc.RiakError{})       // what Riak said, exactly
//
// both work. For a write, Kind tells whether the write is known to have
// landed: nil error means it did, crdt.ErrUnavailable means no attempt
// landed, crdt.ErrAmbiguousWrite means some attempt may have landed. Since
// counterkit writes are idempotent, repeating the whole operation later is
// always safe.
//
// An Error is not modified after it is returned and may be shared between
// goroutines.
type Error struct {
	// Op is the operation: "fetch", "store", "delete" or "bucket props".
	Op string
	// Key is the object key, or "" for bucket-level operations.
	Key string
	// Attempts is the number of requests sent (1 + retries).
	Attempts int
	// Kind is the crdt sentinel the failure maps to.
	Kind error
	// Err is the last driver or context error, possibly nil.
	Err error
}

// Error describes the failure.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "counterkit/riak: %s", e.Op)
	if e.Key != "" {
		fmt.Fprintf(&b, " %q", e.Key)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (%d attempts)", e.Attempts)
	}
	fmt.Fprintf(&b, ": %v", e.Kind)
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Unwrap returns the sentinel, the driver error and, when the driver error
// is a riak-go-client ClientError, the error it wraps (ClientError has no
// Unwrap method of its own).
func (e *Error) Unwrap() []error {
	out := []error{e.Kind}
	if e.Err != nil {
		out = append(out, e.Err)
		var ce riakc.ClientError
		if errors.As(e.Err, &ce) && ce.InnerError != nil {
			out = append(out, ce.InnerError)
		}
	}
	return out
}

// outcome classifies one failed request.
type outcome int

const (
	// notApplied: the request is known not to have taken effect (refused
	// before sending, or refused by Riak before applying). Retryable.
	notApplied outcome = iota
	// maybeApplied: the request was sent and may have taken effect.
	// Retryable for idempotent operations.
	maybeApplied
	// fatal: retrying cannot help (misconfiguration, bad input).
	fatal
)

// Riak error messages that mean a request was refused before any vnode
// applied it.
var refusedMessages = []string{"overload", "all_nodes_down", "insufficient_vnodes"}

// Riak error messages that mean the bucket or the request is misconfigured.
var misconfiguredMessages = []string{"invalid bucket type", "no bucket-type", "no_type", "datatype"}

// Riak error messages that mean the request carried a malformed vclock.
var corruptMessages = []string{"bad vclock"}

// classify maps a driver error to an outcome and, for fatal errors, the
// sentinel.
func classify(err error) (outcome, error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return maybeApplied, nil
	}
	var ce riakc.ClientError
	if errors.As(err, &ce) {
		if ce.InnerError == nil {
			// No node could take the command (all down, health-checking,
			// connection pool exhausted): nothing was sent.
			return notApplied, nil
		}
		err = ce.InnerError
	}
	var re riakc.RiakError
	if errors.As(err, &re) {
		msg := strings.ToLower(re.Errmsg)
		for _, m := range refusedMessages {
			if strings.Contains(msg, m) {
				return notApplied, nil
			}
		}
		for _, m := range misconfiguredMessages {
			if strings.Contains(msg, m) {
				return fatal, crdt.ErrMisconfiguredStore
			}
		}
		for _, m := range corruptMessages {
			if strings.Contains(msg, m) {
				return fatal, crdt.ErrCorruptEncoding
			}
		}
		// "timeout", "{w_val_unsatisfied,...}", "{pw_val_unsatisfied,...}"
		// and anything unknown: some vnodes may have applied the write.
		return maybeApplied, nil
	}
	if errors.Is(err, riakc.ErrCannotWrite) || errors.Is(err, syscall.ECONNREFUSED) {
		return notApplied, nil
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return notApplied, nil
	}
	// Read timeouts, EOF and resets after the request was written, and
	// anything unknown: the request may have been applied.
	return maybeApplied, nil
}

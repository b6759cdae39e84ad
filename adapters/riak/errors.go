package riak

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"syscall"

	riakc "github.com/basho/riak-go-client"

	"github.com/counterkit/counterkit/crdt"
)

// Error is the error every Siblings method (and CheckBucket and
// ConfigureBucket) returns when Riak or the driver fails. It wraps both a
// counterkit sentinel (Kind) and the driver's error, so that errors.Is and
// errors.As reach both. For a write, Kind crdt.ErrUnavailable means no
// attempt landed and crdt.ErrAmbiguousWrite that one may have. An Error is
// not modified after it is returned and may be shared between goroutines.
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
	// notApplied: the request is known not to have taken effect (it was
	// not sent). Retryable.
	notApplied outcome = iota
	// maybeApplied: the request was sent and may have taken effect.
	// Retryable for idempotent operations.
	maybeApplied
	// fatal: retrying cannot help (misconfiguration, bad input).
	fatal
	// refused: Riak refused the request. For a read that is all; a put
	// may still land (see refusedMessages). Retryable.
	refused
	// stale: Riak refused the request, and resending the same request
	// would be refused again: the caller must read again (a fresh vclock)
	// before writing. Not resent. A put may still land, as for refused.
	stale
)

// Riak error messages that mean a request was refused. For a put they do
// not prove that nothing landed: a node that forwards a put to a
// coordinator on another node (one not in the key's preference list, or a
// loaded one), and with retry_put_coordinator_failure (on by default) has
// no answer from it within put_coordinator_failure_timeout (3 s), starts
// the put again elsewhere without stopping the first, and answers with
// the second's refusal while the first may apply.
var refusedMessages = []string{"overload", "all_nodes_down", "insufficient_vnodes"}

// Riak error messages that mean a write was refused because of what is
// stored (a put forwarded before may still land, as for refusedMessages):
// the coordinating vnode refuses a put that
// would leave more than max_siblings siblings ("{too_many_siblings,N}") or
// an object, its siblings together, larger than max_object_size
// ("{too_large,N}"; 50 MB by default, while one value is at most
// store.MaxValue), before it forwards the put to the other replicas. A
// write with a fresh vclock supersedes the siblings it read and passes.
var staleMessages = []string{"too_many_siblings", "too_large"}

// Riak error messages that mean the bucket or the request is misconfigured.
// Riak names a missing bucket type no_type ("Invalid bucket properties:
// no_type", or {error,no_type} in a crash report) or "No bucket-type named
// 'NAME'" (bucket-properties requests), and refuses properties it does not
// accept with "Invalid bucket properties: [...]" (nothing is changed). A
// request whose quorums the bucket's n_val cannot meet, or that are not
// valid, is refused before any vnode is asked ("{n_val_violation,N}",
// "w_val_violation", "pw_val_violation", ...: the put FSM's validate), the
// same on every resend. The others are the test double's.
var misconfiguredMessages = []string{"invalid bucket type", "no bucket-type", "no_type", "datatype", "invalid bucket properties", "_val_violation"}

// Riak error messages that mean the request carried a malformed vclock.
// Riak's protocol-buffers handler crashes on one and reports the crash,
// whose stack trace names riak_object:decode_vclock (and the test double
// does the same).
var corruptMessages = []string{"decode_vclock", "erlify_rpbvc"}

// crashPrefix starts the message Riak's protocol-buffers server sends when
// its request handler crashed (it then closes the connection). The rest is
// an Erlang stack trace, which may quote the request, so only the specific
// causes above are looked for in it.
const crashPrefix = "error processing incoming message"

// illegalState begins the error riak-go-client v1.7.0 returns when a
// stopped (or not started) cluster or node is asked to execute a command:
// it checks its state before sending anything (states.go).
const illegalState = "Illegal State - required"

// unsentClientErrors are riak-go-client errors (with no inner error) raised
// before a request is written.
var unsentClientErrors = []error{
	riakc.ErrConnMgrAllConnectionsInUse,
	riakc.ErrClusterShuttingDown,
	riakc.ErrClusterEnqueueWhileShuttingDown,
	riakc.ErrDefaultNodeManagerRequiresNode,
}

func containsAny(msg string, subs []string) bool {
	return slices.ContainsFunc(subs, func(m string) bool { return strings.Contains(msg, m) })
}

// classify maps a driver error to an outcome and, for fatal errors, the
// sentinel.
func classify(err error) (outcome, error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return maybeApplied, nil
	}
	// The driver nests ClientErrors (a cluster-level ClientError wrapping a
	// node's, for example "all connections in use"), and ClientError has no
	// Unwrap method: peel every layer.
	for {
		var ce riakc.ClientError
		if !errors.As(err, &ce) {
			break
		}
		if ce.InnerError == nil {
			if ce.Errmsg == riakc.ErrClusterNoNodesAvailable || slices.Contains(unsentClientErrors, error(ce)) {
				// No node could take the command (all down,
				// health-checking, connection pool exhausted, shutting
				// down): nothing was sent.
				return notApplied, nil
			}
			// A short read or write on a connection: the request may
			// have been sent.
			return maybeApplied, nil
		}
		err = ce.InnerError
	}
	var re riakc.RiakError
	if errors.As(err, &re) {
		msg := strings.ToLower(re.Errmsg)
		if strings.HasPrefix(msg, crashPrefix) {
			switch {
			case containsAny(msg, corruptMessages):
				return fatal, crdt.ErrCorruptEncoding
			case strings.Contains(msg, "no_type"):
				return fatal, crdt.ErrMisconfiguredStore
			}
			// Any other crash may have happened after the write.
			return maybeApplied, nil
		}
		switch {
		case containsAny(msg, refusedMessages):
			return refused, nil
		case containsAny(msg, staleMessages):
			return stale, nil
		case containsAny(msg, misconfiguredMessages):
			return fatal, crdt.ErrMisconfiguredStore
		case containsAny(msg, corruptMessages):
			return fatal, crdt.ErrCorruptEncoding
		}
		// "timeout", "{w_val_unsatisfied,...}", "{pw_val_unsatisfied,...}"
		// and anything unknown: some vnodes may have applied the write.
		return maybeApplied, nil
	}
	if errors.Is(err, riakc.ErrCannotWrite) || errors.Is(err, syscall.ECONNREFUSED) ||
		strings.HasPrefix(err.Error(), illegalState) {
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

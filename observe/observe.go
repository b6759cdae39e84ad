// Package observe is how counterkit reports what its drivers and stores do,
// with no dependency beyond the standard library. Every driver (ledger,
// tally, deltalog, balance) reports each operation as one Event, and the
// wrappers Siblings and Partitions report every call of a store.
//
// A driver begins an operation with Start, runs it in the context Start
// returns, and ends it with Operation.End. An Observer sees the Event at
// the end; a Starter (the OpenTelemetry bridge, module
// github.com/counterkit/counterkit/observe/ckotel) also opens a span at the
// start, so the operation's store calls are its children. Logger writes
// events to a log/slog logger.
//
// Observation is opt-in per driver (its Options.Observer); with none, no
// clock is read and nothing allocated. An Observer is called on the
// operation's goroutine, so it must be fast, must not block and must be
// safe for concurrent use. It must not panic either: a panic goes on to
// the operation's caller once the operation is done (its write landed,
// and counts once if the caller sends it again). Events carry no keys,
// transaction ids or amounts: labels built from them would have unbounded
// cardinality, and they may be personal data. Event.Err is the
// operation's error, whose text may name a key: Logger logs it whole, for
// the operator reading the log; the OpenTelemetry bridge records only its
// sentinel (ErrorSummary).
package observe

import (
	"context"
	"log/slog"
	"time"
)

// Observer receives one Event per completed operation. An Observer that
// also implements Starter is told when operations begin.
type Observer interface {
	Observe(ctx context.Context, e Event)
}

// Func adapts a function to an Observer.
type Func func(ctx context.Context, e Event)

// Observe calls f.
func (f Func) Observe(ctx context.Context, e Event) { f(ctx, e) }

// Event describes one completed operation; fields that do not apply are
// zero.
type Event struct {
	// Component is what ran the operation: a driver ("ledger", "tally",
	// "deltalog", "balance") or a wrapped store ("store.siblings",
	// "store.partitions").
	Component string
	Op        string // "update", "read", "flush", "gc", "merge", "fetch", "put", ...
	// System names a store call's backend as OpenTelemetry's
	// db.system.name does ("cassandra", "riak", "bbolt", "memory"); empty
	// for drivers and unknown stores.
	System   string
	Outcome  string // one of the Outcome constants
	Err      error
	Start    time.Time
	Duration time.Duration
	// Attempts is the number of times the operation ran its cycle: 1, and
	// one more for each time it sent its write again (a ledger's Put of
	// the key, a log's Apply); an operation refused before it wrote, or
	// with nothing to write, made one. Ambiguous and Refused count the
	// attempts that ended with crdt.ErrAmbiguousWrite and with
	// crdt.ErrUnavailable (a refused read included).
	Attempts, Ambiguous, Refused int
	Siblings                     int // stored values a read merged
	Conflicts                    int // ids found stored with two amounts and resolved
	// Folded is how many shards, cells, rows or retired actor entries a
	// GC, merge, compaction or ledger write folded or removed: a deltalog
	// merge the cells it adds to the merge cell below, a Compact 1 (its
	// range delete); a tally GC reports none, nor a Lag, unless its batch
	// is known to have landed.
	Folded  int
	Retired int // actor entries a ledger write retired
	// Lag is how far behind the present a GC or merge folded: the age of
	// the newest item it folded (tally: since that shard expired;
	// deltalog: that cell's id; balance: that update's id, or where a
	// Transactions row was first placed).
	Lag    time.Duration
	Bytes  int // the size of the state written or read,
	Actors int // in bytes and in actor entries
	// Rows is the rows or values a store call read or wrote; of a driver
	// operation, the cells a deltalog read summed or the rows a balance
	// merge wrote.
	Rows int
}

// Outcomes. A driver reports the most specific that applies.
const (
	OK              = "ok"               // done, nothing more to say
	Applied         = "applied"          // the update was written by this call
	Duplicate       = "duplicate"        // a retry recognised in history
	DuplicateFolded = "duplicate_folded" // a retry recognised in a folded record
	Superseded      = "superseded"       // stored, but a conflicting copy counts
	OutsideWindow   = "outside_window"   // refused: outside the window (too old, or too far ahead)
	Expired         = "expired"          // refused: the mutator expired
	Ambiguous       = "ambiguous"        // failed; may have landed
	Unavailable     = "unavailable"      // failed; did not land
	Canceled        = "canceled"         // the caller's context was canceled
	Timeout         = "timeout"          // the caller's context deadline passed
	Invalid         = "invalid"          // refused: bad input, nothing changed
	Error           = "error"            // any other failure
)

// Logger returns an Observer that logs each event to l: failures
// (Event.Failed) at slog.LevelWarn, everything else at slog.LevelDebug.
func Logger(l *slog.Logger) Observer {
	return Func(func(ctx context.Context, e Event) {
		level := slog.LevelDebug
		if e.Failed() {
			level = slog.LevelWarn
		}
		if !l.Enabled(ctx, level) {
			return
		}
		attrs := []slog.Attr{
			slog.String("component", e.Component),
			slog.String("op", e.Op),
			slog.String("outcome", e.Outcome),
			slog.Duration("duration", e.Duration),
		}
		e.Counts(func(k string, v int) { attrs = append(attrs, slog.Int(k, v)) })
		if e.Lag != 0 {
			attrs = append(attrs, slog.Duration("lag", e.Lag))
		}
		if e.Err != nil {
			attrs = append(attrs, slog.String("error", e.Err.Error()))
		}
		l.LogAttrs(ctx, level, "counterkit "+e.Component+" "+e.Op, attrs...)
	})
}

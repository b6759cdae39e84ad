package tally

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/retry"
	"github.com/counterkit/counterkit/internal/rowlog"
	"github.com/counterkit/counterkit/internal/storekit"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
)

// Defaults for zero Options fields.
const (
	DefaultLifetime = 24 * time.Hour
	DefaultMargin   = time.Hour
	DefaultMaxSkew  = time.Hour
	DefaultGrace    = 24 * time.Hour
	DefaultRetries  = 2
)

// MaxKeyLen is the longest counter key, in bytes: crdt.MaxKeyLen.
const MaxKeyLen = crdt.MaxKeyLen

// ErrInvalidKey is returned by New for a counter key that breaks the rules
// of crdt.ValidateKey. It is crdt.ErrInvalidKey.
var ErrInvalidKey = crdt.ErrInvalidKey

// Options set a counter's time contract. Zero fields take the defaults
// (Lifetime 24h, Margin 1h, MaxSkew 1h, Grace 24h, 2 retries, time.Now,
// random UUID mutator ids).
type Options struct {
	// Lifetime is how long a mutator lives: expires_at = birth + Lifetime.
	Lifetime time.Duration
	// Margin is the refuse-before-expiry margin: a mutator stages and
	// flushes no new updates once now ≥ expires_at − Margin. Leave room for
	// a flush and its retries. 0 < Margin < Lifetime.
	Margin time.Duration
	// MaxSkew bounds how far any process's clock is from true time, and
	// how long a write may stay in flight before the store applies it or
	// never will: an assumption the caller guarantees, not checked.
	MaxSkew time.Duration
	// Grace is how long after expires_at a shard must be before GC folds
	// it. It must be at least 3·MaxSkew (see the package documentation).
	Grace time.Duration
	// Retries is how many times a write that was refused or whose outcome
	// is unknown is resent (the same bytes at the same write timestamp)
	// before the caller is told (SPEC.md 7.4). 0 means DefaultRetries; a
	// negative value means none.
	Retries int
	// Clock returns the current time; nil means time.Now.
	Clock func() time.Time
	// NewID returns a fresh mutator id, never used before for this key;
	// nil means a random UUID. Reusing an id loses updates.
	NewID func() crdt.ActorID
	// Observer, when set, receives one observe.Event per Flush and Update
	// (op "flush"; an Update whose Stage fails included), Retry, Abandon,
	// GC, Read and ReadComplete ("read_complete").
	Observer observe.Observer
	// MaxRows is the most rows (shards plus the tally) a read accepts, GC's
	// read included; a counter with more is refused with an error wrapping
	// crdt.ErrTooLarge until a GC run with a larger MaxRows folds its final
	// shards (a Stats counter past 2^128 never folds again: package
	// documentation). 0 means DefaultMaxRows.
	MaxRows int
}

func (c Options) resolve() (Options, error) {
	c.Lifetime = cmp.Or(c.Lifetime, DefaultLifetime)
	c.Margin = cmp.Or(c.Margin, DefaultMargin)
	c.MaxSkew = cmp.Or(c.MaxSkew, DefaultMaxSkew)
	c.Grace = cmp.Or(c.Grace, DefaultGrace)
	switch {
	case c.Retries == 0:
		c.Retries = DefaultRetries
	case c.Retries < 0:
		c.Retries = 0
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	c.MaxRows = cmp.Or(c.MaxRows, DefaultMaxRows)
	if c.NewID == nil {
		c.NewID = func() crdt.ActorID { return crdt.ActorID(uuid.NewString()) }
	}
	switch {
	case c.MaxRows < 0:
		return c, fmt.Errorf("%w: tally: negative MaxRows %d", crdt.ErrInvalidConfig, c.MaxRows)
	case c.Lifetime < 0 || c.Margin < 0 || c.MaxSkew < 0 || c.Grace < 0:
		return c, fmt.Errorf("%w: tally: negative duration in %+v", crdt.ErrInvalidConfig, c)
	case c.Margin >= c.Lifetime:
		return c, fmt.Errorf("%w: tally: margin %v must be below lifetime %v", crdt.ErrInvalidConfig, c.Margin, c.Lifetime)
	case c.MaxSkew > c.Grace/3: // Grace < 3·MaxSkew, without overflow
		return c, fmt.Errorf("%w: tally: grace %v must be at least 3 × max skew %v", crdt.ErrInvalidConfig, c.Grace, c.MaxSkew)
	case c.Lifetime%time.Microsecond != 0 || c.Margin%time.Microsecond != 0 || c.MaxSkew%time.Microsecond != 0 || c.Grace%time.Microsecond != 0:
		return c, fmt.Errorf("%w: tally: durations must be whole microseconds", crdt.ErrInvalidConfig)
	}
	return c, nil
}

// Counter is one tally counter: a partition of a store.Partitions, an
// aggregate type and a time contract. It reads, runs GC and makes
// mutators. It is safe for concurrent use if its store, Clock and NewID
// are; its Mutators are not.
type Counter[A Aggregate[A]] struct {
	store store.Partitions
	key   string
	cfg   Options
}

// New returns the counter stored in partition key of s. Any number of
// Counters in any number of processes may share one key with the same
// aggregate type and the same MaxSkew. Errors wrap ErrInvalidKey or
// crdt.ErrInvalidConfig.
func New[A Aggregate[A]](s store.Partitions, key string, cfg Options) (*Counter[A], error) {
	if storekit.Nil(s) {
		return nil, fmt.Errorf("%w: tally: nil store", crdt.ErrInvalidConfig)
	}
	if err := crdt.ValidateKey("tally key", key); err != nil {
		return nil, fmt.Errorf("tally: %w", err)
	}
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	return &Counter[A]{store: s, key: key, cfg: cfg}, nil
}

// Key returns the counter's key.
func (c *Counter[A]) Key() string { return c.key }

// nowMicros is the clock in µs since 1970, held at the int64 ends for a
// clock beyond them (where time.UnixMicro wraps).
func (c *Counter[A]) nowMicros() int64 {
	switch now := c.cfg.Clock(); {
	case now.After(lastMicro):
		return math.MaxInt64
	case now.Before(firstMicro):
		return math.MinInt64
	default:
		return now.UnixMicro()
	}
}

var firstMicro, lastMicro = time.UnixMicro(math.MinInt64), time.UnixMicro(math.MaxInt64)

// Read returns the tally combined with every shard not yet folded into
// it, from one store read that may be stale (store.ReadAny): it can miss
// recent updates but never counts one twice. The combination is exact,
// even past what an encoding holds (Sum.BigValue, stats.Summary.Fits).
// Errors wrap crdt.ErrCorruptEncoding, crdt.ErrTooLarge (more than
// Options.MaxRows rows), or come from the store.
func (c *Counter[A]) Read(ctx context.Context) (A, error) {
	return c.observedRead(ctx, "read", false)
}

// ReadComplete is Read with a complete store read (store.ReadComplete;
// Cassandra: consistency ALL): it reflects every acknowledged update.
func (c *Counter[A]) ReadComplete(ctx context.Context) (A, error) {
	return c.observedRead(ctx, "read_complete", true)
}

func (c *Counter[A]) observedRead(ctx context.Context, op string, complete bool) (A, error) {
	ctx, o := observe.Start(ctx, c.cfg.Observer, "tally", op)
	defer o.End(rowlog.Unreturned(false)) // if the read panics
	v, _, err := c.read(ctx, complete)
	var st sendStats
	st.readFailed(err)
	o.End(event(st, err))
	return v, err
}

// view is a decoded store read.
type view[A Aggregate[A]] struct {
	tally  Tally[A]
	shards []Shard[A] // sorted by (ExpiresAt, Mutator)
}

func (c *Counter[A]) load(ctx context.Context, complete bool) (view[A], error) {
	level := store.ReadAny
	if complete {
		level = store.ReadComplete
	}
	rows, err := c.store.Snapshot(ctx, c.key, c.cfg.MaxRows, level)
	if err != nil {
		return view[A]{}, fmt.Errorf("tally: read %q: %w", c.key, err)
	}
	v := view[A]{tally: Tally[A]{State: identity[A]()}}
	v.shards = make([]Shard[A], 0, len(rows))
	for _, r := range rows {
		id, isTally, err := parseRow(r.Key)
		if err != nil {
			return view[A]{}, fmt.Errorf("tally: %q: %w", c.key, err)
		}
		if isTally {
			if v.tally, err = DecodeTally[A](r.Value); err != nil {
				return view[A]{}, fmt.Errorf("tally: %q tally: %w", c.key, damaged(err))
			}
			// GC folds only shards that expired Grace before its clock, so
			// a tally folded through this clock's future was written by no
			// GC; read, it would hide every later shard (SPEC.md 7.4).
			if now := c.nowMicros(); v.tally.FoldedThrough > now {
				return view[A]{}, fmt.Errorf("%w: tally: %q tally folded through %s, after this process's clock %s",
					crdt.ErrCorruptEncoding, c.key, time.UnixMicro(v.tally.FoldedThrough).UTC().Format(time.RFC3339Nano), time.UnixMicro(now).UTC().Format(time.RFC3339Nano))
			}
			continue
		}
		s, err := DecodeShard[A](r.Value)
		if err != nil {
			return view[A]{}, fmt.Errorf("tally: %q shard %q: %w", c.key, id, damaged(err))
		}
		if s.Mutator != id {
			return view[A]{}, fmt.Errorf("%w: tally: %q row %q holds the shard of %q", crdt.ErrCorruptEncoding, c.key, id, s.Mutator)
		}
		v.shards = append(v.shards, s)
	}
	slices.SortFunc(v.shards, func(a, b Shard[A]) int {
		return cmp.Or(cmp.Compare(a.ExpiresAt, b.ExpiresAt), cmp.Compare(a.Mutator, b.Mutator))
	})
	return v, nil
}

// read returns the value and the number of live shards it combined.
func (c *Counter[A]) read(ctx context.Context, complete bool) (A, int, error) {
	v, err := c.load(ctx, complete)
	if err != nil {
		var zero A
		return zero, 0, err
	}
	acc := v.tally.State
	live := 0
	for _, s := range v.shards {
		if s.ExpiresAt <= v.tally.FoldedThrough {
			continue // already in the tally, whatever version of it we see
		}
		if err := acc.Combine(s.State); err != nil {
			var zero A
			return zero, 0, fmt.Errorf("tally: %q: %w", c.key, err)
		}
		live++
	}
	return acc, live, nil
}

// GCPlan is what one GC would write.
type GCPlan struct {
	Batch  GCBatch // no deletes when there is nothing to do
	Folded int     // shards newly combined into the tally
	Live   int     // shards left in place: not yet final, past what the tally's encoding holds, or past one batch's deletes
}

// groupSize is the number of shards sharing the first one's expires_at
// (shards sorted by it).
func groupSize[A Aggregate[A]](shards []Shard[A]) int {
	n := 0
	for n < len(shards) && shards[n].ExpiresAt == shards[0].ExpiresAt {
		n++
	}
	return n
}

// Empty reports whether the plan writes nothing.
func (p GCPlan) Empty() bool { return len(p.Batch.Delete) == 0 }

// PlanGC reads the counter completely and returns the batch that folds
// every final shard (expires_at < now − Grace) into the tally, writing
// nothing. When the folded tally would pass what its encoding holds (a Sum
// or Stats past int64 or 2^128), it folds the longest run of final shards,
// by expires_at, whose tally fits, and leaves the others to reads; it
// folds no more shards than one batch deletes (store.MaxBatch − 1, the
// rest wait for the next GC) and fails crdt.ErrTooLarge when more than
// that expire at the first instant to fold (SPEC.md 7.4). Applying the
// plan late, twice, or in any order with another GC's converges to the
// same state.
func (c *Counter[A]) PlanGC(ctx context.Context) (GCPlan, error) {
	// The cutoff is taken before the read: a read that takes long then
	// shows every write made before the cutoff (SPEC.md 7.5).
	cutoff := c.nowMicros()
	if grace := c.cfg.Grace.Microseconds(); cutoff >= math.MinInt64+grace {
		cutoff -= grace
	} else {
		cutoff = math.MinInt64
	}
	v, err := c.load(ctx, true)
	if err != nil {
		return GCPlan{}, err
	}
	t := v.tally
	var plan GCPlan
	var final []Shard[A]
	for _, s := range v.shards {
		switch {
		case s.ExpiresAt <= t.FoldedThrough:
			// Folded by an earlier GC whose deletes this view does not
			// show; delete it again.
			plan.Batch.Delete = append(plan.Batch.Delete, s.Mutator)
		case s.ExpiresAt < cutoff:
			final = append(final, s)
		default:
			plan.Live++
		}
	}
	// Fold the longest run of final shards, whole expires_at groups, whose
	// combination the tally's encoding holds and whose deletes fit in one
	// batch beside the tally (SPEC.md 7.4); the rest stay, for the next GC.
	room := store.MaxBatch - 1
	if len(plan.Batch.Delete) > room {
		plan.Batch.Delete = plan.Batch.Delete[:room]
	}
	room -= len(plan.Batch.Delete)
	acc, n := t.State.Clone(), 0
	for i, s := range final[:min(len(final), room)] {
		if err := acc.Combine(s.State); err != nil {
			return GCPlan{}, fmt.Errorf("tally: gc %q: %w", c.key, err)
		}
		if (i+1 == len(final) || final[i+1].ExpiresAt > s.ExpiresAt) && acc.fits() {
			n = i + 1
		}
	}
	if group := groupSize(final); n == 0 && group > store.MaxBatch-1 {
		// No batch can fold it, nor, folding in order, any shard after it.
		return GCPlan{}, fmt.Errorf("tally: gc %q: %d shards expire at one instant (%s), more than one batch deletes (%d): %w",
			c.key, group, time.UnixMicro(final[0].ExpiresAt).UTC().Format(time.RFC3339Nano), store.MaxBatch-1, crdt.ErrTooLarge)
	}
	if n < len(final) {
		acc = t.State
		for _, s := range final[:n] {
			_ = acc.Combine(s.State) // it did not fail above
		}
	}
	newT := t.FoldedThrough
	for _, s := range final[:n] {
		newT = max(newT, s.ExpiresAt)
		plan.Batch.Delete = append(plan.Batch.Delete, s.Mutator)
	}
	plan.Folded, plan.Live = n, plan.Live+len(final)-n
	if plan.Empty() {
		return plan, nil
	}
	slices.Sort(plan.Batch.Delete)
	b, err := Tally[A]{FoldedThrough: newT, State: acc}.MarshalBinary()
	if err != nil {
		return GCPlan{}, err
	}
	plan.Batch.WriteTS = newT
	plan.Batch.Tally = b
	return plan, nil
}

// GC applies PlanGC's plan in one atomic store Apply (resent up to Retries
// times when its outcome is unknown) and returns it. GCs may run at once,
// uncoordinated, and crash anywhere. GC needs a complete read, so it fails
// while a replica is down; it bounds read cost and is never needed for
// correctness.
func (c *Counter[A]) GC(ctx context.Context) (GCPlan, error) {
	if c.cfg.Observer == nil {
		return c.gc(ctx, nil)
	}
	ctx, o := observe.Start(ctx, c.cfg.Observer, "tally", "gc")
	defer o.End(rowlog.Unreturned(true)) // if the GC panics
	var st sendStats
	plan, err := c.gc(ctx, &st)
	e := event(st, err)
	e.Bytes = len(plan.Batch.Tally)
	if err == nil && plan.Folded > 0 { // a batch not known to have landed folded nothing yet
		e.Folded = plan.Folded
		// The newest shard folded expired at WriteTS; the GC ran this long
		// after.
		e.Lag = c.cfg.Clock().Sub(time.UnixMicro(plan.Batch.WriteTS))
	}
	o.End(e)
	return plan, err
}

func (c *Counter[A]) gc(ctx context.Context, st *sendStats) (GCPlan, error) {
	plan, err := c.PlanGC(ctx)
	if err != nil {
		st.readFailed(err)
		return plan, err
	}
	if plan.Empty() {
		return plan, nil
	}
	muts := plan.Batch.Mutations(c.key)
	if err := c.send(ctx, func() error { return c.store.Apply(ctx, muts) }, nil, st); err != nil {
		return plan, fmt.Errorf("tally: gc %q: %w", c.key, err)
	}
	return plan, nil
}

// sendStats counts the attempts of writes, for the Observer.
type sendStats struct {
	attempts, ambiguous, refused int
}

// readFailed counts a read that failed with err, before anything was
// sent, as refused when err wraps crdt.ErrUnavailable (st may be nil).
func (st *sendStats) readFailed(err error) {
	if st != nil && errors.Is(err, crdt.ErrUnavailable) {
		st.refused++
	}
}

// event is the Event of an operation with st and err. One that sent
// nothing (a read, a flush with nothing staged or refused before it
// wrote) made one attempt.
func event(st sendStats, err error) observe.Event {
	e := observe.Event{Err: err, Attempts: max(st.attempts, 1), Ambiguous: st.ambiguous, Refused: st.refused}
	if errors.Is(err, ErrUnresolved) {
		// Refused before it wrote, whatever ErrUnresolved wraps: the
		// write in doubt is an earlier call's.
		e.Outcome = observe.Invalid
	}
	return e
}

// send runs write up to 1+Retries times until it succeeds, stopping with
// errLate once stillOK (when set) says false, and at a write refused for
// what it is (too large, an invalid key: retry.Invalid). Its error wraps
// crdt.ErrAmbiguousWrite when any attempt may have landed, else the
// refusal (crdt.ErrUnavailable, or the invalid write's sentinel).
func (c *Counter[A]) send(ctx context.Context, write func() error, stillOK func() bool, st *sendStats) error {
	var last error
	ambiguous := false
	for attempt := 0; attempt <= c.cfg.Retries; attempt++ {
		if stillOK != nil && !stillOK() {
			if retry.Classify(last) == retry.Refused {
				// The last attempt was refused: its kind stays (SPEC.md 7.4).
				last = fmt.Errorf("%w; the last attempt: %w", errLate, last)
			} else {
				last = errLate
			}
			break
		}
		if err := ctx.Err(); err != nil {
			// Not sent: this attempt certainly had no effect.
			last = fmt.Errorf("%w: %w", crdt.ErrUnavailable, err)
			break
		}
		err := write()
		if st != nil {
			st.attempts++
			switch retry.Classify(err) { // an error the store did not classify is ambiguous
			case retry.Ambiguous:
				st.ambiguous++
			case retry.Refused:
				st.refused++
			}
		}
		if err == nil {
			return nil
		}
		last = err
		if k := retry.Classify(err); k == retry.Invalid {
			break
		} else if k == retry.Ambiguous {
			ambiguous = true
		}
	}
	switch {
	case !ambiguous && last == errLate:
		return fmt.Errorf("%w: %w", crdt.ErrUnavailable, last)
	case !ambiguous:
		return last
	}
	return retry.AmbiguousErr(last)
}

// errLate stops a mutator's attempts once its clock reaches expires_at.
var errLate = fmt.Errorf("%w: the mutator's expires_at has passed", crdt.ErrExpired)

// damaged wraps a stored row's decoding error in crdt.ErrCorruptEncoding,
// keeping its own kind: a row of another aggregate, or too large, or of a
// later version, is a damaged row too (SPEC.md 10).
func damaged(err error) error {
	if errors.Is(err, crdt.ErrCorruptEncoding) {
		return err
	}
	return fmt.Errorf("%w: %w", crdt.ErrCorruptEncoding, err)
}

package ledger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/retry"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// Group commit. An Update that finds no cycle running leads: it takes
// l.mu and up to MaxGroup-1 queued Updates, runs one cycle for all, answers
// each, and makes the first Update still queued the next leader. Others
// queue, leaving if their context ends first. No goroutine is started.

// call is one Update: queued, running as the leader, or carried by one.
type call struct {
	ctx    context.Context
	txn    crdt.TxnID
	amount int64
	op     observe.Operation // the Observer's operation, begun by Update
	known  *Record           // txn's record, found by this attempt's lookup: a Duplicate, never applied
	itoken store.Token       // that lookup's token, for writing the record

	// Set with l.gmu held.
	taken bool // taken into a group, or made leader: it no longer leaves the queue
	lead  bool // it runs the next cycle
	wake  chan struct{}

	// Set by the cycle that carries the call, read after wake.
	res     Result
	err     error
	applied bool   // an attempt of this call applied txn (and may have written it)
	version uint64 // Version of the owner's entry in the state that landed txn
	now     bool   // the current attempt applied txn
	early   bool   // its context had ended when its cycle started: it ran no attempt
	event   observe.Event
}

// windowOf returns HistoryLength + FoldedLength of o, with their defaults.
func windowOf(o tpncounter.Options) int {
	h := cmp.Or(o.HistoryLength, tpncounter.DefaultHistoryLength)
	return h + cmp.Or(o.FoldedLength, h)
}

// run runs c, an Update's call: queued until a leader answers it or makes
// it the next leader, or as a leader (MaxGroup 1: no queue). Call records
// are reused (l.leader, l.free): a steady queue allocates none.
func (l *Ledger) run(c call) (Result, error) {
	self := &l.leader
	if l.opts.MaxGroup > 1 {
		l.gmu.Lock()
		if l.busy {
			self = l.enqueue(c)
			l.gmu.Unlock()
			defer l.recycle(self)
			if !l.await(self) {
				err := l.leftError(c)
				if l.opts.Observer != nil {
					c.op.End(refusal(err)) // one attempt, as any refusal
				}
				return Result{}, err
			}
			if !self.lead {
				c.op.End(self.event)
				return self.res, self.err
			}
		} else {
			l.busy = true
			l.gmu.Unlock()
		}
	}
	// A cycle that panics (lead's caller gets the panic) ends c's
	// operation with panickedWrite, so that its span does not leak.
	defer c.op.End(panickedWrite)
	l.mu.Lock()
	if self == &l.leader {
		l.leader = c
	}
	res, event, err := l.lead(self)
	c.op.End(event)
	return res, err
}

// enqueue appends c to the queue in a record from l.free, or a new one,
// and returns the record. l.gmu is held.
func (l *Ledger) enqueue(c call) *call {
	var q *call
	if n := len(l.free); n > 0 {
		q, l.free = l.free[n-1], l.free[:n-1]
	} else {
		q = &call{wake: make(chan struct{}, 1)}
	}
	c.wake = q.wake // empty: each record is woken at most once per use
	*q = c
	l.queue = append(l.queue, q)
	return q
}

// recycle keeps q, the record of a queued call that is answered or left
// the queue, for the next queued call (at most MaxGroup are kept).
func (l *Ledger) recycle(q *call) {
	l.gmu.Lock()
	defer l.gmu.Unlock()
	if len(l.free) < l.opts.MaxGroup {
		*q = call{wake: q.wake}
		l.free = append(l.free, q)
	}
}

// lead runs the cycle of the group c leads, with l.mu held, answers and
// wakes its other members, releases l.mu and makes the next leader. It
// returns c's answer, read before l.mu is released (c may be l.leader).
func (l *Ledger) lead(c *call) (Result, observe.Event, error) {
	group := l.take(c)
	finished := false
	defer func() {
		if !finished {
			// The cycle panicked (a store, say): the leader's caller
			// gets the panic; the others an error, since their
			// transactions may be in the ledger's state and land with
			// its next write; the queue moves on.
			l.distrust(group)
			err := fmt.Errorf("ledger %q: the cycle carrying this call panicked: %w", l.key, crdt.ErrAmbiguousWrite)
			for _, m := range group[1:] {
				e := observe.Event{Err: err, Attempts: max(m.res.Attempts, 1), Ambiguous: 1}
				m.res, m.err, m.event = Result{}, err, e
			}
		}
		for _, m := range group[1:] {
			m.wake <- struct{}{}
		}
		clear(group)
		l.noteDoubt()
		l.mu.Unlock()
		l.handoff()
	}()
	l.cycle(group)
	finished = true
	return c.res, c.event, c.err
}

// distrust is called with l.mu held when a cycle for group panicked: the
// state may hold transactions applied in place and never written, or
// written without the ledger knowing. It is treated as a pending write,
// checked against the store by the next read.
func (l *Ledger) distrust(group []*call) {
	if l.cyc.Local == nil {
		return
	}
	l.cyc.Ambiguous(l.cyc.Local)
	for _, m := range group {
		setIn(&l.unacked, m.txn, l.now())
	}
}

// await waits until c is answered or made leader (true), or until its
// context ends while it is still queued (false: it left the queue). Once
// taken, c waits for its cycle whatever its context does.
func (l *Ledger) await(c *call) bool {
	select {
	case <-c.wake:
		return true
	case <-c.ctx.Done():
	}
	l.gmu.Lock()
	if !c.taken {
		if i := slices.Index(l.queue, c); i >= 0 {
			l.queue = slices.Delete(l.queue, i, i+1)
		}
		l.gmu.Unlock()
		return false
	}
	l.gmu.Unlock()
	<-c.wake
	return true
}

// take returns the group of the leader c: c, then up to MaxGroup-1
// queued calls in arrival order. l.mu is held.
func (l *Ledger) take(c *call) []*call {
	l.gmu.Lock()
	group := append(l.group[:0], c)
	n := min(len(l.queue), l.opts.MaxGroup-1)
	for _, m := range l.queue[:n] {
		m.taken = true
		group = append(group, m)
	}
	l.queue = slices.Delete(l.queue, 0, n)
	l.gmu.Unlock()
	l.group = group
	return group
}

// handoff makes the first queued call the next leader, or ends the run.
func (l *Ledger) handoff() {
	l.gmu.Lock()
	defer l.gmu.Unlock()
	if len(l.queue) == 0 {
		l.busy = false
		return
	}
	next := l.queue[0]
	l.queue = slices.Delete(l.queue, 0, 1)
	next.taken, next.lead = true, true
	next.wake <- struct{}{}
}

// cycle runs one cycle, with its retries, for group, with l.mu held, and
// sets every member's Result and error. A member whose context has ended
// before the cycle starts gets its context's error. The cycle's store calls
// use a context that ends when every member's has (groupContext).
func (l *Ledger) cycle(group []*call) {
	if l.opts.Observer != nil {
		l.stats = opStats{}
	}
	ctx, release := groupContext(group)
	var buf [16]*call
	open := buf[:0]
	for _, c := range group {
		if err := c.ctx.Err(); err != nil {
			c.res.Attempts, c.err, c.early = 1, l.heldError(c, err), true
			continue
		}
		open = append(open, c)
	}
	if err := l.flush(ctx); err != nil {
		for _, c := range open {
			c.res.Attempts, c.err = 1, l.heldError(c, err)
		}
		open = nil
	}
	var riders []*call // broken variant only
	var first *call
	for attempt := 1; len(open) > 0; attempt++ {
		if brokenDropOnRetry && attempt > 1 && len(open) > 1 {
			// broken: only the first call is written again; the others
			// take its answer.
			first = open[0]
			riders = append(riders, open[1:]...)
			open = open[:1]
		}
		l.stats.attempt = attempt
		open = l.attempt(ctx, open, attempt)
	}
	l.stats.attempt = 0
	for _, c := range riders {
		c.res.Landed, c.res.Value, c.res.Attempts, c.err = first.res.Landed, first.res.Value, first.res.Attempts, first.err
	}
	// Record every transaction the cycle applied and landed, before the
	// next cycle can fold it out of the history.
	var rbuf [16]pendingRecord
	recs := rbuf[:0]
	now := l.now()
	for _, c := range group {
		if c.err == nil && c.res.Landed && c.applied {
			recs = append(recs, pendingRecord{rec: Record{Txn: c.txn, Amount: c.amount, Writer: l.recordWriter(c), At: now, Version: c.version}, token: c.itoken, confirm: true})
		}
	}
	// A call whose record could not be written landed, but is not yet
	// recognised by a ledger that reads the account's key stale: it is not
	// acknowledged, so that the caller retries it (SPEC.md 6.11 step 3).
	errs, owners := l.record(ctx, recs)
	for i, err := range errs {
		if o := owners[i]; o != nil {
			// Another writer landed it first, and this copy defers to
			// that one (SPEC.md 6.11 step 3): a duplicate.
			for _, c := range group {
				if c.txn == recs[i].rec.Txn && c.err == nil && c.res.Landed && c.applied {
					c.res.Outcome, c.res.Owner = tpncounter.Duplicate, *o
					if o.Amount != c.amount { // a copy of another key and amount counts
						c.res.Outcome = tpncounter.Superseded
					}
				}
			}
		}
		if err == nil {
			continue
		}
		for _, c := range group {
			if c.txn == recs[i].rec.Txn && c.err == nil && c.res.Landed && c.applied {
				c.err = fmt.Errorf("%w: ledger %q: %q landed, but its transaction record is not written yet (written before this ledger's next write; retry the call): %s",
					crdt.ErrAmbiguousWrite, l.key, c.txn, err.Error())
			}
		}
	}
	l.checkRecorded(ctx, group)
	if release != nil {
		release()
	}
	if l.opts.Observer != nil {
		for i, c := range group {
			outcome := observe.OutcomeOf(c.err)
			if c.err == nil {
				outcome = outcomeName(c.res.Outcome)
			}
			c.event = l.event("update", outcome, c.res.Attempts, c.err)
			// Each member counts the failures of the attempts it took
			// part in (every member starts with the cycle).
			c.event.Refused, c.event.Ambiguous = l.stats.failedIn(c.res.Attempts)
			// No attempt (a call refused before it wrote), or a failure
			// after the last attempt (the record's Fetch or Put, step 3):
			// the call's error says how its last attempt ended.
			if c.early || c.event.Refused+c.event.Ambiguous == 0 && c.err != nil {
				e := refusal(c.err)
				c.event.Refused, c.event.Ambiguous = e.Refused, e.Ambiguous
			}
			if i > 0 {
				c.event.Folded = 0 // a write's retirements are reported once
			}
		}
	}
}

// attempt runs one attempt of a cycle for the open calls: read, answer
// those the fetched state already knows, apply the others to one state,
// put it. It returns the calls to carry into the next attempt.
func (l *Ledger) attempt(ctx context.Context, open []*call, attempt int) []*call {
	for _, c := range open {
		c.res.Attempts, c.now = attempt, false
	}
	fetched, token, err := l.read(ctx)
	if err != nil {
		for _, c := range open {
			c.err = l.heldError(c, err)
		}
		return nil
	}
	// The calls whose transaction the fetched state does not hold read its
	// record, after the fetch: a transaction that landed before the fetch
	// and is no longer in the counter was recorded before it left.
	err = l.lookupAll(ctx, fetched, open)
	if err == nil {
		err = l.deferElsewhere(open)
	}
	if err != nil {
		for _, c := range open {
			c.err = l.heldError(c, err)
		}
		return nil
	}
	// Known transactions are answered from the fetched state, before this
	// ledger's pending write is merged into it and this attempt changes it.
	waiting := open[:0]
	var kbuf [16]*call
	known := kbuf[:0]
	for _, c := range open {
		if c.err != nil {
			continue // refused by its record
		}
		out, owner, err := fetched.Known(c.txn, c.amount)
		if err != nil {
			c.err = err
			continue
		}
		if out == 0 && c.known != nil {
			// Recorded in the index, no longer in the counter: counted
			// in its writer's total.
			out, owner = tpncounter.Duplicate, tpncounter.Copy{Actor: c.known.Writer, Amount: c.known.Amount, Folded: true}
		}
		if out == 0 {
			waiting = append(waiting, c)
			continue
		}
		c.res.Outcome, c.res.Landed, c.res.Owner = out, true, owner
		c.version = l.versionOf(fetched, c)
		if c.applied && out != tpncounter.Superseded && owner.Actor == l.writer {
			// The copy that counts is this call's, from an earlier attempt.
			c.res.Outcome = tpncounter.Applied
		}
		known = append(known, c)
	}
	if len(known) == 0 && len(waiting) == 0 {
		return nil
	}
	merged, err := l.cyc.Merged(fetched)
	if err != nil {
		for _, c := range known {
			c.res = Result{Attempts: attempt}
		}
		fail(known, err)
		fail(waiting, err)
		return nil
	}
	if len(known) > 0 {
		value := merged.Value()
		for _, c := range known {
			c.res.Value = value
		}
	}
	if len(waiting) == 0 {
		return nil
	}
	if err := l.cede(ctx, merged); err != nil {
		for _, c := range waiting {
			c.err = l.heldError(c, err)
		}
		return nil
	}
	// Apply in arrival order: a later call of a transaction an earlier one
	// applied is a Duplicate (or a conflict), as it would be after it.
	writes := waiting[:0]
	appliedNow := 0
	passed := false // the retirement pass ran early
	var held []*call
	for _, c := range waiting {
		if unrecorded := len(l.unacked) + len(l.unindexed); unrecorded+appliedNow >= windowOf(l.copts) && merged.Status(c.txn) == tpncounter.Unknown {
			// One more transaction could fold out one that landed, or may
			// have, before it is recorded (SPEC.md 6.11 step 3).
			c.err = fmt.Errorf("%w: ledger %q: %d transactions of a write in doubt are not yet recorded; recorded before another is applied",
				crdt.ErrUnavailable, l.key, unrecorded)
			held = append(held, c)
			continue
		}
		out, err := merged.Apply(l.writer, c.txn, c.amount)
		if errors.Is(err, crdt.ErrTooLarge) && !passed && merged.Stats().Actors >= merged.Options().MaxActors {
			// No room for this ledger's entry: the pass, which makes it,
			// runs now, and the call is tried again (SPEC.md 6.9).
			passed = true
			l.retireIdle(ctx, merged, true)
			out, err = merged.Apply(l.writer, c.txn, c.amount)
		}
		if err != nil {
			c.err = fmt.Errorf("ledger %q: %w", l.key, err) // the state is unchanged: only this call fails
			continue
		}
		if out == tpncounter.Applied {
			c.applied, c.now = true, true
			appliedNow++
		}
		c.res.Outcome = out
		if c.applied {
			c.res.Outcome = tpncounter.Applied
		}
		writes = append(writes, c)
	}
	if len(writes) == 0 {
		if len(held) > 0 {
			// The write in doubt alone, if it is still in doubt; once it
			// has landed and its records are written, the calls held back
			// are tried again.
			landed := true
			if l.cyc.Pending {
				done, err := l.write(ctx, merged, token, attempt, nil)
				landed = done && err == nil
			}
			if landed && l.flush(ctx) == nil {
				for _, c := range held {
					c.err = nil
				}
				return held
			}
		}
		return nil
	}
	if appliedNow == 0 {
		if _, err := merged.Compact(l.writer); err != nil {
			fail(writes, err)
			return nil
		}
	}
	if passed {
		l.own.note(merged, l.writer, l.now())
	} else {
		l.retireIdle(ctx, merged, true)
	}
	b, err := merged.MarshalBinary()
	var abuf [16]crdt.TxnID
	applied := abuf[:0]
	for _, c := range writes {
		if c.applied {
			applied = append(applied, c.txn)
		}
	}
	if err != nil {
		l.unapply(merged, applied)
		fail(writes, err)
		return nil
	}
	done, err := l.put(ctx, merged, b, token, attempt, applied)
	if !done {
		return writes
	}
	if err != nil {
		for i, c := range writes {
			if brokenAckEarly && i > 0 {
				c.res.Landed = true // broken: acknowledged though not landed
				continue
			}
			c.err = l.heldError(c, err)
		}
		return nil
	}
	value := merged.Value()
	for _, c := range writes {
		c.res.Landed, c.res.Value = true, value
		c.res.Owner, _ = merged.Owner(c.txn)
		c.version = l.versionOf(merged, c)
	}
	return nil
}

// checkRecorded writes, before acknowledging it, the record of a call the
// counter answered from this ledger's own copy whose write was in doubt
// until this cycle's read, which owes the record: until it is written a
// ledger whose read lags would not recognise the transaction (SPEC.md 6.11
// step 3). A call whose record stays unwritten fails crdt.ErrAmbiguousWrite.
func (l *Ledger) checkRecorded(ctx context.Context, group []*call) {
	owed := func(c *call) bool {
		_, ok := l.unindexed[c.txn]
		return ok && c.err == nil && c.res.Landed && !c.applied && c.res.Owner.Actor == l.writer
	}
	if !slices.ContainsFunc(group, owed) {
		return
	}
	err := l.flush(ctx)
	for _, c := range group {
		if owed(c) {
			c.err = fmt.Errorf("%w: ledger %q: %q is stored, but not recorded until this ledger's next write (retry the call): %w", crdt.ErrAmbiguousWrite, l.key, c.txn, err)
		}
	}
}

// deferElsewhere takes out of this ledger's pending write the transaction
// of each open call that a record of another sub-key answered (a Sharded
// account whose layouts raced): the copy recorded there counts, and this
// one defers to it (SPEC.md 6.11 step 4, as retractLate does when that
// record is read at the pending write's lookup); it writes no record.
func (l *Ledger) deferElsewhere(open []*call) error {
	for _, c := range open {
		if c.err != nil || c.known == nil || c.known.Key == "" || c.known.Key == l.key {
			continue
		}
		if _, held := l.unacked[c.txn]; !held || !l.cyc.Pending {
			continue
		}
		if err := l.takeOut(l.writer, l.cyc.Sent.Version(l.writer), false, c.txn); err != nil {
			return err
		}
		delete(l.unacked, c.txn)
		c.applied = false // its copy leaves: nothing of its own to record
	}
	return nil
}

// recordWriter is the writer c's record names: the owner of its
// transaction as its cycle saw it, or this ledger's writer.
func (l *Ledger) recordWriter(c *call) crdt.ActorID {
	// A copy answered by a record of another sub-key is this ledger's to
	// confirm, which defers it to that record (SPEC.md 6.11 step 3): a
	// record names the writer of its own key's copy only.
	if elsewhere := c.known != nil && c.known.Key != "" && c.known.Key != l.key; c.res.Owner.Actor != "" && !elsewhere {
		return c.res.Owner.Actor
	}
	return l.writer
}

// versionOf is the version of c's record writer's entry in st, the state
// that landed c's transaction, or in the record that made it known.
func (l *Ledger) versionOf(st *tpncounter.Counter, c *call) uint64 {
	v := st.Version(l.recordWriter(c))
	if c.known != nil && c.known.Writer == l.recordWriter(c) {
		v = max(v, c.known.Version)
	}
	return max(v, 1)
}

// heldError is the error of call c when its cycle finally failed with err
// (a Put's, a Fetch's, or its context's). When c's transaction is still in
// this ledger's pending write, it may yet land: the error wraps
// crdt.ErrAmbiguousWrite as well, whatever err is.
func (l *Ledger) heldError(c *call, err error) error {
	if !l.cyc.Pending || errors.Is(err, crdt.ErrAmbiguousWrite) {
		return err
	}
	if _, ok := l.unacked[c.txn]; !ok {
		return err
	}
	return retry.InDoubt(err, fmt.Sprintf("an earlier attempt's write of %q", c.txn))
}

// noteDoubt copies, with l.mu held, the transactions heldError would find
// in doubt to l.doubt, for leftError.
func (l *Ledger) noteDoubt() {
	if l.opts.MaxGroup <= 1 {
		return // no queue to leave
	}
	l.gmu.Lock()
	defer l.gmu.Unlock()
	l.doubt = l.doubt[:0]
	if l.cyc.Pending {
		for txn := range l.unacked {
			l.doubt = append(l.doubt, txn)
		}
	}
}

// leftError is the error of call c, which left the queue as its context
// ended: the context's, wrapping crdt.ErrAmbiguousWrite as well when c's
// transaction was in this ledger's pending write as of the last write
// (heldError; a later write's answer is not waited for, so a transaction
// that has landed since may still be reported in doubt).
func (l *Ledger) leftError(c call) error {
	err := c.ctx.Err()
	l.gmu.Lock()
	defer l.gmu.Unlock()
	if slices.Contains(l.doubt, c.txn) {
		return retry.InDoubt(err, fmt.Sprintf("an earlier attempt's write of %q", c.txn))
	}
	return err
}

// fail answers every call of cs with err.
func fail(cs []*call, err error) {
	for _, c := range cs {
		c.err = err
	}
}

// groupContext returns the context of a cycle for group and its release
// (nil if none): one call's own, or, for more, the first call's values,
// ending when every call's context has ended, with the error of the last.
func groupContext(group []*call) (context.Context, func()) {
	if len(group) == 1 {
		return group[0].ctx, nil
	}
	g := &groupCtx{Context: context.WithoutCancel(group[0].ctx), done: make(chan struct{}), left: len(group)}
	g.hasDeadline = true
	for _, c := range group {
		d, ok := c.ctx.Deadline()
		if !ok {
			g.deadline, g.hasDeadline = time.Time{}, false
			break
		}
		if d.After(g.deadline) {
			g.deadline = d
		}
	}
	stops := make([]func() bool, len(group))
	for i, c := range group {
		cctx := c.ctx
		stops[i] = context.AfterFunc(cctx, func() { g.end(cctx.Err()) })
	}
	return g, func() {
		for _, stop := range stops {
			stop()
		}
	}
}

// groupCtx is a context that ends when each of left contexts has ended.
type groupCtx struct {
	context.Context // values only (context.WithoutCancel)
	deadline        time.Time
	hasDeadline     bool
	done            chan struct{}

	mu   sync.Mutex
	left int
	err  error
}

func (g *groupCtx) Deadline() (time.Time, bool) { return g.deadline, g.hasDeadline }
func (g *groupCtx) Done() <-chan struct{}       { return g.done }

func (g *groupCtx) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// end records that one member's context ended with err.
func (g *groupCtx) end(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.left--
	if g.left == 0 {
		g.err = err
		close(g.done)
	}
}

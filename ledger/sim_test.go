package ledger_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// The ledger simulation runs real Ledgers (five actors) over the memory
// store wrapped in faulty.Siblings: refused writes, writes that land but lose
// their acknowledgement, writes lost with an ambiguous error, and stale
// fetches that create siblings. In the restart mode, Puts are also held in
// flight (answered ambiguous at once, landing steps later), and processes
// restart: a ledger is replaced by a new one with the same actor id and
// none of its memory, while its held Puts are still to land. Clients resend unanswered transactions and
// duplicate answered ones on random ledgers, inside the window (while the
// store still knows the transaction). After every step the join of the
// store's siblings must count every landed transaction exactly once, and
// every acknowledged transaction must have landed.
//
// In the group mode (TestLedgerSimulationGroups), each step sends a batch
// of calls to one ledger at once; they queue behind the first and run as
// groups (group commit), in an order fixed by the seed.
//
// Replay: COUNTERKIT_SEED=<seed> go test ./ledger -run '^TestLedgerSimulation$'
// Scale:  COUNTERKIT_CASES=10 go test ./ledger -run '^TestLedgerSimulation$'

const simKey = "sim"

type recorder struct {
	store.Siblings
	// mu makes Puts one at a time: a ledger writes several transaction
	// records at once, and the layers below (holder's source, note's
	// maps) are not safe for concurrent use.
	mu     sync.Mutex
	inner  store.Siblings
	landed map[crdt.TxnID]int64
	opts   tpncounter.Options
	err    error
}

// Put records every transaction of a value that landed (it is among the live
// siblings right after the call; Puts run one at a time).
func (r *recorder) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.Siblings.Put(ctx, key, actor, value, token)
	if ferr := r.note(ctx, key, value); ferr != nil {
		return ferr
	}
	return err
}

// note records the transactions of value if it is among the live siblings.
func (r *recorder) note(ctx context.Context, key string, value []byte) error {
	if ledger.IsRecordKey(key) || ledger.IsSeenKey(key) {
		return nil // a transaction record or sightings, not a state
	}
	live, _, ferr := r.inner.Fetch(ctx, key)
	if ferr != nil {
		return ferr
	}
	for _, v := range live {
		if bytes.Equal(v, value) {
			c, _ := tpncounter.New(r.opts)
			if derr := c.UnmarshalBinary(value); derr != nil {
				r.err = derr
			}
			for _, g := range []*tpncounter.GCounter{c.Positive(), c.Negative()} {
				for _, a := range g.Actors() {
					e, _ := g.Entry(a)
					for _, list := range [][]tpncounter.Txn{e.History, e.Folded} {
						for _, tx := range list {
							amt, _ := c.Amount(tx.ID)
							r.landed[tx.ID] = amt
						}
					}
				}
			}
		}
	}
	return nil
}

func (r *recorder) joined(ctx context.Context) (*tpncounter.Counter, int, error) {
	live, _, err := r.inner.Fetch(ctx, simKey)
	if err != nil {
		return nil, 0, err
	}
	j, _ := tpncounter.New(r.opts)
	for _, v := range live {
		c, _ := tpncounter.New(r.opts)
		if err := c.UnmarshalBinary(v); err != nil {
			return nil, 0, err
		}
		if err := j.Merge(c); err != nil {
			return nil, 0, err
		}
	}
	return j, len(live), nil
}

// holder holds some Puts in flight (see ledgerSim.restarts); it sits
// between the recorder and the faulty store, and a held Put lands in the
// inner store, unfaulted, and is recorded then.
type holder struct {
	store.Siblings
	rec   *recorder
	r     *rand.Rand
	pHold float64
	held  []func() error
	since []int // the step each held Put was held at
	step  int
}

func (h *holder) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	if h.pHold > 0 && h.r.Float64() < h.pHold {
		h.since = append(h.since, h.step)
		h.held = append(h.held, func() error {
			ctx := context.WithoutCancel(ctx) // keeps a write time (ledger.RowStore)
			if err := h.rec.inner.Put(ctx, key, actor, value, token); err != nil {
				return err
			}
			return h.rec.note(ctx, key, value)
		})
		return fmt.Errorf("held in flight: %w", crdt.ErrAmbiguousWrite)
	}
	return h.Siblings.Put(ctx, key, actor, value, token)
}

// deliver lands the i-th held Put.
func (h *holder) deliver(i int) error {
	put := h.held[i]
	h.drop(i)
	return put()
}

// drop forgets the i-th held Put, which never lands.
func (h *holder) drop(i int) {
	h.held = slices.Delete(h.held, i, i+1)
	h.since = slices.Delete(h.since, i, i+1)
}

type ledgerSim struct {
	r       *rand.Rand
	inc     *rand.Rand // incarnation ids, so that a seed replays
	rec     *recorder
	hold    *holder
	faulty  *faulty.Siblings
	ledgers []*ledger.Ledger
	acked   map[crdt.TxnID]int64
	amounts map[crdt.TxnID]int64
	recent  []crdt.TxnID
	resend  map[crdt.TxnID]int // txn -> step by which the client resends it
	flushBy map[int]int        // ledger -> step by which it must Find
	next    int
	sibSeen int
	// timed gives every transaction its creation step as time
	// (Options.Counter.TxnTime) and lets clients resend at any time, long
	// after the window; refused counts the resends refused with
	// crdt.ErrOutsideWindow.
	timed   bool
	refused int
	// restarts holds Puts and restarts ledgers (see the file comment);
	// stable makes a restarted ledger continue its actor's entry, the
	// behaviour that loses acknowledged writes (a broken variant).
	restarts, stable   bool
	restarted, delayed int
	// rows runs the ledgers on a RowStore (one row per actor, as on
	// Cassandra), or with untimedRows one whose late Puts take their write
	// time as they land (a broken double).
	rows, untimedRows bool
	// retire turns retirement on: the ledgers' clock moves stepDur a
	// step and RetireAfter is retire; a held Put lands or is lost within
	// maxHeld steps, so that no write stays in doubt for RetireAfter (a
	// limit, SPEC.md 6.11).
	retire, stepDur time.Duration
	maxHeld         int
	clock           *fakeClock
	// maxLag, in retire mode, bounds stale reads by the clock's time as
	// well as by states: a stale read shows a state that was the newest
	// within maxLag. Unbounded, a read may lag behind a write older than
	// RetireAfter, which SPEC.md 6.10 assumes never happens.
	maxLag time.Duration
	// overUntilQuiet lets transactions count twice between steps, never
	// less than once (credits and debits each at least what landed), and
	// every one exactly once when quiet: a copy in doubt for RetireAfter/2
	// that would count beside the retry's is kept, and counts twice while
	// a stale pass has retired the retry's writer with it counted, until
	// its ledger reads again (SPEC.md 6.11 Limits). overSteps counts the
	// steps that ended so.
	overUntilQuiet bool
	overSteps      int
	// groups submits concurrent Updates to one ledger as a group (see
	// TestLedgerSimulationGroups); grouped counts the calls that queued
	// behind a running cycle. A client abandons some transactions refused
	// outright (crdt.ErrUnavailable without crdt.ErrAmbiguousWrite) that
	// never had another answer: those must never land.
	groups    bool
	maxGroup  int // Options.MaxGroup of group mode
	grouped   int
	park      chan simPark
	policy    faulty.Policy
	tainted   map[crdt.TxnID]bool // answered other than refused outright
	abandoned map[crdt.TxnID]bool
}

// simPark parks the next Fetch (see ledgerSim.hook).
type simPark struct{ parked, release chan struct{} }

// stepTime is a TxnTime for the simulation's ids "t<n>@<step>".
func stepTime(x crdt.TxnID) (time.Time, bool) {
	_, at, ok := strings.Cut(string(x), "@")
	n, err := strconv.Atoi(at)
	return time.Unix(int64(n), 0), ok && err == nil && n > 0
}

func runLedgerSim(seed int64, steps int) error {
	_, err := runLedgerSimMode(seed, steps, false)
	return err
}

func runLedgerSimMode(seed int64, steps int, timed bool) (*ledgerSim, error) {
	return runLedgerSimWith(seed, steps, &ledgerSim{timed: timed})
}

func (s *ledgerSim) newLedger(a int, opts tpncounter.Options) (*ledger.Ledger, error) {
	retries := 2
	if s.groups {
		retries = 1 // writes refused outright are frequent enough
	}
	var st store.Siblings = s.rec
	if s.rows || s.untimedRows {
		st = ledger.StampPuts(st)
	}
	o := ledger.Options{Actor: crdt.ActorID(fmt.Sprintf("ledger-%d", a)), RetryCount: retries, Counter: opts, Backoff: ledger.Backoff{Initial: -1}, MaxGroup: s.maxGroup}
	if s.retire > 0 {
		o.RetireAfter, o.Clock = s.retire, s.clock.Now
	}
	l, err := ledger.New(st, simKey, o)
	if err != nil {
		return nil, err
	}
	const digits = "234567abcdefghijklmnopqrstuvwxyz" // an incarnation's (SPEC.md 6.9)
	id := make([]byte, 8)
	for i := range id {
		id[i] = digits[s.inc.Intn(len(digits))]
	}
	ledger.SetWriter(l, crdt.ActorID(fmt.Sprintf("%s~%s", o.Actor, id)))
	if s.stable {
		ledger.ContinueActorEntry(l)
	}
	return l, nil
}

func runLedgerSimWith(seed int64, steps int, s *ledgerSim) (*ledgerSim, error) {
	timed := s.timed
	if s.retire > 0 {
		s.clock = newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	}
	ctx := context.Background()
	opts := tpncounter.Options{HistoryLength: 2, FoldedLength: 2}
	if s.groups {
		opts = groupCounter
	}
	if timed {
		opts.TxnTime = stepTime
	}
	var inner store.Siblings = memory.NewSiblings()
	if s.rows || s.untimedRows {
		inner = &ledger.RowStore{Untimed: s.untimedRows}
	}
	rates := faulty.Rates{Refuse: 0.08, LoseAck: 0.12, Lose: 0.08, Stale: 0.2, MaxStaleness: 2}
	var hook faulty.Hook
	if s.groups {
		rates.Refuse = 0.2
		s.park = make(chan simPark, 1)
		s.tainted, s.abandoned = map[crdt.TxnID]bool{}, map[crdt.TxnID]bool{}
		hook = s.hook
	}
	s.policy = ledger.FreshRecords(faulty.Seeded(seed, rates))
	fo := faulty.Options{Policy: s.policy, Hook: hook, RecordWrites: true, MaxLag: s.maxLag}
	if s.clock != nil {
		fo.Clock = s.clock.Now
	}
	fs := faulty.NewSiblings(inner, fo)
	s.r, s.inc, s.faulty = rand.New(rand.NewSource(seed)), rand.New(rand.NewSource(^seed)), fs
	s.hold = &holder{Siblings: fs, r: s.r}
	rec := &recorder{Siblings: s.hold, inner: inner, landed: map[crdt.TxnID]int64{}, opts: opts}
	s.rec, s.hold.rec = rec, rec
	if s.restarts {
		s.hold.pHold = 0.08
	}
	s.acked, s.amounts, s.resend, s.flushBy = map[crdt.TxnID]int64{}, map[crdt.TxnID]int64{}, map[crdt.TxnID]int{}, map[int]int{}
	for a := 0; a < 5; a++ {
		l, err := s.newLedger(a, opts)
		if err != nil {
			return s, err
		}
		s.ledgers = append(s.ledgers, l)
	}
	for step := 0; step < steps; step++ {
		if s.retire > 0 {
			if err := s.age(step); err != nil {
				return s, fmt.Errorf("step %d: %w", step, err)
			}
		}
		if s.restarts {
			if err := s.chaos(step, opts); err != nil {
				return s, fmt.Errorf("step %d: %w", step, err)
			}
		}
		if err := s.step(ctx, step); err != nil {
			return s, fmt.Errorf("step %d: %w", step, err)
		}
		if err := s.check(ctx, s.overUntilQuiet); err != nil {
			return s, fmt.Errorf("after step %d: %w", step, err)
		}
	}
	// Quiesce without faults: held Puts land, resend what is unanswered,
	// every ledger Finds.
	fs.SetPolicy(nil)
	s.hold.pHold = 0
	for len(s.hold.held) > 0 {
		if err := s.hold.deliver(0); err != nil {
			return s, err
		}
	}
	for round := 0; round < 2; round++ {
		for _, l := range s.ledgers {
			if _, err := l.Find(ctx); err != nil {
				return s, err
			}
		}
		for _, txn := range slices.Sorted(maps.Keys(s.resend)) {
			if err := s.submit(ctx, txn); err != nil {
				return s, err
			}
		}
	}
	for _, l := range s.ledgers {
		if _, err := l.Find(ctx); err != nil {
			return s, err
		}
	}
	if err := s.check(ctx, false); err != nil {
		return s, fmt.Errorf("after quiescing: %w", err)
	}
	if _, n, _ := rec.joined(ctx); n != 1 {
		return s, fmt.Errorf("after quiescing: %d siblings", n)
	}
	return s, rec.err
}

// chaos restarts a ledger process now and then (its memory is lost, its
// held Puts stay in flight) and lands held Puts late, in any order.
func (s *ledgerSim) chaos(step int, opts tpncounter.Options) error {
	if s.r.Float64() < 0.05 {
		a := s.r.Intn(len(s.ledgers))
		l, err := s.newLedger(a, opts)
		if err != nil {
			return err
		}
		s.ledgers[a] = l
		delete(s.flushBy, a)
		s.restarted++
	}
	for len(s.hold.held) > 0 && s.r.Float64() < 0.3 {
		if err := s.hold.deliver(s.r.Intn(len(s.hold.held))); err != nil {
			return err
		}
		s.delayed++
	}
	return nil
}

// age moves the clock a step and lands or loses each Put held for
// maxHeld steps.
func (s *ledgerSim) age(step int) error {
	s.clock.Add(s.stepDur)
	s.hold.step = step
	for i := len(s.hold.held) - 1; i >= 0; i-- {
		if step-s.hold.since[i] < s.maxHeld {
			continue
		}
		if s.r.Intn(2) == 0 {
			s.hold.drop(i)
			continue
		}
		if err := s.hold.deliver(i); err != nil {
			return err
		}
		s.delayed++
	}
	return nil
}

// check compares the stored value with the transactions that landed;
// with over, one that counts some twice passes (see
// ledgerSim.overUntilQuiet).
func (s *ledgerSim) check(ctx context.Context, over bool) error {
	j, n, err := s.rec.joined(ctx)
	if err != nil {
		return err
	}
	if n > 1 {
		s.sibSeen++
	}
	var want, credits, debits int64
	for _, v := range s.rec.landed {
		want += v
		if v > 0 {
			credits += v
		} else {
			debits -= v
		}
	}
	if over && j.Value() != want && j.Positive().Value() >= credits && j.Negative().Value() >= debits {
		s.overSteps++ // counted twice, none lost
	} else if j.Value() != want {
		return fmt.Errorf("value %d, want %d over %d landed transactions", j.Value(), want, len(s.rec.landed))
	}
	for txn := range s.acked {
		if _, ok := s.rec.landed[txn]; !ok {
			return fmt.Errorf("acknowledged %s never landed", txn)
		}
	}
	for txn := range s.abandoned {
		if _, ok := s.rec.landed[txn]; ok {
			return fmt.Errorf("%s was refused outright (nothing landed), then landed", txn)
		}
	}
	return nil
}

// submit sends txn to a random ledger, inside the window only.
func (s *ledgerSim) submit(ctx context.Context, txn crdt.TxnID) error {
	if ok, err := s.admit(ctx, txn); !ok || err != nil {
		return err
	}
	a := s.r.Intn(len(s.ledgers))
	res, err := s.ledgers[a].Update(ctx, txn, s.amounts[txn])
	if err := s.answer(txn, res, err, true); err != nil {
		return err
	}
	if s.ledgers[a].Pending() {
		s.flushBy[a] = -1
	}
	return nil
}

// admit reports whether txn may be sent now: inside the window only, and
// never once abandoned.
func (s *ledgerSim) admit(ctx context.Context, txn crdt.TxnID) (bool, error) {
	delete(s.resend, txn)
	if s.abandoned[txn] {
		return false, nil
	}
	if _, landed := s.rec.landed[txn]; landed && !s.timed {
		// Inside the window means before any ledger has forgotten txn. A
		// ledger's pending write may already have forgotten it, and its
		// state is private, so while any ledger is pending a resend of a
		// landed transaction waits.
		for _, l := range s.ledgers {
			if l.Pending() {
				s.resend[txn] = 0
				return false, nil
			}
		}
		if len(s.hold.held) > 0 { // writes in flight are pending too
			s.resend[txn] = 0
			return false, nil
		}
		j, _, err := s.rec.joined(ctx)
		if err != nil {
			return false, err
		}
		if j.Status(txn) == tpncounter.Unknown {
			return false, nil // outside the window: see tpncounter.TestRetryAfterWindow
		}
		if s.groups && j.Status(txn) != tpncounter.InHistory {
			// A batch puts up to groupBatch-1 transactions ahead of
			// this one; a transaction still in every holder's history
			// stays inside the window for FoldedLength more.
			return false, nil
		}
	}
	return true, nil
}

// answer records the answer to one call of txn; sole says that no other
// call of txn ran alongside it.
func (s *ledgerSim) answer(txn crdt.TxnID, res ledger.Result, err error, sole bool) error {
	outright := errors.Is(err, crdt.ErrUnavailable) && !errors.Is(err, crdt.ErrAmbiguousWrite)
	switch {
	case err == nil:
		if !res.Landed {
			return fmt.Errorf("no error but not landed: %+v", res)
		}
		s.acked[txn] = s.amounts[txn]
	case s.groups && errors.Is(err, context.Canceled):
		s.resend[txn] = 0 // left the queue: it never ran
		return nil
	case outright && s.groups && sole && !s.tainted[txn] && s.r.Float64() < 0.3:
		if _, landed := s.rec.landed[txn]; !landed {
			s.abandoned[txn] = true
			return nil
		}
		s.resend[txn] = 0
	case errors.Is(err, crdt.ErrAmbiguousWrite), errors.Is(err, crdt.ErrUnavailable):
		s.resend[txn] = 0 // filled by the caller's step
	case s.timed && errors.Is(err, crdt.ErrOutsideWindow):
		s.refused++ // a definite answer: the client reconciles, nothing was written
	default:
		return err
	}
	if s.groups && !outright {
		s.tainted[txn] = true
	}
	return nil
}

// hook parks the Fetch a group's first call makes (see submitGroup).
func (s *ledgerSim) hook(_ context.Context, c faulty.Call, after bool) error {
	if after || c.Method != faulty.MethodFetch || ledger.IsRecordKey(c.Key) || ledger.IsSeenKey(c.Key) {
		return nil
	}
	select {
	case p := <-s.park:
		close(p.parked)
		<-p.release
	default:
	}
	return nil
}

// submitGroup sends txns (in order, some perhaps twice) to ledger a at
// once: the first call's Fetch is parked until the others have queued
// behind it, so they run as groups of up to MaxGroup, in a deterministic
// order. Now and then a queued call is canceled before the groups run.
func (s *ledgerSim) submitGroup(ctx context.Context, a int, txns []crdt.TxnID) error {
	var calls []crdt.TxnID
	for _, txn := range txns {
		ok, err := s.admit(ctx, txn)
		if err != nil {
			return err
		}
		if ok {
			calls = append(calls, txn)
		}
	}
	if len(calls) == 0 {
		return nil
	}
	l := s.ledgers[a]
	res := make([]ledger.Result, len(calls))
	errs := make([]error, len(calls))
	if len(calls) == 1 {
		res[0], errs[0] = l.Update(ctx, calls[0], s.amounts[calls[0]])
	} else {
		p := simPark{parked: make(chan struct{}), release: make(chan struct{})}
		s.park <- p
		var wg sync.WaitGroup
		run := func(i int, c context.Context) <-chan struct{} {
			wg.Add(1)
			done := make(chan struct{})
			go func() {
				defer wg.Done()
				defer close(done)
				res[i], errs[i] = l.Update(c, calls[i], s.amounts[calls[i]])
			}()
			return done
		}
		select {
		case <-p.parked:
		case <-run(0, ctx):
			// The first call ended before its cycle's fetch (its record
			// could not be read): the others run one after another.
			<-s.park
			for i := 1; i < len(calls); i++ {
				<-run(i, ctx)
			}
			wg.Wait()
			goto answer
		}
		cancelAt := -1
		if len(calls) > 2 && s.r.Float64() < 0.2 {
			cancelAt = 1 + s.r.Intn(len(calls)-1)
		}
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		for i := 1; i < len(calls); i++ {
			c := ctx
			if i == cancelAt {
				c = cctx
			}
			run(i, c)
			if err := waitQueued(l, i); err != nil {
				return err
			}
		}
		cancel()
		if cancelAt > 0 {
			if err := waitQueued(l, len(calls)-2); err != nil {
				return err
			}
		}
		s.grouped += len(calls) - 1
		close(p.release)
		wg.Wait()
	}
answer:
	n := map[crdt.TxnID]int{}
	for _, txn := range calls {
		n[txn]++
	}
	for i, txn := range calls {
		if err := s.answer(txn, res[i], errs[i], n[txn] == 1); err != nil {
			return err
		}
	}
	if l.Pending() {
		s.flushBy[a] = -1
	}
	return nil
}

// waitQueued waits until n calls wait in l's queue.
func waitQueued(l *ledger.Ledger, n int) error {
	deadline := time.Now().Add(10 * time.Second)
	for ledger.Queued(l) != n {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out waiting for %d queued calls (%d)", n, ledger.Queued(l))
		}
		runtime.Gosched()
	}
	return nil
}

// groupBatch bounds the calls of one batch in group mode: fewer than
// FoldedLength (groupCounter), so that a transaction resent in a batch is
// still inside the window when its turn comes (see admit).
const groupBatch = 4

// groupCounter are the counter options of group mode: a window of 2 + 4
// transactions.
var groupCounter = tpncounter.Options{HistoryLength: 2, FoldedLength: 4}

// groupStep is step's choice of work in group mode: the resends due and a
// few new transactions, resends and duplicates, sent as one batch to one
// ledger; or a Find.
func (s *ledgerSim) groupStep(ctx context.Context, step int) error {
	// The window, in transactions: a ledger whose write is pending must
	// write again before any other holder of its transactions applies
	// HistoryLength + FoldedLength more. One batch can take a ledger that
	// far at once, so pending ledgers land their writes first (faults
	// off: the writes that fail were exercised when they went pending).
	for a, l := range s.ledgers {
		if !l.Pending() {
			continue
		}
		s.faulty.SetPolicy(nil)
		_, err := l.Find(ctx)
		s.faulty.SetPolicy(s.policy)
		if err != nil {
			return fmt.Errorf("landing ledger %d's pending write: %w", a, err)
		}
		delete(s.flushBy, a)
	}
	var batch []crdt.TxnID
	for _, txn := range slices.Sorted(maps.Keys(s.resend)) {
		by := s.resend[txn]
		if by == 0 {
			s.resend[txn] = step + 1 + s.r.Intn(8)
		} else if by <= step && len(batch) < groupBatch {
			batch = append(batch, txn) // the others wait for a later step
		}
	}
	if s.r.Float64() < 0.15 {
		_, err := s.ledgers[s.r.Intn(len(s.ledgers))].Find(ctx)
		if err != nil && !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, crdt.ErrUnavailable) {
			return err
		}
	} else {
		for k := 1 + s.r.Intn(groupBatch); k > 0 && len(batch) < groupBatch; k-- {
			switch x := s.r.Float64(); {
			case x < 0.2 && len(s.recent) > 0:
				batch = append(batch, s.recent[s.r.Intn(len(s.recent))])
			case x < 0.3 && len(batch) > 0:
				batch = append(batch, batch[s.r.Intn(len(batch))]) // twice in one batch
			default:
				batch = append(batch, s.newTxn(step))
			}
		}
	}
	if len(batch) == 0 {
		return nil
	}
	return s.submitGroup(ctx, s.r.Intn(len(s.ledgers)), batch)
}

// newTxn makes a new transaction and its amount.
func (s *ledgerSim) newTxn(step int) crdt.TxnID {
	s.next++
	txn := crdt.TxnID(fmt.Sprintf("t%d", s.next))
	if s.timed {
		txn = crdt.TxnID(fmt.Sprintf("t%d@%d", s.next, step+1))
	}
	amt := int64(1 + s.r.Intn(100))
	if s.r.Intn(3) == 0 {
		amt = -amt
	}
	s.amounts[txn] = amt
	s.recent = append(s.recent, txn)
	if len(s.recent) > 8 && !s.timed { // timed clients resend anything, at any time
		s.recent = s.recent[1:]
	}
	return txn
}

func (s *ledgerSim) step(ctx context.Context, step int) error {
	// Sorted iteration keeps a replayed seed deterministic.
	for _, a := range slices.Sorted(maps.Keys(s.flushBy)) {
		by := s.flushBy[a]
		if by < 0 {
			// A pending ledger writes again soon. Timed clients resend at
			// any time, so in timed mode a pending ledger may also stay
			// idle long past the window while its transaction is retried
			// elsewhere, counted and forgotten.
			s.flushBy[a] = step + 2
			if s.timed {
				s.flushBy[a] += s.r.Intn(50)
			}
		} else if by <= step {
			delete(s.flushBy, a)
			if _, err := s.ledgers[a].Find(ctx); err != nil && !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, crdt.ErrUnavailable) {
				return err
			}
			if s.ledgers[a].Pending() {
				s.flushBy[a] = step + 2
			}
		}
	}
	if s.groups {
		return s.groupStep(ctx, step)
	}
	for _, txn := range slices.Sorted(maps.Keys(s.resend)) {
		by := s.resend[txn]
		if by == 0 {
			s.resend[txn] = step + 1 + s.r.Intn(8)
		} else if by <= step {
			if err := s.submit(ctx, txn); err != nil {
				return err
			}
		}
	}
	switch x := s.r.Float64(); {
	case x < 0.3 && len(s.recent) > 0:
		return s.submit(ctx, s.recent[s.r.Intn(len(s.recent))])
	case x < 0.9:
		return s.submit(ctx, s.newTxn(step))
	default:
		_, err := s.ledgers[s.r.Intn(len(s.ledgers))].Find(ctx)
		if err != nil && !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, crdt.ErrUnavailable) {
			return err
		}
		return nil
	}
}

// simCases is the number of schedules of a simulation property in CI;
// COUNTERKIT_CASES=4 gives 400.
const simCases = 100

// simProperties returns gopter properties over COUNTERKIT_CASES × simCases
// schedule seeds, printing the seed and its replay command. The seed is 1
// in CI and the time's in a long run (doubtSeed), as for the random
// protocol tests: long runs meet the ledger's stated limits (SPEC.md 6.11;
// CHANGELOG, Known issues), about once in 200,000 schedules of
// TestLedgerSimulationRetirement, which a time seed in CI met once.
func simProperties(t *testing.T) (*gopter.Properties, *gopter.TestParameters) {
	seed := doubtSeed(t)
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	params := gopter.DefaultTestParametersWithSeed(seed)
	params.MinSuccessfulTests = proptest.Scale(simCases)
	if testing.Short() {
		params.MinSuccessfulTests = max(1, params.MinSuccessfulTests/8) // the race pass (sampler)
	}
	params.MaxShrinkCount = 0
	return gopter.NewProperties(params), params
}

func TestLedgerSimulation(t *testing.T) {
	props, params := simProperties(t)
	props.Property("ledgers over a faulty store count every landed transaction once", prop.ForAll(func(s int64) string {
		if err := runLedgerSim(s, 60); err != nil {
			return fmt.Sprintf("schedule seed %d: %v", s, err)
		}
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
	t.Logf("%d schedules of 60 steps over 5 ledgers", params.MinSuccessfulTests)
}

// TestLedgerSimulationTimed: the same ledgers with timed transactions, and
// clients that resend any earlier transaction at any time, long after the
// window: every resend is recognised or refused (crdt.ErrOutsideWindow),
// none is counted twice.
func TestLedgerSimulationTimed(t *testing.T) {
	props, params := simProperties(t)
	refused := 0
	props.Property("timed ledgers never count a late resend twice", prop.ForAll(func(s int64) string {
		sim, err := runLedgerSimMode(s, 60, true)
		if err != nil {
			return fmt.Sprintf("schedule seed %d: %v", s, err)
		}
		refused += sim.refused
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
	t.Logf("%d schedules of 60 steps over 5 ledgers; late resends refused: %d", params.MinSuccessfulTests, refused)
	require.Positive(t, refused, "the schedules must reach resends after the window")
}

// TestLedgerSimulationRestarts: processes restart (a ledger's memory is
// lost) while Puts from their previous life are still in flight and land
// later, in any order. Every acknowledged transaction still counts, and
// every landed one exactly once. A ledger that continues its actor's entry
// after a restart (the old behaviour) forks it, and the simulation catches
// that.
func TestLedgerSimulationRestarts(t *testing.T) {
	restarted, _ := restartSchedules(t, ledgerSim{restarts: true}, "restarts and late Puts lose nothing")
	require.Positive(t, restarted)
	if testing.Short() {
		return // the race pass (sampler): the full pass runs the search below
	}
	// A fork needs a restart while a Put is in flight: most seeds find one
	// within 400 schedules, a few need more; the search stops at the first.
	catchBroken(t, 10*proptest.Scale(400), ledgerSim{restarts: true, stable: true}, "a restart continuing its actor's entry")
}

// TestLedgerSimulationRowsPerActor: the restarts simulation on a store
// shaped as the Cassandra adapter's table (ledger.RowStore: one row per actor,
// last write wins by write time), where a ledger's Put replaces its own
// earlier row, a transaction record's included. On a double whose late
// Puts take their write time as they land, a held Put replaces its
// writer's newer row, and the simulation catches that.
func TestLedgerSimulationRowsPerActor(t *testing.T) {
	restartSchedules(t, ledgerSim{restarts: true, rows: true}, "restarts and late Puts lose nothing, one row per actor")
	catchBroken(t, proptest.Scale(400), ledgerSim{restarts: true, untimedRows: true}, "late Puts replacing newer rows")
}

// restartSchedules runs the simulation property of mode, named name, and
// returns the restarts and the Puts landed late it made (some late Puts
// required).
func restartSchedules(t *testing.T, mode ledgerSim, name string) (restarted, delayed int) {
	over := 0
	props, params := simProperties(t)
	props.Property(name, prop.ForAll(func(seed int64) string {
		m := mode
		s, err := runLedgerSimWith(seed, 60, &m)
		if err != nil {
			return fmt.Sprintf("schedule seed %d: %v", seed, err)
		}
		restarted += s.restarted
		delayed += s.delayed
		over += s.overSteps
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
	t.Logf("%d schedules of 60 steps over 5 ledgers; restarts %d, Puts landed late %d", params.MinSuccessfulTests, restarted, delayed)
	if mode.overUntilQuiet {
		t.Logf("steps that ended over until quiet: %d", over)
	}
	require.Positive(t, delayed)
	return restarted, delayed
}

// catchBroken runs up to n schedules of mode, a broken variant (what),
// and fails unless one of them fails.
func catchBroken(t *testing.T, n int, mode ledgerSim, what string) {
	seed := proptest.Seed()
	rng := rand.New(rand.NewSource(seed))
	for i := 0; i < n; i++ {
		m := mode
		if _, err := runLedgerSimWith(rng.Int63(), 60, &m); err != nil {
			t.Logf("%s caught after %d schedules: %v", what, i+1, err)
			return
		}
	}
	t.Fatalf("seed %d: %d schedules never caught %s", seed, n, what)
}

// TestLedgerSimulationRetirement: the restarts simulation with retirement
// on (RetireAfter one hour, 9 minutes a step, 60 steps: nine hours), on
// the memory store and on a RowStore; a held Put lands or is lost within
// three steps. Schedule 307 retired a writer too early before the fix:
// its newest credit's record was owed (refused), and a new incarnation
// dated it by the record of its newest debit, 72 minutes older; a stale
// read then hid the other copy of that credit, and retiring it counted
// the credit twice. A writer is now dated only when each of its newest
// credit and debit has a record naming it (SPEC.md 6.9).
//
// The second half (longDoubt) retires writers while alive and sends
// writes in doubt again after RetireAfter, with reads lagging at most
// RetireAfter/2. Schedule 166 counted a transaction twice before copies
// in doubt that long were judged by their records (SPEC.md 6.11 step 4;
// TestLongDoubtTakenOutBeforeItMeets).
//
// At 200,000 schedules per half, seeds 5172422352764152584 (rows=false)
// and 4761820710969227613 (rows=true) lost a transaction before a copy in
// doubt for RetireAfter/2 that would count beside the retry's was kept
// (SPEC.md 6.11 step 4; TestLongDoubtKeptWhenItWouldCount).
func TestLedgerSimulationRetirement(t *testing.T) {
	for _, rows := range []bool{false, true} {
		t.Run(fmt.Sprint("rows=", rows), func(t *testing.T) {
			mode := retirement(rows)
			m := mode
			m.overUntilQuiet = false // exact at every step, as the mutant test checks
			if _, err := runLedgerSimWith(307, 60, &m); err != nil {
				t.Fatalf("schedule seed 307: %v", err)
			}
			seed := lostInGiveUpRace[rows]
			m = mode
			if _, err := runLedgerSimWith(seed, 60, &m); err != nil {
				t.Fatalf("schedule seed %d: %v", seed, err)
			}
			restartSchedules(t, mode, "restarts, late Puts and retirement lose nothing")
			// Writers retired while alive (steps longer than RetireAfter),
			// writes in doubt sent again after RetireAfter, and reads that
			// lag by at most RetireAfter/2 (see ledgerSim.maxLag).
			m = longDoubt(rows)
			if _, err := runLedgerSimWith(166, 60, &m); err != nil {
				t.Fatalf("schedule seed 166: %v", err)
			}
			restartSchedules(t, longDoubt(rows), "a short RetireAfter loses nothing with reads lagging less than it")
		})
	}
}

// retirement is the restarts simulation with RetireAfter one hour and 9
// minutes a step. Transactions may count twice between steps (see
// ledgerSim.overUntilQuiet): a held Put of a process that restarted lands
// after a stale pass retired the writer of the other copy with it
// counted, until that copy's ledger reads again (SPEC.md 6.11 Limits,
// "Concurrent copies"; found at 200,000 schedules, seed
// -4229627812906568953).
func retirement(rows bool) ledgerSim {
	return ledgerSim{restarts: true, rows: rows, retire: time.Hour, stepDur: 9 * time.Minute, maxHeld: 3, overUntilQuiet: true}
}

// lostInGiveUpRace are the schedules of TestLedgerSimulationRetirement that
// lost a transaction to a copy in doubt taken out while its writer's
// copy counted, by its rows setting.
var lostInGiveUpRace = map[bool]int64{false: 5172422352764152584, true: 4761820710969227613}

// longDoubt is the restarts simulation with RetireAfter 10 minutes and 11
// minutes a step: every idle writer is due at the next step, and a write
// in doubt is sent again after RetireAfter (SPEC.md 6.11 step 4).
func longDoubt(rows bool) ledgerSim {
	return ledgerSim{restarts: true, rows: rows, retire: 10 * time.Minute, stepDur: 11 * time.Minute, maxHeld: 1, maxLag: 5 * time.Minute, overUntilQuiet: true}
}

// A ledger simulation with faults must see siblings and faults at all, or
// it proves nothing.
func TestLedgerSimulationExercisesFaults(t *testing.T) {
	ctx := context.Background()
	opts := tpncounter.Options{HistoryLength: 2}
	inner := memory.NewSiblings()
	fs := faulty.NewSiblings(inner, faulty.Options{
		Policy:       ledger.FreshRecords(faulty.Seeded(7, faulty.Rates{Refuse: 0.1, LoseAck: 0.1, Lose: 0.1, Stale: 0.3, MaxStaleness: 2})),
		RecordWrites: true,
	})
	siblings := 0
	var ls []*ledger.Ledger
	for a := 0; a < 3; a++ {
		l, err := ledger.New(fs, simKey, ledger.Options{Actor: crdt.ActorID(fmt.Sprintf("l%d", a)), Counter: opts, Backoff: ledger.Backoff{Initial: -1}})
		require.NoError(t, err)
		ls = append(ls, l)
	}
	for i := 0; i < 200; i++ {
		_, _ = ls[i%3].Credit(ctx, crdt.TxnID(fmt.Sprintf("t%d", i)), 1)
		if inner.Count(simKey) > 1 {
			siblings++
		}
	}
	require.Positive(t, siblings)
	counts := fs.Counts()
	for _, f := range []faulty.Fault{faulty.Refuse, faulty.LoseAck, faulty.Lose, faulty.Stale} {
		require.Positive(t, counts[f], "fault %s", f)
	}
}

// TestLedgerSimulationGroups: the ledger simulation with concurrent calls
// on one ledger coalescing into groups (group commit) under the same
// faults, with duplicates inside a batch, resends of earlier transactions
// and queued calls canceled. Every acknowledged transaction lands and is
// counted once, every landed one once (so every resend inside the window
// is recognised), and a transaction refused outright, never resent, never
// lands.
func TestLedgerSimulationGroups(t *testing.T) {
	props, params := simProperties(t)
	params.MinSuccessfulTests = proptest.Scale(simCases / 2) // each schedule runs goroutines
	grouped, abandoned := 0, 0
	props.Property("grouped ledgers count every landed transaction once", prop.ForAll(func(seed int64) string {
		maxGroup := 0 // the default: the window, 6, more than a batch
		if seed%2 == 0 {
			maxGroup = 2 // a batch runs as several groups
		}
		s, err := runLedgerSimWith(seed, 60, &ledgerSim{groups: true, maxGroup: maxGroup})
		if err != nil {
			return fmt.Sprintf("schedule seed %d: %v", seed, err)
		}
		grouped += s.grouped
		abandoned += len(s.abandoned)
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
	t.Logf("%d schedules of 60 steps over 5 ledgers; calls queued behind a cycle %d, refused transactions abandoned %d", params.MinSuccessfulTests, grouped, abandoned)
	// Replay: COUNTERKIT_SEED=<seed> go test ./ledger -run '^TestLedgerSimulationGroups$'
	// Broken variants: go test -tags counterkit_mutants ./ledger -run CatchesBrokenVariants
	require.Positive(t, grouped)
	require.Positive(t, abandoned)
}

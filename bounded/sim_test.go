package bounded

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store/faulty"
)

// overdraw is the broken variant the simulation must catch: a debit
// applied without looking at the actor's rights. It exists only in tests.
func (c *Counter) overdraw(actor crdt.ActorID, txn crdt.TxnID, amount int64) error {
	if _, ok := c.Holds(actor, txn); ok {
		return nil // a retry of the cycle
	}
	e, err := c.entries[actor].next()
	if err != nil {
		return err
	}
	e.debits += amount
	e.recent = append(e.recent, Txn{txn, -amount})
	return c.put(actor, e)
}

// simOp is one client operation of a schedule, remembered so that it can
// be retried after an ambiguous answer.
type simOp struct {
	txn    crdt.TxnID
	amount int64    // signed
	where  *Account // the account that answered ambiguously, for a retry
	// elsewhere: another account than where answered ambiguously too, so
	// a refusal by where says nothing of that account's copy.
	elsewhere bool
}

// simRun is one schedule over accounts sharing one faulty in-memory store.
type simRun struct {
	rng      *rand.Rand
	inc      *rand.Rand // incarnation ids, so that a seed replays
	inner    *memory.Siblings
	st       *faulty.Siblings
	accounts []*Account
	dead     map[crdt.ActorID]bool // writers of accounts dropped by a restart
	lastErr  error                 // the error of the last operation (finish reports it)
	acked    map[crdt.TxnID]int64  // acknowledged, with the amount
	refused  map[crdt.TxnID]bool   // refused debits and writes known not to have landed, never retried
	stats    *simStats
	doubt    []simOp // ambiguous, to retry
	nextTxn  int
	broken   bool // one account overdraws
	log      []string
	// window is each account's count window (0: the default, 64, which
	// the schedules never fill); a small one makes transactions leave it,
	// so that retries are answered from their records.
	window int
	// recounted is the first acknowledged transaction that a retry applied
	// again (SPEC.md 13.5, "Records": recognised within RetryWindow).
	recounted string
	// gave and mayHave are the rights each account's transfers to the sink
	// gave (acknowledged) and may have given (ambiguous_write): the final
	// sent(from, sink) is at least the first and at most their sum.
	// gave and mayHave leave out closed accounts (Close gives too).
	gave, mayHave map[[2]crdt.ActorID]int64
	closed        map[crdt.ActorID]bool
}

const simKey = "k"

func newSimRun(seed int64, broken bool, window int) *simRun {
	r := &simRun{rng: rand.New(rand.NewSource(seed)), inc: rand.New(rand.NewSource(^seed)), inner: memory.NewSiblings(),
		dead: map[crdt.ActorID]bool{}, acked: map[crdt.TxnID]int64{}, refused: map[crdt.TxnID]bool{}, broken: broken, window: window,
		gave: map[[2]crdt.ActorID]int64{}, mayHave: map[[2]crdt.ActorID]int64{}, closed: map[crdt.ActorID]bool{}}
	rng := r.rng
	r.st = faulty.NewSiblings(r.inner, faulty.Options{History: 4, RecordWrites: true, Policy: func(c faulty.Call) faulty.Fault {
		x := rng.Float64()
		if faulty.IsRead(c.Method) && IsRecordKey(c.Key) {
			// Reads of records reflect every acknowledged record Put
			// (SPEC.md 13.5, "Records", as 6.11's Limits): refused, never stale.
			if x < 0.05 {
				return faulty.Refuse
			}
			return faulty.Pass
		}
		if faulty.IsRead(c.Method) {
			if x < 0.15 {
				return faulty.StaleBy(1 + rng.Intn(3))
			}
			return faulty.Pass
		}
		switch {
		case x < 0.06:
			return faulty.Refuse
		case x < 0.14:
			return faulty.LoseAck
		case x < 0.20:
			return faulty.Lose
		case x < 0.28:
			return faulty.Hold
		}
		return faulty.Pass
	}})
	for i := range 3 {
		r.accounts = append(r.accounts, r.open(i))
	}
	return r
}

func (r *simRun) open(i int) *Account {
	a, err := Open(r.st, simKey, AccountOptions{Actor: crdt.ActorID(fmt.Sprintf("r%d", i)), RetryCount: 1,
		Backoff: Backoff{Initial: -1}, Counter: Options{Window: r.window}})
	if err != nil {
		panic(err)
	}
	const digits = "234567abcdefghijklmnopqrstuvwxyz" // an incarnation's (SPEC.md 6.9)
	id := make([]byte, 8)
	for k := range id {
		id[k] = digits[r.inc.Intn(len(digits))]
	}
	a.writer = crdt.ActorID(fmt.Sprintf("r%d~%s", i, id))
	return a
}

func (r *simRun) logf(format string, args ...any) {
	r.log = append(r.log, fmt.Sprintf(format, args...))
}

// step runs one random step.
func (r *simRun) step(ctx context.Context) error {
	i := r.rng.Intn(len(r.accounts))
	a := r.accounts[i]
	switch k := r.rng.Intn(23); {
	case k < 5: // credit
		r.nextTxn++
		r.do(ctx, a, simOp{crdt.TxnID(fmt.Sprintf("t%d", r.nextTxn)), int64(1 + r.rng.Intn(10)), nil, false})
	case k < 12: // debit, on every actor alike
		r.nextTxn++
		r.do(ctx, a, simOp{crdt.TxnID(fmt.Sprintf("t%d", r.nextTxn)), -int64(1 + r.rng.Intn(12)), nil, false})
	case k < 14: // retry an operation in doubt, here or elsewhere
		if len(r.doubt) > 0 {
			j := r.rng.Intn(len(r.doubt))
			op := r.doubt[j]
			r.doubt = slices.Delete(r.doubt, j, j+1)
			if slices.Contains(r.accounts, op.where) && r.rng.Intn(2) == 0 {
				a = op.where // retried where it was in doubt
			}
			r.do(ctx, a, op)
		}
	case k < 16:
		_, err := a.Sync(ctx)
		r.logf("%s sync: %v", a.Writer(), err)
	case k < 17: // restart: a new incarnation; the old one's held writes may land later
		if r.rng.Intn(2) == 0 { // a clean stop first: its rights go to another account
			heir := r.accounts[(i+1)%len(r.accounts)].Writer()
			_, err := a.Close(ctx, heir)
			r.logf("%s closes, heir %s: %v", a.Writer(), heir, err)
			r.closed[a.Writer()] = true
		}
		r.dead[a.writer] = true
		r.accounts[i] = r.open(i)
		r.logf("%s restarts as %s", a.Writer(), r.accounts[i].Writer())
	case k < 19: // a late write lands
		if n := r.st.Held(); n > 0 {
			err := r.st.Deliver(r.rng.Intn(n))
			r.logf("late write delivered: %v", err)
		}
	case k < 21: // a retry of an acknowledged transaction, anywhere
		if len(r.acked) > 0 {
			txns := slices.Sorted(maps.Keys(r.acked))
			txn := txns[r.rng.Intn(len(txns))]
			r.do(ctx, a, simOp{txn, r.acked[txn], nil, false})
		}
	case k < 22 && !r.broken: // a transfer of rights to an actor that never asks (so no grant adds to it)
		to := crdt.ActorID("sink")
		amt := int64(1 + r.rng.Intn(6))
		_, err := a.Transfer(ctx, to, amt)
		r.logf("%s gives %s %d: %v", a.Writer(), to, amt, err)
		switch k := [2]crdt.ActorID{a.Writer(), to}; {
		case err == nil:
			r.gave[k] += amt
		case errors.Is(err, crdt.ErrAmbiguousWrite):
			r.mayHave[k] += amt
		}
	default:
		if r.broken && i == 0 {
			r.nextTxn++
			txn := crdt.TxnID(fmt.Sprintf("t%d", r.nextTxn))
			_, err := a.cycle(ctx, func(c *Counter) (bool, error) { return true, c.overdraw(a.writer, txn, 5) })
			r.logf("%s overdraws 5 (%s): %v", a.Writer(), txn, err)
		}
	}
	return r.check()
}

// do runs op on a and records what the client learned.
func (r *simRun) do(ctx context.Context, a *Account, op simOp) {
	var res Result
	var err error
	if op.amount > 0 {
		res, err = a.Credit(ctx, op.txn, op.amount)
	} else {
		res, err = a.Debit(ctx, op.txn, -op.amount)
	}
	r.logf("%s %s %+d: %v %v", a.Writer(), op.txn, op.amount, res.Outcome, err)
	r.lastErr = err
	if _, acked := r.acked[op.txn]; acked && res.Outcome == Applied && r.recounted == "" {
		r.recounted = fmt.Sprintf("acknowledged %s (%+d) applied again by %s", op.txn, op.amount, a.Writer())
	}
	switch {
	case err == nil:
		r.acked[op.txn] = op.amount
	case errors.Is(err, crdt.ErrInsufficientRights):
		// refused: nothing applied here (the simulated client gives up).
		// A retry refused by another account says nothing of the copy
		// in doubt, which may still land.
		if (op.where == nil || op.where == a) && !op.elsewhere {
			r.refused[op.txn] = true
		}
		r.stats.refused++
	case errors.Is(err, crdt.ErrUnavailable) && !errors.Is(err, crdt.ErrAmbiguousWrite):
		// Known not to have landed: the simulated client gives up.
		if (op.where == nil || op.where == a) && !op.elsewhere {
			r.refused[op.txn] = true
		}
	default:
		op.elsewhere = op.elsewhere || op.where != nil && op.where != a
		op.where = a
		r.doubt = append(r.doubt, op)
	}
}

// check verifies the bound on every stored sibling and on their join, and
// that no retry of an acknowledged transaction applied it again.
func (r *simRun) check() error {
	if r.recounted != "" {
		return errors.New(r.recounted)
	}
	sibs, _, err := r.inner.Fetch(context.Background(), simKey)
	if err != nil {
		return err
	}
	all := &Counter{}
	for _, b := range sibs {
		c, err := decode(b, 0)
		if err != nil {
			return err
		}
		if c.Value() < 0 {
			return fmt.Errorf("a stored sibling has value %d, below the bound 0", c.Value())
		}
		if err := all.Merge(c); err != nil {
			return err
		}
	}
	for _, a := range r.accounts {
		if a.cyc.Local != nil {
			if err := all.Merge(a.cyc.Local); err != nil {
				return err
			}
		}
	}
	if all.Value() < 0 {
		return fmt.Errorf("the join of the store and the accounts has value %d, below the bound 0", all.Value())
	}
	return nil
}

// maxFinishRetries bounds finish's retries: with the network healed each
// transaction in doubt resolves at its first retry or so; a state that
// refuses every write (a broken variant's) would loop for good.
const maxFinishRetries = 1000

// finish heals the network, lands everything and checks convergence and
// exactly-once.
func (r *simRun) finish(ctx context.Context) error {
	r.st.SetPolicy(func(faulty.Call) faulty.Fault { return faulty.Pass })
	if err := r.st.DeliverAll(); err != nil {
		return err
	}
	for tries := 0; len(r.doubt) > 0; tries++ { // clients retry until they know
		if tries == maxFinishRetries {
			return fmt.Errorf("%d transactions still in doubt after %d retries (%s %+d last: %v)", len(r.doubt), tries, r.doubt[0].txn, r.doubt[0].amount, r.lastErr)
		}
		op := r.doubt[0]
		r.doubt = r.doubt[1:]
		a := r.accounts[r.rng.Intn(len(r.accounts))]
		if slices.Contains(r.accounts, op.where) {
			a = op.where
		}
		r.do(ctx, a, op)
	}
	var states []*Counter
	for round := 0; round < 10; round++ {
		if round > 1 && len(states) > 0 && allEqual(states) {
			break
		}
		states = states[:0]
		for _, a := range r.accounts {
			c, err := a.Sync(ctx)
			if err != nil {
				return err
			}
			states = append(states, c)
		}
	}
	if err := r.check(); err != nil {
		return err
	}
	if !allEqual(states) {
		return fmt.Errorf("accounts did not converge")
	}
	final := states[0]
	for k := range maps.Collect(func(yield func([2]crdt.ActorID, int64) bool) {
		maps.All(r.gave)(yield)
		maps.All(r.mayHave)(yield)
	}) {
		n := r.gave[k]
		if sent := final.Sent(k[0], k[1]); !r.closed[k[0]] && (sent < n || sent > n+r.mayHave[k]) {
			return fmt.Errorf("%s gave %s %d (acknowledged %d, %d more in doubt)", k[0], k[1], sent, n, r.mayHave[k])
		}
	}
	for txn := range r.refused {
		if _, ok := r.acked[txn]; !ok && len(final.Holders(txn)) > 0 {
			return fmt.Errorf("refused %s is in the state", txn)
		}
	}
	doubled := final.Doubled()
	for txn, amt := range r.acked {
		r.stats.acked++
		hs := final.Holders(txn)
		if (len(hs) > 1) != slices.Contains(doubled, txn) {
			return fmt.Errorf("acknowledged %s is held by %v but Doubled says %v", txn, hs, doubled)
		}
		if len(hs) == 0 && r.window == 0 { // a small window lets it go
			return fmt.Errorf("acknowledged %s (%+d) is lost", txn, amt)
		}
		if len(hs) > 1 {
			dead := 0
			for _, h := range hs {
				if r.dead[h.Actor] {
					dead++
				}
			}
			switch {
			case dead > 0:
				r.stats.twiceGone++
			case amt > 0:
				r.stats.twiceSpent++ // a credit whose rights the later holder spent
			default:
				return fmt.Errorf("acknowledged %s (%+d) is held by %v, all alive", txn, amt, hs)
			}
		}
	}
	return nil
}

// runSims runs n schedules of steps each and returns the first failure.
type simStats struct{ acked, refused, twiceGone, twiceSpent int }

func runSims(t *testing.T, seed int64, n, steps int, broken bool, window int) (failed string) {
	var st simStats
	defer func() {
		t.Logf("%d schedules: %d acknowledged, %d refused debits; counted twice: %d with a gone holder, %d credits already spent", n, st.acked, st.refused, st.twiceGone, st.twiceSpent)
	}()
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	for s := range n {
		sseed := rng.Int63()
		r := newSimRun(sseed, broken, window)
		r.stats = &st
		var err error
		for range steps {
			if err = r.step(ctx); err != nil {
				break
			}
		}
		if err == nil {
			err = r.finish(ctx)
		}
		if err != nil {
			return fmt.Sprintf("schedule %d (seed %d): %v\n%s", s, sseed, err, strings.Join(r.log, "\n"))
		}
	}
	return ""
}

// TestSimulation: the value never goes below the bound, in any stored
// sibling or join, whatever the schedule: concurrent debits on every
// actor, siblings, stale reads, lost acknowledgements and retries, late
// writes, restarts. Acknowledged transactions are never lost, and counted
// once unless a holder is a gone incarnation (see the package
// documentation). 800 schedules by default, proptest.Scale(2000) with
// COUNTERKIT_CASES above 1.
func TestSimulation(t *testing.T) {
	testsize.SkipSequential(t)
	seed := proptest.Seed()
	n := 800
	if proptest.Scale(1) > 1 { // COUNTERKIT_CASES above 1
		n = proptest.Scale(2000)
	}
	t.Logf("seed %d, %d schedules; replay: %s", seed, n, proptest.Replay(t, seed))
	if f := runSims(t, seed, n, 14, false, 0); f != "" {
		t.Fatalf("%s\nreplay: %s", f, proptest.Replay(t, seed))
	}
}

// TestSimulationCatchesOverdraft: with one account debiting beyond its
// rights, the simulation fails.
func TestSimulationCatchesOverdraft(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	f := runSims(t, seed, 500, 14, true, 0)
	if !strings.Contains(f, "below the bound") {
		t.Fatalf("an account overdrawing was not caught as such: %q", f)
	}
	t.Logf("caught: %s", strings.SplitN(f, "\n", 2)[0])
}

// TestSimulationRetriesAfterTheWindow: the schedules of TestSimulation with
// a count window of 2 transactions per account and more steps, so that
// transactions leave every holder's window: a retry of an acknowledged
// transaction, on any account, is never applied again (SPEC.md 13.5,
// "Records"), and the value never goes below the bound. 400 schedules by
// default, proptest.Scale(1000) with COUNTERKIT_CASES above 1.
func TestSimulationRetriesAfterTheWindow(t *testing.T) {
	testsize.SkipSequential(t)
	seed := proptest.Seed()
	n := 400
	if proptest.Scale(1) > 1 { // COUNTERKIT_CASES above 1
		n = proptest.Scale(1000)
	}
	t.Logf("seed %d, %d schedules; replay: %s", seed, n, proptest.Replay(t, seed))
	if f := runSims(t, seed, n, 30, false, 2); f != "" {
		t.Fatalf("%s\nreplay: %s", f, proptest.Replay(t, seed))
	}
}

func allEqual(states []*Counter) bool {
	for _, c := range states[1:] {
		if !c.Equal(states[0]) {
			return false
		}
	}
	return true
}

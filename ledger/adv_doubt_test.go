package ledger_test

// Adversarial scenarios for writes in doubt (SPEC.md 6.11 step 3: the
// records owed once a write is known to have landed, and the rule that
// holds a call back while unrecorded transactions could be folded out) and
// for the retirement of an idle writer whose copy does not count (SPEC.md
// 6.10). They are written from the specification's promises: each call
// answered ambiguous_write whose write landed is, when retried after many
// more transactions, on any ledger, a duplicate counted once.
//
// Each test names, in its comment, the broken variant of the production
// code it was seen to fail against.

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// doubtPlan is a fault policy with three queues: the faults of the next
// Puts of the account key, of the next Fetches of the account key, and of
// the next Puts of records. Every other call passes.
type doubtPlan struct {
	mu                            sync.Mutex
	counterPuts, fetches, records []faulty.Fault
}

func (p *doubtPlan) policy(c faulty.Call) faulty.Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	var q *[]faulty.Fault
	switch {
	case c.Method == faulty.MethodPut && ledger.IsRecordKey(c.Key):
		q = &p.records
	case c.Method == faulty.MethodPut:
		q = &p.counterPuts
	case c.Method == faulty.MethodFetch && !ledger.IsRecordKey(c.Key):
		q = &p.fetches
	default:
		return faulty.Pass
	}
	if len(*q) == 0 {
		return faulty.Pass
	}
	f := (*q)[0]
	*q = (*q)[1:]
	return f
}

func (p *doubtPlan) set(counterPuts, fetches, records []faulty.Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counterPuts, p.fetches, p.records = counterPuts, fetches, records
}

func repeat(f faulty.Fault, n int) []faulty.Fault { return slices.Repeat([]faulty.Fault{f}, n) }

// isRecognised reports whether a retry's outcome is one of the answers
// the window promises for the amount that counts.
func isRecognised(o tpncounter.Outcome) bool {
	return o == tpncounter.Duplicate || o == tpncounter.DuplicateFolded
}

// TestAdvRetryOfAWriteInDoubtAnywhere: a call of t0 answered
// ambiguous_write, whose write lands in one of several ways, followed by
// more than three times H + F other transactions (credits and debits,
// History and Folded length 2) on the ledger that made it, with the first
// record Puts after it refused (so those calls fail ambiguous_write too and
// their records are owed) and some stale reads of the account key. Then
// t0 and every other transaction are retried on the same ledger, another
// ledger, a new incarnation of the first actor and a Book, behind a stale
// read of the account key: each is a duplicate, and the value counts each
// once.
//
// Seen to fail against owe (ledger.go) writing no record: in every case
// but "the writer never calls again" (where the writer's entry still holds
// t0, as the window allows), the first retry of t0 is applied again.
func TestAdvRetryOfAWriteInDoubtAnywhere(t *testing.T) {
	ctx := context.Background()
	const h, f = 2, 2
	later := 3*(h+f) + 1
	type land struct {
		name string
		// faults of the account key's Puts of t0's call (RetryCount 1:
		// two attempts), and of t0b's when there are two
		puts []faulty.Fault
		// then, before the later transactions
		then func(t *testing.T, fs *faulty.Siblings, a *ledger.Ledger)
		// afterFirst runs after the first later transaction
		afterFirst func(t *testing.T, fs *faulty.Siblings, a *ledger.Ledger)
		// never: a makes no further call; the later transactions are b's
		never bool
	}
	find := func(t *testing.T, _ *faulty.Siblings, a *ledger.Ledger) {
		_, err := a.Find(ctx)
		require.NoError(t, err)
	}
	for _, tc := range []land{
		{name: "lost, the next credit lands it", puts: repeat(faulty.Lose, 2)},
		{name: "lost ack, the next read shows it", puts: []faulty.Fault{faulty.Refuse, faulty.LoseAck}},
		{name: "lost ack, Find shows it", puts: []faulty.Fault{faulty.Refuse, faulty.LoseAck}, then: find},
		{name: "lost ack, a read only shows it", puts: []faulty.Fault{faulty.Refuse, faulty.LoseAck},
			then: func(t *testing.T, _ *faulty.Siblings, a *ledger.Ledger) {
				_, err := a.Value(ctx)
				require.NoError(t, err)
			}},
		{name: "held, delivered after the next credit", puts: repeat(faulty.Hold, 2),
			afterFirst: func(t *testing.T, fs *faulty.Siblings, _ *ledger.Ledger) { require.NoError(t, fs.DeliverAll()) }},
		{name: "held, delivered, then Find", puts: repeat(faulty.Hold, 2),
			then: func(t *testing.T, fs *faulty.Siblings, a *ledger.Ledger) {
				require.NoError(t, fs.DeliverAll())
				find(t, fs, a)
			}},
		{name: "lost ack, the writer never calls again", puts: []faulty.Fault{faulty.Refuse, faulty.LoseAck}, never: true},
	} {
		for _, two := range []bool{false, true} {
			name := tc.name
			if two {
				name += ", two unacknowledged in one write"
			}
			t.Run(name, func(t *testing.T) {
				plan := &doubtPlan{}
				mem := memory.NewSiblings()
				fs := faulty.NewSiblings(mem, faulty.Options{Policy: plan.policy})
				clock := newFakeClock(time.Unix(1_800_000_000, 0))
				copts := tpncounter.Options{HistoryLength: h, FoldedLength: f}
				mk := func(actor crdt.ActorID, group int) *ledger.Ledger {
					o := ledger.Options{Actor: actor, RetryCount: 1, Backoff: ledger.Backoff{Initial: -1}, Counter: copts, MaxGroup: group}
					clock.opts(&o)
					l, err := ledger.New(fs, advKey, o)
					require.NoError(t, err)
					return l
				}
				a, b := mk("a", 1), mk("b", 1)
				amounts := map[crdt.TxnID]int64{"open": 100_000}
				_, err := a.Update(ctx, "open", 100_000)
				require.NoError(t, err)

				doubtful := []crdt.TxnID{"t0"}
				amounts["t0"] = 1000
				if two {
					// A second call, t0b (a debit), made while the first
					// is in doubt, fails the same way: the pending write
					// carries both, unacknowledged.
					doubtful = append(doubtful, "t0b")
					amounts["t0b"] = -300
				}
				for _, x := range doubtful {
					plan.set(tc.puts, nil, nil)
					_, err = a.Update(ctx, x, amounts[x])
					require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, x)
				}
				plan.set(nil, nil, nil)
				if tc.then != nil {
					tc.then(t, fs, a)
				}
				writer := a
				if tc.never {
					writer = b
				}
				// The first record Puts after it are refused; every
				// fourth read of the account key is stale.
				var fetches []faulty.Fault
				for i := range 4 * later {
					fetches = append(fetches, []faulty.Fault{faulty.Pass, faulty.Pass, faulty.Pass, faulty.Stale}[i%4])
				}
				plan.set(nil, fetches, repeat(faulty.Refuse, 3))
				var failed []crdt.TxnID
				for i := 1; i <= later; i++ {
					x := crdt.TxnID(fmt.Sprintf("t%d", i))
					amounts[x] = int64(i)
					if i%3 == 0 {
						amounts[x] = -int64(i)
					}
					res, err := writer.Update(ctx, x, amounts[x])
					if err != nil {
						require.True(t, errors.Is(err, crdt.ErrUnavailable) || errors.Is(err, crdt.ErrAmbiguousWrite), "%s: %v", x, err)
						failed = append(failed, x)
					} else {
						require.Equal(t, tpncounter.Applied, res.Outcome, x)
					}
					if i == 1 && tc.afterFirst != nil {
						tc.afterFirst(t, fs, a)
					}
				}
				plan.set(nil, nil, nil)
				// The calls that failed are made again, on b, until
				// answered.
				for _, x := range failed {
					_, err := b.Update(ctx, x, amounts[x])
					require.NoError(t, err, x)
				}
				// The doubtful calls were never answered: retried once
				// anywhere, they are answered, and after that they are
				// duplicates everywhere.
				retriers := []func(x crdt.TxnID) (tpncounter.Outcome, error){}
				on := func(l *ledger.Ledger) func(x crdt.TxnID) (tpncounter.Outcome, error) {
					return func(x crdt.TxnID) (tpncounter.Outcome, error) {
						plan.set(nil, []faulty.Fault{faulty.Stale}, nil)
						res, err := l.Update(ctx, x, amounts[x])
						return res.Outcome, err
					}
				}
				if !tc.never {
					retriers = append(retriers, on(a))
				}
				book, err := ledger.NewBook(fs, ledger.BookOptions{Options: ledger.Options{Actor: "c", Counter: copts, RetryCount: 1, Backoff: ledger.Backoff{Initial: -1}, Clock: clock.Now}})
				require.NoError(t, err)
				retriers = append(retriers, on(b), on(mk("a", 1)), func(x crdt.TxnID) (tpncounter.Outcome, error) {
					plan.set(nil, []faulty.Fault{faulty.Stale}, nil)
					res, err := book.Update(ctx, advKey, x, amounts[x])
					return res.Outcome, err
				})
				var want int64
				for _, v := range amounts {
					want += v
				}
				for i, retry := range retriers {
					for x := range amounts {
						out, err := retry(x)
						require.NoError(t, err, "retrier %d, %s", i, x)
						require.True(t, isRecognised(out), "retrier %d: %s (%d) counted again: %v", i, x, amounts[x], out)
					}
				}
				plan.set(nil, nil, nil)
				v, err := b.Value(ctx)
				require.NoError(t, err)
				require.Equal(t, want, v, "each transaction counted once")
				require.Equal(t, want, stored(t, mem).Value())
			})
		}
	}
}

// recordOf returns the record of x stored in st under advKey's account.
func recordOf(t *testing.T, st store.Siblings, x crdt.TxnID) (ledger.Record, bool) {
	t.Helper()
	sibs, _, err := st.Fetch(context.Background(), ledger.RecordKey(advKey, x))
	require.NoError(t, err)
	for _, b := range sibs {
		var r ledger.Record
		require.NoError(t, r.UnmarshalBinary(b))
		if r.Txn == x {
			return r, true
		}
	}
	return ledger.Record{}, false
}

// doubtSeed is COUNTERKIT_SEED; else the time in a long run
// (COUNTERKIT_CASES), else 1. The random protocol tests meet the stated
// limits of SPEC.md 6.11 about once in 3,000 cases, so CI runs the same
// cases every time and the long runs explore.
func doubtSeed(t *testing.T) int64 {
	if s := os.Getenv("COUNTERKIT_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, "COUNTERKIT_SEED")
		return v
	}
	if os.Getenv("COUNTERKIT_CASES") != "" {
		return time.Now().UnixNano()
	}
	return 1
}

// TestAdvHoldBackUnderAmbiguousPuts drives one ledger, or two on one
// account, with History and Folded length 1/1 and 2/2 through puts of the
// account key that fail at random (lost, lost acknowledgement, held in
// flight and delivered later, refused), refused record Puts and stale
// reads; some steps send two calls at once (MaxGroup 2), some retry a call
// not answered (with two ledgers, on either). After every step:
//
//   - every transaction the store has held is still known to the counter
//     or has a record (none is folded out before it is recorded);
//   - a transaction whose every call failed unavailable without
//     ambiguous_write has not landed, then or later;
//
// once the store recovers the first call on each ledger succeeds; finally
// every transaction not answered is retried on a third ledger, and the
// value counts each transaction not refused exactly once, once the
// ledgers that watch a copy or owe a record have read and written again.
//
// Seen to fail against group.go with the hold-back rule removed
// (windowOf(l.copts) made 1<<30: "folded out before it was recorded" and
// "counted once"), without the write of the pending write alone
// (`landed := true` made false: "the first call ... after the store
// recovered"), and with heldError returning err unchanged ("answered
// unavailable (not ambiguous) but landed").
//
// Replay: COUNTERKIT_SEED=<seed> go test ./ledger -run '^TestAdvHoldBackUnderAmbiguousPuts$'
// (calls sent two at once group as the scheduler lets them, so a replay
// may differ in those steps). Scale: COUNTERKIT_CASES=<n> (cases per
// configuration; 25 by default, 8 with -short).
func TestAdvHoldBackUnderAmbiguousPuts(t *testing.T) {
	seed := doubtSeed(t)
	t.Logf("seed %d; replay: COUNTERKIT_SEED=%d go test ./ledger -run '^TestAdvHoldBackUnderAmbiguousPuts$'", seed, seed)
	cases := shortCases(t, 25, 8)
	for _, two := range []bool{false, true} {
		for _, hf := range []int{1, 2} {
			for c := range cases {
				caseSeed := seed + int64(hf*1_000_003+c)
				if two {
					caseSeed += 7_000_001
				}
				t.Run(fmt.Sprintf("writers=%d/H=F=%d/case%d", 1+b2i(two), hf, c), func(t *testing.T) {
					holdBackCase(t, caseSeed, hf, 40, two)
				})
			}
		}
	}
}

func holdBackCase(t *testing.T, seed int64, hf, steps int, two bool) {
	ctx := context.Background()
	rf := &randomFaults{rng: rand.New(rand.NewSource(seed)), refuseRecord: 0.3,
		puts:  []weightedFault{{faulty.Lose, 0.25}, {faulty.LoseAck, 0.45}, {faulty.Hold, 0.55}, {faulty.Refuse, 0.65}},
		stale: 0.15, maxAge: 1}
	policy, setFaults, rng := rf.policy, rf.set, rf.rng
	mem := memory.NewSiblings()
	fs := faulty.NewSiblings(mem, faulty.Options{Policy: policy})
	copts := tpncounter.Options{HistoryLength: hf, FoldedLength: hf}
	mk := func(actor crdt.ActorID, group int) *ledger.Ledger {
		l, err := ledger.New(fs, advKey, ledger.Options{Actor: actor, RetryCount: 1, Backoff: ledger.Backoff{Initial: -1}, Counter: copts, MaxGroup: group})
		require.NoError(t, err)
		return l
	}
	ledgers := []*ledger.Ledger{mk("a", 2)}
	if two {
		ledgers = append(ledgers, mk("b", 2))
	}
	amounts := map[crdt.TxnID]int64{}
	answered := map[crdt.TxnID]bool{}
	unanswered := map[crdt.TxnID]bool{} // some call failed ambiguous_write, none answered
	refused := map[crdt.TxnID]bool{}    // every call failed unavailable without ambiguous_write
	seen := map[crdt.TxnID]bool{}       // held by the store at some check
	note := func(x crdt.TxnID, err error) {
		switch {
		case err == nil:
			answered[x] = true
			delete(unanswered, x)
			delete(refused, x)
		case answered[x]:
		case errors.Is(err, crdt.ErrAmbiguousWrite):
			unanswered[x] = true
			delete(refused, x)
		case errors.Is(err, crdt.ErrUnavailable):
			if !unanswered[x] {
				refused[x] = true
			}
		default:
			require.NoError(t, err, x)
		}
	}
	var next int
	newTxn := func() crdt.TxnID {
		next++
		x := crdt.TxnID(fmt.Sprintf("x%03d", next))
		amounts[x] = int64(next)
		if next%4 == 0 {
			amounts[x] = -1 // a debit
		}
		return x
	}
	amounts["open"] = 1_000_000
	setFaults(false)
	_, err := ledgers[0].Update(ctx, "open", amounts["open"])
	require.NoError(t, err)
	setFaults(true)
	check := func(step int) {
		st := stored(t, mem)
		for x := range amounts {
			known := st.Status(x) != tpncounter.Unknown
			_, rec := recordOf(t, mem, x)
			if known {
				seen[x] = true
			}
			if seen[x] {
				require.True(t, known || rec, "seed %d step %d: %s folded out before it was recorded", seed, step, x)
			}
			if refused[x] {
				require.False(t, known || rec, "seed %d step %d: %s answered unavailable (not ambiguous) but landed", seed, step, x)
			}
		}
	}
	for step := range steps {
		if rng.Intn(4) == 0 && fs.Held() > 0 {
			t.Logf("deliver %v", fs.HeldCalls()[0])
			require.NoError(t, fs.Deliver(0))
		}
		l := ledgers[rng.Intn(len(ledgers))]
		var xs []crdt.TxnID
		switch r := rng.Intn(6); {
		case r < 2:
			xs = []crdt.TxnID{newTxn(), newTxn()}
		case r == 2 && len(unanswered)+len(refused) > 0:
			// A caller retries a call that was not answered.
			pool := slices.Sorted(maps.Keys(unanswered))
			pool = append(pool, slices.Sorted(maps.Keys(refused))...)
			xs = []crdt.TxnID{pool[rng.Intn(len(pool))]}
		default:
			xs = []crdt.TxnID{newTxn()}
		}
		errs := make([]error, len(xs))
		var wg sync.WaitGroup
		for i, x := range xs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = l.Update(ctx, x, amounts[x])
			}()
		}
		wg.Wait()
		t.Logf("step %d %s %v: %v (held %d, pending %v)", step, l.Actor(), xs, errs, fs.Held(), l.Pending())
		for i, x := range xs {
			note(x, errs[i])
		}
		check(step)
	}
	// The store recovers; the held puts land (or are dropped, as drawn).
	setFaults(false)
	if rng.Intn(2) == 0 {
		require.NoError(t, fs.DeliverAll())
	} else {
		fs.DropHeld()
	}
	for _, l := range ledgers {
		x := newTxn()
		_, err = l.Update(ctx, x, amounts[x])
		require.NoError(t, err, "seed %d: the first call on %s after the store recovered", seed, l.Actor())
		note(x, err)
	}
	// A ledger settles the copy it watches, or a record it owes, only at
	// its next read or write (SPEC.md 6.11, Limits: "A ledger that never
	// reads or writes again ... leaves it counted"): the ledgers holding
	// one read and write again (Find) until a round in which none owes
	// anything and the stored state does not change (a watch may last
	// while the copies meet).
	for round := 0; ; round++ {
		before := stored(t, mem)
		busy := false
		for _, l := range ledgers {
			unwritten, watching := ledger.Holding(l)
			if unwritten || watching {
				busy = busy || unwritten
				_, err := l.Find(ctx)
				require.NoError(t, err, "seed %d: Find on %s", seed, l.Actor())
			}
		}
		if !busy && stored(t, mem).Equal(before) {
			break
		}
		require.Less(t, round, 8, "seed %d: ledgers still owe records or change the state after %d rounds", seed, round)
	}
	check(steps)
	// Every call not answered is made again elsewhere.
	r := mk("r", 1)
	for _, x := range slices.Sorted(maps.Keys(unanswered)) {
		res, err := r.Update(ctx, x, amounts[x])
		require.NoError(t, err, "seed %d: retry of %s", seed, x)
		require.Contains(t, []tpncounter.Outcome{tpncounter.Applied, tpncounter.Duplicate, tpncounter.DuplicateFolded}, res.Outcome)
	}
	check(steps + 1)
	var want int64
	for x, v := range amounts {
		if !refused[x] {
			want += v
		}
	}
	v, err := r.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, want, v, "seed %d: each transaction not refused counted once", seed)
}

// applied is one Apply of a scenario's state.
type applied struct {
	actor  crdt.ActorID
	txn    crdt.TxnID
	amount int64
}

// mergedOf applies each actor's steps to a counter of its own per half,
// in order (so its own compactions fold what it applied), and merges them
// in the order they first appear. One actor may so hold an id both ways.
func mergedOf(t *testing.T, opts tpncounter.Options, steps []applied) *tpncounter.Counter {
	t.Helper()
	type half struct {
		actor crdt.ActorID
		debit bool
	}
	per := map[half]*tpncounter.Counter{}
	var order []half
	for _, s := range steps {
		k := half{s.actor, s.amount < 0}
		c := per[k]
		if c == nil {
			var err error
			c, err = tpncounter.New(opts)
			require.NoError(t, err)
			per[k] = c
			order = append(order, k)
		}
		_, err := c.Apply(s.actor, s.txn, s.amount)
		require.NoError(t, err, "%v", s)
	}
	out, err := tpncounter.New(opts)
	require.NoError(t, err)
	for _, a := range order {
		require.NoError(t, out.Merge(per[a]))
	}
	return out
}

// fillers are n credits of 1 by actor, prefix-numbered.
func fillers(actor crdt.ActorID, prefix string, n int) []applied {
	out := make([]applied, n)
	for i := range out {
		out[i] = applied{actor, crdt.TxnID(fmt.Sprintf("%s%d", prefix, i)), 1}
	}
	return out
}

// TestAdvRetireCopyThatDoesNotCount checks SPEC.md 6.10's exception on the
// counter (History and Folded length 2): writer "a" (the smallest id) has
// folded x; idle actors hold copies of x that do not count. Each case
// names who is retired and whether it must be; a retirement never changes
// the value, merging the state from before it (a late Put of the idle
// actors' entries) counts x once, and the owner, writing on, then forgets
// x while it still counts once. An id held both ways (by the idle actor
// alone, or as its debit of the owner's credit) is never retired.
//
// Seen to fail against tpncounter/retire.go with the exception removed
// (`if owns || rec.nfold == 0` made `if true`: "m declined"), with the
// exception extended to the owner's folded copy (`if owns ||` dropped:
// "a retired while its copy of x counts for others"), and with
// a folded copy that does not count kept in the retired total (the
// total.Sub line removed: "retiring m changed the value").
func TestAdvRetireCopyThatDoesNotCount(t *testing.T) {
	opts := tpncounter.Options{HistoryLength: 2, FoldedLength: 2}
	ownerFolds := append([]applied{{"a", "x", 5}}, fillers("a", "a", 3)...)
	for _, tc := range []struct {
		name    string
		steps   []applied
		retire  []crdt.ActorID
		retired bool
	}{
		{"an idle copy in a history", append(slices.Clone(ownerFolds), applied{"m", "x", 5}, applied{"m", "u", 7}),
			[]crdt.ActorID{"m"}, true},
		{"an idle copy folded too", append(slices.Clone(ownerFolds), append([]applied{{"m", "x", 5}}, fillers("m", "m", 3)...)...),
			[]crdt.ActorID{"m"}, true},
		{"three holders, both idle ones retire", append(slices.Clone(ownerFolds), applied{"m", "x", 5}, applied{"n", "x", 5}, applied{"n", "v", 9}),
			[]crdt.ActorID{"m", "n"}, true},
		{"the folded owner is idle, others hold x", append(slices.Clone(ownerFolds), applied{"m", "x", 5}, applied{"n", "x", 5}),
			[]crdt.ActorID{"a"}, false},
		{"the idle actor holds x as a credit and a debit", append(slices.Clone(ownerFolds), applied{"m", "x", 5}, applied{"m", "x", -5}),
			[]crdt.ActorID{"m"}, false},
		{"the idle actor holds x as a debit, the owner folded it as a credit", append(slices.Clone(ownerFolds), applied{"m", "x", -5}),
			[]crdt.ActorID{"m"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mergedOf(t, opts, tc.steps)
			before := c.Clone()
			if tc.name != "the folded owner is idle, others hold x" {
				require.Equal(t, tpncounter.DuplicateFolded, statusOutcome(t, c, "x", 5), "a has folded x")
			}
			value := c.Value()
			for _, actor := range tc.retire {
				ok, err := c.Retire(actor)
				require.NoError(t, err)
				if !tc.retired {
					require.False(t, ok, "%s retired while its copy of x counts for others", actor)
					continue
				}
				require.True(t, ok, "%s declined", actor)
				require.Empty(t, liveOf(c, []crdt.ActorID{actor}))
				require.Equal(t, value, c.Value(), "retiring %s changed the value", actor)
			}
			require.Equal(t, value, c.Value())
			// A late merge of the state from before the retirement.
			require.NoError(t, c.Merge(before))
			require.Equal(t, value, c.Value(), "merging the earlier state")
			if !tc.retired {
				return
			}
			// The owner writes on until it forgets x (nobody else holds
			// it now); x still counts once.
			out := c.Clone()
			for i := range 8 {
				_, err := out.Apply("a", crdt.TxnID(fmt.Sprintf("z%d", i)), 1)
				require.NoError(t, err)
			}
			require.Equal(t, tpncounter.Status(tpncounter.Unknown), out.Status("x"), "a forgot x")
			require.Equal(t, value+8, out.Value())
			require.NoError(t, out.Merge(before))
			require.Equal(t, value+8, out.Value(), "merging the state from before the retirement after x was forgotten")
		})
	}
}

// statusOutcome is Known's outcome for txn and amount in c.
func statusOutcome(t *testing.T, c *tpncounter.Counter, txn crdt.TxnID, amount int64) tpncounter.Outcome {
	t.Helper()
	out, _, err := c.Known(txn, amount)
	require.NoError(t, err)
	return out
}

// TestAdvIdleWriterWhoseCopyDoesNotCountRetires plays SPEC.md 6.10's
// exception through ledgers (default History and Folded length, 10/10):
// incarnation m's write of u and x is held in flight (both calls answered
// ambiguous_write); the caller retries x on ledger a, whose writer has the
// smaller id, and a folds x; then m's puts land and m never calls again.
// Its copy of x does not count. Writer a, still holding x, retires m once
// m is idle for RetireAfter; the value does not change; retries of x and u
// on a, on another ledger, on a new incarnation of m and on a Book are
// duplicates; a writes on until it forgets x, and both are still
// recognised from their records; stale siblings from before the
// retirement (m's live entry, a's older entry) count nothing twice.
//
// Seen to fail against tpncounter/retire.go with the exception removed
// (`if owns || rec.nfold == 0` made `if true`: "m is retired"), and
// against ledger.go's retirePass writing no records before retiring
// (`s.recorded = l.recordRetiring(...)` made `s.recorded = true`: the
// retry of u "counted again").
func TestAdvIdleWriterWhoseCopyDoesNotCountRetires(t *testing.T) {
	ctx := context.Background()
	plan := &doubtPlan{}
	mem := memory.NewSiblings()
	fs := faulty.NewSiblings(mem, faulty.Options{Policy: plan.policy})
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	a := advLedger(t, fs, clock, "a", time.Hour)
	m := advLedger(t, fs, clock, "m", -1)
	amounts := map[crdt.TxnID]int64{"open": 1000, "u": 7, "x": 5}
	credit := func(l *ledger.Ledger, x crdt.TxnID, amount int64) {
		t.Helper()
		amounts[x] = amount
		res, err := l.Update(ctx, x, amount)
		require.NoError(t, err, x)
		require.Equal(t, tpncounter.Applied, res.Outcome, x)
	}
	credit(a, "open", 1000)
	// m's two calls: every put held in flight.
	plan.set(repeat(faulty.Hold, 4), nil, nil)
	for _, x := range []crdt.TxnID{"u", "x"} {
		_, err := m.Update(ctx, x, amounts[x])
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, x)
	}
	plan.set(nil, nil, nil)
	credit(a, "x", 5) // the caller's retry of x elsewhere
	for i := range 12 {
		credit(a, crdt.TxnID(fmt.Sprintf("a%d", i)), 1)
	}
	require.NoError(t, fs.DeliverAll()) // m's puts land late
	var want int64
	sum := func() int64 {
		want = 0
		for _, v := range amounts {
			want += v
		}
		return want
	}
	before := stored(t, mem)
	require.Equal(t, sum(), before.Value(), "x counted once after m's late puts")
	owner, ok := before.Owner("x")
	require.True(t, ok)
	require.Equal(t, a.Writer(), owner.Actor, "a's copy counts")
	require.True(t, owner.Folded, "a has folded x")
	require.Equal(t, []crdt.ActorID{m.Writer()}, liveOf(before, []crdt.ActorID{m.Writer()}))
	staleSibs, _, err := mem.Fetch(ctx, advKey)
	require.NoError(t, err)

	// a's next pass sees m (not dated by x's record, which names a), and
	// a pass an hour on retires it.
	credit(a, "b0", 1)
	clock.Add(2 * time.Hour)
	credit(a, "b1", 1)
	clock.Add(2 * time.Hour)
	credit(a, "b2", 1)
	after := stored(t, mem)
	require.Empty(t, liveOf(after, []crdt.ActorID{m.Writer()}), "m is retired")
	require.Equal(t, sum(), after.Value(), "retiring m changed the value")

	book, err := ledger.NewBook(fs, ledger.BookOptions{Options: ledger.Options{Actor: "c", RetireAfter: -1, Clock: clock.Now}})
	require.NoError(t, err)
	retry := func(when string) {
		t.Helper()
		for i, l := range []*ledger.Ledger{a, advLedger(t, fs, clock, "b", -1), advLedger(t, fs, clock, "m", -1)} {
			for _, x := range []crdt.TxnID{"x", "u"} {
				res, err := l.Update(ctx, x, amounts[x])
				require.NoError(t, err)
				require.True(t, isRecognised(res.Outcome), "%s: retry %d of %s counted again: %v", when, i, x, res.Outcome)
			}
		}
		for _, x := range []crdt.TxnID{"x", "u"} {
			res, err := book.Update(ctx, advKey, x, amounts[x])
			require.NoError(t, err)
			require.True(t, isRecognised(res.Outcome), "%s: Book retry of %s counted again: %v", when, x, res.Outcome)
		}
		v, err := a.Value(ctx)
		require.NoError(t, err)
		require.Equal(t, sum(), v, when)
	}
	retry("after the retirement")

	// a writes on until it forgets x.
	for i := range 25 {
		credit(a, crdt.TxnID(fmt.Sprintf("c%d", i)), 1)
	}
	require.Equal(t, tpncounter.Status(tpncounter.Unknown), stored(t, mem).Status("x"), "a forgot x")
	retry("after a forgot x")

	// Stale siblings from before the retirement are put back.
	for _, b := range staleSibs {
		require.NoError(t, mem.Put(ctx, advKey, "stale", b, nil))
	}
	require.Equal(t, sum(), stored(t, mem).Value(), "stale siblings merged")
	retry("after stale siblings")
	credit(a, "d0", 1)
	require.Equal(t, sum(), stored(t, mem).Value(), "a's write over the stale siblings")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestAdvLateOwnCopyIsTakenBack: ledger a's call of x is in doubt, its
// first put held in flight and its second lost; the caller retries x on
// b, which applies and records it, and folds and forgets it (History and
// Folded length 1). Then a's held put lands, carrying a's copy of x: x
// counts twice. a reads (Find) and writes again: x counts once, since a
// confirms the record it owes for x before writing it (SPEC.md 6.11 step
// 3): the record names b, whose entry is past it without x.
//
// Seen to fail before that rule: the value stayed 204 (x twice) for good.
// Step 4 looks only at pending transactions "that fetched does not know",
// and fetched knows x through a's own late put.
func TestAdvLateOwnCopyIsTakenBack(t *testing.T) {
	ctx := context.Background()
	plan, mem, fs, a, b := doubtPair(t)
	plan.set([]faulty.Fault{faulty.Hold, faulty.Lose}, nil, nil)
	_, err := a.Update(ctx, "x", 100)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	plan.set(nil, nil, nil)
	_, err = b.Update(ctx, "x", 100) // the caller's retry elsewhere
	require.NoError(t, err)
	for _, y := range []crdt.TxnID{"y1", "y2", "y3"} {
		_, err = b.Update(ctx, y, 1)
		require.NoError(t, err)
	}
	require.Equal(t, tpncounter.Status(tpncounter.Unknown), stored(t, mem).Status("x"), "b forgot x")
	require.NoError(t, fs.DeliverAll()) // a's first put lands late
	_, err = a.Find(ctx)
	require.NoError(t, err)
	_, err = a.Update(ctx, "z", 1)
	require.NoError(t, err)
	res, err := b.Update(ctx, "x", 100)
	require.NoError(t, err)
	require.True(t, isRecognised(res.Outcome), "retry of x: %v", res.Outcome)
	require.Equal(t, int64(100+3+1), stored(t, mem).Value(), "x counted once after a read and a write of a")
}

// TestAdvRestartWithAWriteInDoubt: incarnation a1's call of t0 is in
// doubt (both puts held in flight) when its process stops; a new Ledger of
// the same actor, a2, makes more than H + F credits (default 10/10), and
// a1's puts land before, amid or after them, or never. a2 then retires a1
// once it is idle for RetireAfter, writes on past H + F again, and t0 is
// retried on a2, another ledger, yet another incarnation and a Book: a
// duplicate when a1's put landed, applied once when it never did, and
// counted once either way.
//
// Seen to fail against ledger.go's retirePass writing no records before
// retiring (`s.recorded = l.recordRetiring(...)` made `s.recorded =
// true`: "t0 counted again" in every case where the put landed).
func TestAdvRestartWithAWriteInDoubt(t *testing.T) {
	ctx := context.Background()
	const n = 25 // > H + F
	for _, deliverAt := range []int{0, n / 2, n, -1} {
		name := fmt.Sprintf("delivered after %d credits", deliverAt)
		if deliverAt < 0 {
			name = "never delivered"
		}
		t.Run(name, func(t *testing.T) {
			plan := &doubtPlan{}
			mem := memory.NewSiblings()
			fs := faulty.NewSiblings(mem, faulty.Options{Policy: plan.policy})
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			a1 := advLedger(t, fs, clock, "a", time.Hour)
			_, err := a1.Update(ctx, "open", 1000)
			require.NoError(t, err)
			plan.set(repeat(faulty.Hold, 2), nil, nil)
			_, err = a1.Update(ctx, "t0", 100)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			plan.set(nil, nil, nil)
			old := a1.Writer() // a1's process stops here
			a2 := advLedger(t, fs, clock, "a", time.Hour)
			want := int64(1000)
			for i := 0; i <= n; i++ {
				if i == deliverAt {
					require.NoError(t, fs.DeliverAll())
					want += 100
				}
				if i == n {
					break
				}
				_, err := a2.Update(ctx, crdt.TxnID(fmt.Sprintf("c%d", i)), 1)
				require.NoError(t, err)
				want++
			}
			if deliverAt < 0 {
				require.Equal(t, 2, fs.DropHeld(), "a1's two puts never land")
			}
			for i := range n {
				if i == 0 || i == n/2 {
					// a2 dates a change it sees when a pass is due: two
					// hours, twice, cover a late landing it has not dated.
					clock.Add(2 * time.Hour)
				}
				_, err := a2.Update(ctx, crdt.TxnID(fmt.Sprintf("d%d", i)), 1)
				require.NoError(t, err)
				want++
			}
			require.Empty(t, liveOf(stored(t, mem), []crdt.ActorID{old}), "a1 is retired")
			require.Equal(t, want, stored(t, mem).Value())
			book, err := ledger.NewBook(fs, ledger.BookOptions{Options: ledger.Options{Actor: "c", RetireAfter: -1, Clock: clock.Now}})
			require.NoError(t, err)
			outs := []tpncounter.Outcome{}
			for _, l := range []*ledger.Ledger{a2, advLedger(t, fs, clock, "b", -1), advLedger(t, fs, clock, "a", -1)} {
				res, err := l.Update(ctx, "t0", 100)
				require.NoError(t, err)
				outs = append(outs, res.Outcome)
			}
			res, err := book.Update(ctx, advKey, "t0", 100)
			require.NoError(t, err)
			outs = append(outs, res.Outcome)
			for i, o := range outs {
				if deliverAt < 0 && i == 0 {
					require.Equal(t, tpncounter.Applied, o, "t0 never landed: the first retry applies it")
					continue
				}
				require.True(t, isRecognised(o), "retry %d: t0 counted again: %v", i, o)
			}
			if deliverAt < 0 {
				want += 100
			}
			require.Equal(t, want, stored(t, mem).Value(), "t0 counted once")
		})
	}
}

// TestAdvInFlightPutOfARetiredWriter: as in
// TestAdvIdleWriterWhoseCopyDoesNotCountRetires, m's four puts (two calls,
// u and x, two attempts each) are held in flight and a folds x; here all
// but one of them land, m is retired by a, a writes on until it has
// forgotten x, and then the last put lands. SPEC.md 6.10: an actor "whose
// write was still in flight is counted once". Each of the four puts is the
// late one in turn; the value counts x and u once throughout.
//
// Seen to fail against tpncounter/ring.go's compareEntries letting a live
// entry win over the retirement of its own seq (the `if a.retired` branch
// returning -1: when the late put is one of the second call's, m's copy
// of x comes back and counts twice).
func TestAdvInFlightPutOfARetiredWriter(t *testing.T) {
	for late := range 4 {
		t.Run(fmt.Sprint("put ", late, " lands last"), func(t *testing.T) {
			ctx := context.Background()
			plan := &doubtPlan{}
			mem := memory.NewSiblings()
			fs := faulty.NewSiblings(mem, faulty.Options{Policy: plan.policy})
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			a := advLedger(t, fs, clock, "a", time.Hour)
			m := advLedger(t, fs, clock, "m", -1)
			want := int64(1000 + 7 + 5)
			_, err := a.Update(ctx, "open", 1000)
			require.NoError(t, err)
			plan.set(repeat(faulty.Hold, 4), nil, nil)
			for _, c := range []struct {
				x      crdt.TxnID
				amount int64
			}{{"u", 7}, {"x", 5}} {
				_, err := m.Update(ctx, c.x, c.amount)
				require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, c.x)
			}
			plan.set(nil, nil, nil)
			require.Equal(t, 4, fs.Held())
			_, err = a.Update(ctx, "x", 5)
			require.NoError(t, err)
			credit := func(prefix string, n int, step func(i int)) {
				for i := range n {
					if step != nil {
						step(i)
					}
					_, err := a.Update(ctx, crdt.TxnID(fmt.Sprintf("%s%d", prefix, i)), 1)
					require.NoError(t, err)
					want++
				}
			}
			credit("a", 12, nil)
			// All but put number late land.
			for range late {
				require.NoError(t, fs.Deliver(0))
			}
			for fs.Held() > 1 {
				require.NoError(t, fs.Deliver(1))
			}
			credit("b", 30, func(i int) {
				if i == 0 || i == 10 {
					clock.Add(2 * time.Hour)
				}
			})
			st := stored(t, mem)
			require.Empty(t, liveOf(st, []crdt.ActorID{m.Writer()}), "m is retired")
			require.Equal(t, tpncounter.Status(tpncounter.Unknown), st.Status("x"), "a forgot x")
			require.Equal(t, want, st.Value())
			require.NoError(t, fs.DeliverAll()) // the last put of m lands
			require.Equal(t, want, stored(t, mem).Value(), "after m's late put")
			credit("c", 1, nil)
			require.Equal(t, want, stored(t, mem).Value(), "after a's next write")
			for _, x := range []crdt.TxnID{"x", "u"} {
				res, err := advLedger(t, fs, clock, "b", -1).Update(ctx, x, map[crdt.TxnID]int64{"x": 5, "u": 7}[x])
				require.NoError(t, err)
				require.True(t, isRecognised(res.Outcome), "retry of %s counted again: %v", x, res.Outcome)
			}
		})
	}
}

// TestAdvOtherSignOfAWriteInDoubt: a's credit of x (5) is in doubt (its
// put landed, the acknowledgement was lost); the caller then sends x as a
// debit (−5) to b, at once and after a has folded and forgotten x (History
// and Folded length 1): both are conflicting_transaction, nothing is
// applied, and the credit retried is a duplicate.
//
// Seen to fail against owe (ledger.go) writing no record: the later debit
// is applied.
func TestAdvOtherSignOfAWriteInDoubt(t *testing.T) {
	ctx := context.Background()
	plan, mem, _, a, b := doubtPair(t)
	_, err := a.Update(ctx, "open", 1000)
	require.NoError(t, err)
	plan.set([]faulty.Fault{faulty.Refuse, faulty.LoseAck}, nil, nil)
	_, err = a.Update(ctx, "x", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	plan.set(nil, nil, nil)
	_, err = b.Update(ctx, "x", -5)
	require.ErrorIs(t, err, crdt.ErrConflictingTransaction, "at once")
	for i := range 6 {
		_, err := a.Update(ctx, crdt.TxnID(fmt.Sprint("y", i)), 1)
		require.NoError(t, err)
	}
	require.Equal(t, tpncounter.Status(tpncounter.Unknown), stored(t, mem).Status("x"), "a forgot x")
	_, err = b.Update(ctx, "x", -5)
	require.ErrorIs(t, err, crdt.ErrConflictingTransaction, "after a forgot x")
	res, err := b.Update(ctx, "x", 5)
	require.NoError(t, err)
	require.True(t, isRecognised(res.Outcome), "the credit retried: %v", res.Outcome)
	require.Equal(t, int64(1000+5+6), stored(t, mem).Value())
}

// doubtPair returns two ledgers, a and b, on one account (History and
// Folded length 1, one retry, groups of one) over a store whose faults
// plan scripts, with that store and the one beneath its faults.
func doubtPair(t *testing.T) (*doubtPlan, *memory.Siblings, *faulty.Siblings, *ledger.Ledger, *ledger.Ledger) {
	t.Helper()
	plan := &doubtPlan{}
	mem := memory.NewSiblings()
	fs := faulty.NewSiblings(mem, faulty.Options{Policy: plan.policy})
	copts := tpncounter.Options{HistoryLength: 1, FoldedLength: 1}
	mk := func(actor crdt.ActorID) *ledger.Ledger {
		l, err := ledger.New(fs, advKey, ledger.Options{Actor: actor, RetryCount: 1, Backoff: ledger.Backoff{Initial: -1}, Counter: copts, MaxGroup: 1})
		require.NoError(t, err)
		return l
	}
	return plan, mem, fs, mk("a"), mk("b")
}

// randomFaults is the seeded fault policy of the adversarial random runs,
// safe for concurrent calls: a record Put is refused with probability
// refuseRecord; an account Put draws its fault from puts (cumulative
// probabilities); an account Fetch is stale with probability stale, 1 to
// maxAge states back. Record Fetches are never stale (SPEC.md 6.11,
// "Reads of records"). set(false) turns every fault off. The runs draw
// their own choices from the same generator (intn), so that a seed
// replays a run.
type randomFaults struct {
	mu           sync.Mutex
	rng          *rand.Rand
	off          bool
	refuseRecord float64
	puts         []weightedFault
	stale        float64
	maxAge       int

	// Record Puts draw from their own stream per key (recordDraw): a
	// ledger puts several records at once, and their order must not
	// change which one is refused.
	recordSeed uint64
	recordPuts map[string]uint64
}

type weightedFault struct {
	f faulty.Fault
	p float64
}

func (r *randomFaults) policy(c faulty.Call) faulty.Fault {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.off {
		return faulty.Pass
	}
	x := r.rng.Float64()
	switch {
	case c.Method == faulty.MethodPut && ledger.IsRecordKey(c.Key):
		if r.recordDraw(c.Key) < r.refuseRecord {
			return faulty.Refuse
		}
	case c.Method == faulty.MethodPut:
		for _, w := range r.puts {
			if x < w.p {
				return w.f
			}
		}
	case c.Method == faulty.MethodFetch && !ledger.IsRecordKey(c.Key):
		if x < r.stale {
			if r.maxAge <= 1 {
				return faulty.Stale
			}
			return faulty.StaleBy(1 + r.rng.Intn(r.maxAge))
		}
	}
	return faulty.Pass
}

// recordDraw is a number in [0, 1) for the next Put of the record key,
// drawn from the seed, the key and its count of Puts alone; r.mu is held.
func (r *randomFaults) recordDraw(key string) float64 {
	if r.recordPuts == nil {
		r.recordSeed, r.recordPuts = r.rng.Uint64(), map[string]uint64{}
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d %s %d", r.recordSeed, key, r.recordPuts[key])
	r.recordPuts[key]++
	z := h.Sum64() // mixed (splitmix64's finalizer): FNV's top bits barely follow the last bytes
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

func (r *randomFaults) set(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.off = !on
}

func (r *randomFaults) intn(n int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rng.Intn(n)
}

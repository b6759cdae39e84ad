package ledger_test

// Adversarial scenarios for two ledger rules of SPEC.md 6.11: the judge of
// a record naming another writer's copy (step 6, a give-up record, and
// step 3, a record owed for a write in doubt: fetched and judged against
// the live records first, naming the writer that counted the transaction
// or landed it first and holds it), and a Book keeping open an idle
// ledger that owes a record or watches a copy ("Watching."), with
// LandPending running Find again while one is owed. They are written from
// the promise of 6.11 ("The window, stated once" and its Limits): a
// transaction delivered to several ledgers at once, or retried on another
// while a put is in doubt, counts exactly once once every ledger has read
// and written again; retries are recognised; no call hangs; no ledger
// fails for ever once reads are fresh; an Update never answers applied for
// a copy that is then taken out. Record reads are fresh throughout (stale
// record reads are outside the promise).
//
// Each test names, in its comment, the broken variants of the production
// code it was seen to fail against.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// bookPlan is one scenario of TestAdvJudgeBookEvictsEverywhere: L0 is a
// Book's Ledger of advKey (MaxOpen 1; every operation on advKey is followed
// by one on another key, which drops advKey's Ledger unless the Book keeps
// it); L1 is a Ledger of its own. L0's call of x is slow (its put lands,
// and is acknowledged, before L1's store call number land) or in doubt
// (held then lost, or refused then held; the held put lands there). L1
// applies x and writes on past H + F. L0 reads (a Book operation of kind
// read; "land" is LandPending) at boundary readAt, and again after L1's
// calls; then both write twice. With refuse, the first record put of L0
// from that read on is refused.
type bookPlan struct {
	names        []crdt.ActorID // L0 (the Book's), L1
	hf           int            // 0: the defaults
	doubt        int            // as watchPlan.doubt
	land, readAt int
	read         string // "update", "find", "value", "has" or "land"
	refuse       bool   // the first record put of L0 from the read at readAt on is refused
}

func (p bookPlan) String() string {
	return fmt.Sprintf("names=%v H=F=%d %s land=%d readAt=%d read=%s refuse=%v", p.names, p.hf, watchKinds[p.doubt], p.land, p.readAt, p.read, p.refuse)
}

var bookReads = []string{"update", "find", "land", "value", "has"}

// runBookPlan plays p and, with check, checks the promise: no call hangs;
// L0's reads fail, if at all, only unavailable or ambiguous_write after a
// refused record put, and its writes succeed within four tries;
// LandPending, when it succeeds, leaves advKey's Ledger with no pending
// write and no owed record (BookHolding); x counts once once both ledgers
// have written twice; a retry of x on the Book, on L1 and on a new ledger
// is recognised. It returns the number of boundaries of L1's store calls.
func runBookPlan(t *testing.T, p bookPlan, check bool) int {
	const x, amount = crdt.TxnID("x"), int64(100)
	copts := tpncounter.Options{HistoryLength: p.hf, FoldedLength: p.hf}
	h, f := p.hf, p.hf
	if p.hf == 0 {
		h, f = 10, 10
	}
	what := p.String()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	opts := func(actor crdt.ActorID) ledger.Options {
		return ledger.Options{Actor: actor, RetryCount: 1, Backoff: ledger.Backoff{Initial: -1}, Counter: copts, MaxGroup: 1, RetireAfter: -1, Clock: clock.Now}
	}
	ln0, ln1 := newLane(mem), newLane(mem)
	if os.Getenv("COUNTERKIT_JUDGE_TRACE") != "" {
		ln0.trace = func(format string, args ...any) { t.Logf("%s: %s", p.names[0], fmt.Sprintf(format, args...)) }
		ln1.trace = func(format string, args ...any) { t.Logf("%s: %s", p.names[1], fmt.Sprintf(format, args...)) }
	}
	book, err := ledger.NewBook(ln0, ledger.BookOptions{MaxOpen: 1, Options: opts(p.names[0])})
	require.NoError(t, err)
	l1, err := ledger.New(ln1, advKey, opts(p.names[1]))
	require.NoError(t, err)
	var want int64
	unanswered := map[crdt.TxnID]bool{}
	others := 0
	// evict runs a write on another key: with MaxOpen 1 it drops advKey's
	// Ledger unless the Book keeps it.
	evict := func() {
		others++
		_, err := book.Credit(context.Background(), "other", crdt.TxnID(fmt.Sprint("o", others)), 1)
		if !p.refuse || !errors.Is(err, crdt.ErrAmbiguousWrite) { // its record put may take the refusal
			require.NoError(t, err, "%s: a write on another key", what)
		}
	}
	tolerated := func(err error) bool {
		return p.refuse && (errors.Is(err, crdt.ErrUnavailable) || errors.Is(err, crdt.ErrAmbiguousWrite))
	}
	// onBook runs one Book operation of kind on advKey, then evict.
	onBook := func(kind string, z crdt.TxnID) error {
		defer evict()
		ctx, cancel := context.WithTimeout(context.Background(), settleCallTimeout)
		defer cancel()
		switch kind {
		case "update":
			r, err := book.Credit(ctx, advKey, z, 1)
			switch {
			case err != nil:
				unanswered[z] = true // retried below
			case r.Outcome == tpncounter.Applied || unanswered[z]:
				want++ // counted once, by this call or the one it retries
				delete(unanswered, z)
			}
			return err
		case "find":
			_, err := book.Find(ctx, advKey)
			return err
		case "land":
			err := book.LandPending(ctx)
			if unwritten, _ := ledger.BookHolding(book, advKey); err == nil && unwritten {
				t.Errorf("%s: LandPending succeeded and left a pending write or an owed record", what)
			}
			return err
		case "value":
			_, err := book.Value(ctx, advKey)
			return err
		case "has":
			_, err := book.HasTransaction(ctx, advKey, x)
			return err
		}
		panic(kind)
	}
	credit1 := func(z crdt.TxnID, n int64) {
		r, err := l1.Credit(context.Background(), z, n)
		require.NoError(t, err, "%s: L1: %s", what, z)
		require.Equal(t, tpncounter.Applied, r.Outcome, "%s: L1: %s", what, z)
		want += n
	}
	require.NoError(t, onBook("update", "open-0"))
	credit1("open-1", 1000)
	b := &boundaries{}
	if p.doubt > 0 {
		faults := []faulty.Fault{faulty.Hold, faulty.Lose}
		if p.doubt == 2 {
			faults = []faulty.Fault{faulty.Refuse, faulty.Hold}
		}
		ln0.plan.set(faults, nil, nil)
		_, err := book.Update(context.Background(), advKey, x, amount)
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, what)
		evict()
		b.events = append(b.events, settleEvent{p.land, "land", func() {
			if err := ln0.DeliverAll(); err != nil {
				t.Errorf("%s: delivering L0's put: %v", what, err)
			}
		}})
	} else {
		g := ln0.slowNext(newSlowPut())
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), settleCallTimeout)
			defer cancel()
			_, err := book.Update(ctx, advKey, x, amount)
			done <- err
		}()
		select {
		case <-g.held:
		case <-time.After(settleCallTimeout):
			t.Fatalf("%s: L0 never put", what)
		}
		b.events = append(b.events, settleEvent{p.land, "land", func() {
			close(g.land)
			<-g.landed
			close(g.ack)
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s: L0's slow call of x: %v", what, err)
				}
			case <-time.After(2 * settleCallTimeout):
				t.Errorf("%s: L0's slow call of x hangs", what)
			}
			evict()
		}})
	}
	if p.readAt < 1<<20 {
		b.events = append(b.events, settleEvent{p.readAt, "read", func() {
			if p.refuse {
				ln0.plan.set(nil, nil, []faulty.Fault{faulty.Refuse})
			}
			if err := onBook(p.read, "z-mid"); err != nil && !tolerated(err) {
				t.Errorf("%s: L0's %s amid L1's calls: %v", what, p.read, err)
			}
		}})
	}
	slices.SortStableFunc(b.events, func(a, c settleEvent) int { return a.at - c.at })
	ln1.before = func(method, key string) { b.tick(1, method, key) }
	r, err := l1.Update(context.Background(), x, amount)
	require.NoError(t, err, "%s: L1's call of x", what)
	require.Contains(t, []tpncounter.Outcome{tpncounter.Applied, tpncounter.Duplicate}, r.Outcome, "%s: L1's call of x", what)
	want += amount // x counts once
	for i := range h + f + 2 {
		credit1(crdt.TxnID(fmt.Sprintf("y%02d", i)), 1)
	}
	ln1.before = nil
	n := b.finish()
	if !check {
		return n
	}
	for try := 0; ; try++ {
		err := onBook(p.read, "z-post")
		if err == nil {
			break
		}
		require.True(t, try == 0 && tolerated(err), "%s: L0's %s after L1's calls (try %d): %v", what, p.read, try, err)
	}
	for round := range 2 {
		var err error
		for try := 0; try < 4; try++ {
			if err = onBook("update", crdt.TxnID(fmt.Sprint("e", round, "-0"))); err == nil {
				break
			}
			require.True(t, errors.Is(err, crdt.ErrUnavailable) || errors.Is(err, crdt.ErrAmbiguousWrite), "%s: %v", what, err)
		}
		require.NoError(t, err, "%s: L0 fails for ever", what)
		credit1(crdt.TxnID(fmt.Sprint("e", round, "-1")), 1)
	}
	for _, z := range slices.Sorted(maps.Keys(unanswered)) {
		r, err := book.Credit(context.Background(), advKey, z, 1)
		require.NoError(t, err, "%s: L0's retry of %s", what, z)
		require.Contains(t, []tpncounter.Outcome{tpncounter.Applied, tpncounter.Duplicate}, r.Outcome, "%s: L0's retry of %s", what, z)
		want++ // counted once, by this retry or the call it retries
	}
	require.Equal(t, want, stored(t, mem).Value(), "%s: x counted once (a difference of %d: counted twice or never)", what, amount)
	fresh, err := ledger.New(mem, advKey, ledger.Options{Actor: "z", Counter: copts, RetireAfter: -1, Clock: clock.Now})
	require.NoError(t, err)
	retries := []func() (ledger.Result, error){
		func() (ledger.Result, error) {
			r, err := book.Update(context.Background(), advKey, x, amount)
			return r.Result, err
		},
		func() (ledger.Result, error) { return l1.Update(context.Background(), x, amount) },
		func() (ledger.Result, error) { return fresh.Update(context.Background(), x, amount) },
	}
	for i, retry := range retries {
		r, err := retry()
		require.NoError(t, err, "%s: retry %d of x", what, i)
		require.True(t, isRecognised(r.Outcome), "%s: retry %d of x applied again: %v", what, i, r.Outcome)
	}
	require.Equal(t, want, stored(t, mem).Value(), "%s: after the retries", what)
	return n
}

var threeOrders = [][]crdt.ActorID{{"a", "b", "c"}, {"a", "c", "b"}, {"b", "a", "c"}, {"b", "c", "a"}, {"c", "a", "b"}, {"c", "b", "a"}}

// TestAdvJudgeThreeLedgersReadBetween: x is delivered to three ledgers at
// once, or retried on two others while L0's call is in doubt (runWatchPlan:
// L2's put slow; L0's slow, held then lost, or refused then held; L1
// applies x and writes on past H + F, H=F=1). Unlike
// TestAdvWatchThreeLedgers, L0 reads amid L1's calls, at the later of the
// two landings or one boundary after, its account fetch fresh or stale
// (two states back), so that L0 learns its write in doubt landed next to
// L2's copy (the record it owes names L2, and is judged against a state
// that may be older than L1's record), or gives its copy up to L2's or
// L1's while L1 has not yet given its own up. L0's landing runs over every
// boundary of L1's calls, L2's over every sixth (-short samples one
// scenario in eight of these; in the order L0=b, L1=c, L2=a also
// each of the last ten, L1's forgetting cycle; every one, fresh and stale,
// with COUNTERKIT_CASES), the read kind in turn. The checks of
// TestAdvWatchLateCopy: no call hangs, a read fails only unavailable after
// a stale fetch and succeeds at once after, x counts once, retries are
// recognised everywhere, no ledger that answered applied takes its copy
// out, and Value and Find succeed on every ledger.
//
// About 2,800 scenarios, 4 s of CPU (every third landing of L2's: 4,600,
// 7.5 s).
//
// Seen to fail against each of these broken variants, one at a time:
//   - the judge off (index.go record's `case p.judge != nil &&
//     p.rec.Writer != l.writer:` made `case false:`): x counted twice,
//     3210 for 3110 (L0=b, L1=c, L2=a, L0 held then lost, land=16
//     land2=17, a stale Find at 18; with COUNTERKIT_CASES also L0=c);
//   - the watch off (index.go settle, `if v == meet {` made `if false &&
//     v == meet {`): x counted twice, 3210 for 3110;
//   - the judge renaming a met copy's record too (see
//     TestAdvJudgeGiveUpToAWriterGivingUp): x counted zero times.
//
// It passes against an owed record judged stale failing as a give-up does
// (`if !recs[i].confirm {` made `if true || ...`;
// TestFlushWritesAStaleJudgedRecord catches it).
func TestAdvJudgeThreeLedgersReadBetween(t *testing.T) {
	all := envCases(t, 0) > 0
	every := 6 // every third: 4,600 scenarios, 7.5 s of CPU
	for _, names := range threeOrders {
		// In one order, every landing of L2's in L1's forgetting cycle.
		cycle := string(names[0]+names[1]+names[2]) == "bca"
		for doubt, kind := range watchKinds {
			t.Run(fmt.Sprintf("L0=%s,L1=%s,L2=%s/L0-%s", names[0], names[1], names[2], kind), func(t *testing.T) {
				base := watchPlan{names: names, hf: 1, doubt: doubt, land: 1 << 20, land2: 1 << 20, readAt: 1 << 20, read: "update"}
				n := runWatchPlan(t, base, false)
				runs := 0
				var smp sampler
				for l0 := 0; l0 <= n; l0++ {
					for l2 := 0; l2 <= n; l2++ {
						if !all && l2%every != 0 && !(cycle && l2 >= n-9) {
							continue
						}
						for _, stale := range []bool{false, true} {
							if !all && stale != ((l0+l2/3)%2 == 1) {
								continue
							}
							p := base
							p.land, p.land2, p.stale = l0, l2, stale
							p.readAt = max(l0, l2) + (l0+l2)%2
							if p.readAt > n {
								continue
							}
							p.read = watchReads[(l0+l2)%len(watchReads)]
							if smp.skip() {
								continue
							}
							runWatchPlan(t, p, true)
							runs++
						}
					}
				}
				t.Logf("%d scenarios over %d boundaries", runs, n)
			})
		}
	}
}

// TestAdvJudgeGiveUpToAWriterGivingUp: a failure
// TestAdvJudgeThreeLedgersReadBetween found in the first version of the
// judge. L0=b, L1=c, L2=a (H=F=1); L0's call of x is slow or in doubt,
// L2's slow. Held-then-lost schedule (COUNTERKIT_WATCH_TRACE=1 shows it):
// L0's held put (b holds x) lands at boundary 1, after L1's fetch: L1
// applies x (its record names c) and its copy meets b's. L2's slow put (a
// holds x) lands at boundary 6; L2 settles, meets c's copy and watches it.
// L0 reads (an Update) at 7: the owner of x in its state is a, so b gives
// its copy up, and step 6 judges a's copy by x's records: c's record
// names c, which holds x there (met, not counted), so the give-up record
// names a. L1's next cycle, from a read before a's copy landed, gives its
// own copy up to b's (the owner in that read), recording b. L2's watch
// then finds the record naming a, and x counts once.
//
// Seen to fail against the judge renaming a met copy's record too (index.go
// record's `case counted:` made `case counted, meet:`, renaming to the
// holder unless it is the ledger's own): b's record names c, both b and c
// leave x, and L2's watch, finding only records of writers past their
// versions without x, takes a's copy out: x counted zero times, 3012 for
// 3112.
//
// Replay one: COUNTERKIT_WATCH_TRACE=1 go test ./ledger -run
// '^TestAdvJudgeGiveUpToAWriterGivingUp$/held-lost'
func TestAdvJudgeGiveUpToAWriterGivingUp(t *testing.T) {
	for doubt, land := range []int{5, 1, 1} {
		t.Run(watchKinds[doubt], func(t *testing.T) {
			runWatchPlan(t, watchPlan{names: []crdt.ActorID{"b", "c", "a"}, hf: 1, doubt: doubt, land: land, land2: 6, readAt: 7, read: "update"}, true)
		})
	}
}

// TestAdvJudgeBookEvictsEverywhere: L0 is a Book's ledger with MaxOpen 1,
// and every Book operation on the account is followed by a write on
// another key, which drops the account's ledger unless the Book keeps it
// (runBookPlan). L0's call of x is slow or in doubt (held then lost, or
// refused then held) and lands before each of L1's store calls in turn; L1
// applies x and writes on past H + F, forgetting x; L0 runs an Update, a
// Find or LandPending at the landing or one of the next two boundaries
// (at the landing, also with its first record put refused), and again
// after L1's calls; then both write twice (both id orders;
// H=F=1, and the defaults with COUNTERKIT_CASES). So L0 is dropped, if it
// may be, after every operation: with a pending write, owing the record of
// a write in doubt that landed, watching a copy that met L1's. Checks: no
// call hangs; L0's reads fail only after a refused record put, and not
// twice running; LandPending, when it succeeds, leaves no pending write and
// no owed record; L0 never fails for ever; x counts once; a retry of x on
// the Book, on L1 and on a new ledger is recognised.
//
// About 1,800 scenarios, 1.3 s of CPU. Seen to fail against each of these
// broken variants, one at a time (x counted twice, 1211 for 1111, unless
// said):
//   - the Book keeping only pending ledgers (book.go NewBook, `b.keep =
//     (*Ledger).mustStay` made `(*Ledger).Pending`);
//   - no ledger kept for a watch (ledger.go mustStay, `return unwritten
//     || watching` made `return unwritten || watching && false`): L0's
//     slow copy meets L1's and the Book drops L0 watching it;
//   - no ledger kept for an owed record (ledger.go holding, `l.cyc.Pending
//     || len(l.unindexed) > 0` made `l.cyc.Pending`): L0 held then lost,
//     landing at 16, its Update's record put refused;
//   - LandPending running Find once (ledger.go Land, `for range 3 {` made
//     `for range 1 {`): "LandPending succeeded and left a pending write or an
//     owed record" (L0 held then lost, landing at 0);
//   - the watch off (index.go settle, `if v == meet {` made `if false &&
//     ...`);
//   - no watch of an owed record's copy (ledger.go owe, `if o.Actor !=
//     l.writer && holdsAmount(` made `if false && ...`): L0 refused then
//     held, landing at 16, its Update's record put refused;
//   - no ledger kept for a take-out not yet written (ledger.go holding,
//     `l.cyc.Pending || l.takenOut ||` made `l.cyc.Pending ||`): a Value
//     or HasTransaction read ends the watch.
func TestAdvJudgeBookEvictsEverywhere(t *testing.T) {
	all := envCases(t, 0) > 0
	reads := bookReads
	hfs := []int{1}
	if all {
		hfs = append(hfs, 0)
	}
	for _, hf := range hfs {
		for _, names := range [][]crdt.ActorID{{"a", "b"}, {"b", "a"}} {
			for doubt, kind := range watchKinds {
				t.Run(fmt.Sprintf("H=F=%d/L0=%s/%s", hf, names[0], kind), func(t *testing.T) {
					base := bookPlan{names: names, hf: hf, doubt: doubt, land: 1 << 20, readAt: 1 << 20, read: "find"}
					n := runBookPlan(t, base, false)
					runs := 0
					var smp sampler
					for land := 0; land <= n; land++ {
						for readAt := land; readAt <= min(land+2, n); readAt++ {
							for _, read := range reads {
								for _, refuse := range []bool{false, true} {
									if refuse && readAt != land {
										continue
									}
									p := base
									p.land, p.readAt, p.read, p.refuse = land, readAt, read, refuse
									if smp.skip() {
										continue
									}
									runBookPlan(t, p, true)
									runs++
								}
							}
						}
					}
					t.Logf("%d scenarios over %d boundaries", runs, n)
				})
			}
		}
	}
}

// TestAdvJudgeBookDropsAnUnwrittenTakeOut: a failure
// TestAdvJudgeBookEvictsEverywhere found. L0 is a Book's ledger (MaxOpen
// 1); its slow put of x lands at boundary 16 of L1's calls (H=F=1), inside
// the cycle in which L1 forgets x from a read made before the landing. L0
// settles: its copy meets L1's and is watched (the Book keeps L0). L0
// reads with Value (or HasTransaction) amid and after L1's calls; the
// second read finds L1 past its record without x: counted elsewhere, and
// L0 takes its copy out of its state, "which its next write carries"
// (SPEC.md 6.11 step 3, "Watching."). The Book keeps L0 until a write
// carries the take-out, and x counts once.
//
// Seen to fail against the Book dropping a ledger that holds a take-out
// not yet written (ledger.go holding, `l.cyc.Pending || l.takenOut ||`
// made `l.cyc.Pending ||`): the ledger opened in L0's place knows nothing
// of it, and x counts twice for good (1209 for 1109) though every ledger
// then reads and writes again.
//
// Replay one: COUNTERKIT_JUDGE_TRACE=1 go test ./ledger -run
// '^TestAdvJudgeBookDropsAnUnwrittenTakeOut$/L0=a/value'
func TestAdvJudgeBookDropsAnUnwrittenTakeOut(t *testing.T) {
	for _, names := range [][]crdt.ActorID{{"a", "b"}, {"b", "a"}} {
		for _, read := range []string{"value", "has"} {
			t.Run(fmt.Sprintf("L0=%s/%s", names[0], read), func(t *testing.T) {
				runBookPlan(t, bookPlan{names: names, hf: 1, land: 16, readAt: 16, read: read}, true)
			})
		}
	}
}

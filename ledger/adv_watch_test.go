package ledger_test

// Adversarial scenarios for the watch of a late copy (SPEC.md 6.11 step 3,
// "Watching.", and the watch of a pending copy whose owed record names
// another writer) and for retirement's late-copy rule (6.9 RetireAfter).
// They are written from the promise of 6.11: a transaction delivered to
// several ledgers at once, or retried on another while a put is in doubt,
// counts exactly once once every ledger has read and written again; a
// retry of it on any ledger is recognised; no call hangs; no ledger fails
// for ever; an Update never answers applied for a copy that is then taken
// out; and a retiring ledger keeps the writer of a late copy until its own
// ledger takes the copy out, while retiring every idle writer that holds
// none.
//
// Each test names, in its comment, the broken variants of the production
// code it was seen to fail against.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"slices"
	"sync"
	"sync/atomic"
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

// watchPlan is one scenario of TestAdvWatchLateCopy: ledger L0's call of
// x is slow (its put lands, and is acknowledged, at a boundary of L1's
// store calls: before the call with that index) or in doubt (its first put
// held in flight and its retry lost, or its first put refused and its
// retry held; the held put lands at that boundary). L1 applies x and
// writes on past H + F. L0 reads once at boundary readAt, amid L1's calls.
// With retire, a third ledger, r, then makes retirement passes. Then L0
// reads (a read of kind read, its account fetch stale with stale), and
// every ledger reads and writes again, twice.
type watchPlan struct {
	names  []crdt.ActorID // L0, L1
	hf     int            // 0: the defaults
	doubt  int            // 0: slow; 1: in doubt, held then lost; 2: in doubt, refused then held
	land   int
	land2  int    // with a third name, L2's slow put lands at this boundary
	readAt int    // the boundary of L1's calls at which L0 reads first (1<<20: none)
	read   string // "update", "find", "value" or "has"
	stale  bool
	retire bool
}

func (p watchPlan) String() string {
	kind := watchKinds[p.doubt]
	return fmt.Sprintf("names=%v H=F=%d %s land=%d land2=%d readAt=%d read=%s stale=%v retire=%v", p.names, p.hf, kind, p.land, p.land2, p.readAt, p.read, p.stale, p.retire)
}

var watchKinds = []string{"slow", "held-lost", "refused-held"}

var watchReads = []string{"update", "find", "value", "has"}

// watchRead is a read of kind by ledger i; "update" writes z.
func watchRead(w *settleWorld, i int, kind string, z crdt.TxnID) error {
	ctx, cancel := context.WithTimeout(context.Background(), settleCallTimeout)
	defer cancel()
	var err error
	switch kind {
	case "update":
		var r ledger.Result
		r, err = w.ledgers[i].Update(ctx, z, 1)
		if err == nil && r.Outcome == tpncounter.Applied {
			w.want++
		}
	case "find":
		_, err = w.ledgers[i].Find(ctx)
	case "value":
		_, err = w.ledgers[i].Value(ctx)
	case "has":
		_, err = w.ledgers[i].HasTransaction(ctx, "x")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		w.t.Errorf("%s: %s: %s hangs", w.what, w.ledgers[i].Actor(), kind)
	}
	return err
}

// runWatchPlan plays p and, with check, checks the promise; it returns
// the number of boundaries of L1's store calls.
func runWatchPlan(t *testing.T, p watchPlan, check bool) int {
	const x, amount = crdt.TxnID("x"), int64(100)
	copts := tpncounter.Options{HistoryLength: p.hf, FoldedLength: p.hf}
	h, f := p.hf, p.hf
	if p.hf == 0 {
		h, f = 10, 10
	}
	names := slices.Clone(p.names)
	retire := slices.Repeat([]time.Duration{-1}, len(names))
	if p.retire {
		names = append(names, "r")
		retire = append(retire, time.Hour)
	}
	w := newSettleWorld(t, copts, names, retire, x)
	w.what = p.String()
	if os.Getenv("COUNTERKIT_WATCH_TRACE") != "" {
		for i, ln := range w.lanes {
			name := w.ledgers[i].Actor()
			ln.trace = func(format string, args ...any) { t.Logf("%s: %s", name, fmt.Sprintf(format, args...)) }
		}
	}
	for i := range w.ledgers {
		w.credit(i, crdt.TxnID(fmt.Sprintf("open-%d", i)), 1000)
	}
	b := &boundaries{}
	type answer struct {
		r   ledger.Result
		err error
	}
	var got *answer
	if p.doubt > 0 {
		faults := []faulty.Fault{faulty.Hold, faulty.Lose}
		if p.doubt == 2 {
			faults = []faulty.Fault{faulty.Refuse, faulty.Hold}
		}
		w.lanes[0].plan.set(faults, nil, nil)
		r, err := w.update(0, x, amount)
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, w.what)
		got = &answer{r, err}
		b.events = []settleEvent{{p.land, "land", func() {
			if err := w.lanes[0].DeliverAll(); err != nil {
				t.Errorf("%s: delivering L0's put: %v", w.what, err)
			}
		}}}
	}
	// slow starts ledger i's call of x with its put held until the event
	// at boundary at lands it; *into is its answer.
	slow := func(i, at int, into **answer) {
		g := w.lanes[i].slowNext(newSlowPut())
		done := make(chan answer, 1)
		go func() {
			r, err := w.update(i, x, amount)
			done <- answer{r, err}
		}()
		select {
		case <-g.held:
		case <-time.After(settleCallTimeout):
			t.Fatalf("%s: ledger %d never put", w.what, i)
		}
		b.events = append(b.events, settleEvent{at, fmt.Sprint("land ", i), func() {
			close(g.land)
			<-g.landed
			close(g.ack)
			select {
			case a := <-done:
				*into = &a
				w.answered(i, x, a.r, a.err) // the store right after the answer
			case <-time.After(2 * settleCallTimeout):
				t.Errorf("%s: ledger %d's call of x hangs", w.what, i)
				*into = &answer{err: context.DeadlineExceeded}
			}
		}})
	}
	if p.doubt == 0 {
		slow(0, p.land, &got)
	}
	var got2 *answer
	if len(p.names) == 3 {
		slow(2, p.land2, &got2)
	}
	slices.SortStableFunc(b.events, func(a, c settleEvent) int { return a.at - c.at })
	if p.readAt < 1<<20 {
		b.events = append(b.events, settleEvent{p.readAt, "read", func() {
			if p.stale {
				w.lanes[0].plan.set(nil, []faulty.Fault{faulty.StaleBy(2)}, nil)
			}
			if err := watchRead(w, 0, p.read, "z-mid"); err != nil && !(p.stale && errors.Is(err, crdt.ErrUnavailable)) {
				t.Errorf("%s: L0's %s amid L1's calls: %v", w.what, p.read, err)
			}
			w.lanes[0].plan.set(nil, nil, nil)
		}})
		slices.SortStableFunc(b.events, func(a, c settleEvent) int { return a.at - c.at })
	}
	w.lanes[1].before = func(method, key string) { b.tick(1, method, key) }
	r, err := w.update(1, x, amount)
	require.NoError(t, err, "%s: L1's call of x", w.what)
	w.answered(1, x, r, err)
	w.want += amount
	for i := range h + f + 2 {
		w.credit(1, crdt.TxnID(fmt.Sprintf("y%02d", i)), 1)
	}
	w.lanes[1].before = nil
	n := b.finish()
	if !check {
		return n
	}
	if p.doubt == 0 {
		require.NoError(t, got.err, "%s: L0's slow call", w.what)
		require.Contains(t, []tpncounter.Outcome{tpncounter.Applied, tpncounter.Duplicate}, got.r.Outcome, w.what)
		if got.r.Outcome == tpncounter.Duplicate {
			require.NotEqual(t, w.ledgers[0].Writer(), got.r.Owner.Actor, "%s: the copy L0's met or gave way to", w.what)
		}
	}
	if got2 != nil {
		require.NoError(t, got2.err, "%s: L2's slow call", w.what)
		require.Contains(t, []tpncounter.Outcome{tpncounter.Applied, tpncounter.Duplicate}, got2.r.Outcome, w.what)
		if got2.r.Outcome == tpncounter.Duplicate {
			require.NotEqual(t, w.ledgers[2].Writer(), got2.r.Owner.Actor, "%s: the copy L2's met or gave way to", w.what)
		}
	}
	if p.retire {
		for step := range 4 {
			if step%2 == 0 {
				w.clock.Add(2 * time.Hour)
			}
			w.credit(len(p.names), crdt.TxnID(fmt.Sprintf("r%d", step)), 1)
		}
		st := stored(t, w.mem)
		if st.Value() != w.want {
			// L0's copy counts x a second time until L0 reads: its
			// writer must not be retired before that.
			require.Equal(t, []crdt.ActorID{w.ledgers[0].Writer()}, liveOf(st, []crdt.ActorID{w.ledgers[0].Writer()}),
				"%s: L0 retired while its late copy counts x twice (value %d, want %d)", w.what, st.Value(), w.want)
		}
	}
	if p.stale {
		w.lanes[0].plan.set(nil, []faulty.Fault{faulty.Stale}, nil)
	}
	for try := 0; ; try++ {
		err := watchRead(w, 0, p.read, "z-post")
		if err == nil {
			break
		}
		require.True(t, p.stale && try == 0 && errors.Is(err, crdt.ErrUnavailable), "%s: L0's %s (try %d): %v", w.what, p.read, try, err)
	}
	w.settleAgain("e1")
	w.settleAgain("e2")
	w.verify(map[crdt.TxnID]int64{x: amount}, w.what)
	for i, l := range w.ledgers {
		_, err := l.Value(context.Background())
		require.NoError(t, err, "%s: Value of ledger %d", w.what, i)
		_, err = l.Find(context.Background())
		require.NoError(t, err, "%s: Find of ledger %d", w.what, i)
	}
	return n
}

// TestAdvWatchLateCopy: x is delivered to L0 and L1 at once (L0's put
// slow: the call confirms and settles once it lands) or retried on L1
// while L0's call is in doubt (a put held in flight, landing later; the
// pending write itself, or an earlier attempt's). L1 applies x, records
// it and writes on past H + F, folding and forgetting x, or giving its
// copy up to L0's when L0 sorts first. L0's put lands before each store
// call of L1 in turn (every one at H=F=1; at the defaults the first four
// and the last sixteen, where L1 folds and forgets x; both id orders), and
// L0 reads (an Update, a Find, a Value or a HasTransaction, in turn) at
// that boundary or one of the next two, so inside the cycle in which L1
// forgets x, or only after L1's calls, its account fetch fresh or stale;
// with retire a third ledger first makes retirement passes over the idle
// writers. Checks: no call hangs; L0's slow call answers applied
// or duplicate (owner L1); L0 is not retired while its late copy counts x
// twice; L0's read fails, if at all, only unavailable after a stale fetch,
// and succeeds at once after; once every ledger has read and written
// twice, x counts once, every key decodes, retries of x on every ledger,
// a new one and a new incarnation are recognised, no ledger that answered
// applied took its copy out, and Value and Find succeed on every ledger.
//
// Seen to fail against each of these broken variants, one at a time:
//   - the watch off (index.go settle, `if v == meet {` made `if false &&
//     v == meet {`): x counted twice when L0's slow put lands inside the
//     cycle in which L1 forgets x;
//   - no watch of an owed record's copy (ledger.go owe, `holdsAmount`
//     condition made false): x counted twice when L0's held put lands
//     inside that cycle;
//   - an idle actor retired with a late copy (index.go lastApplied, `late
//     = true` made `late = false`): "L0 retired while its late copy counts
//     x twice".
//
// Scale: COUNTERKIT_CASES set tries every boundary at the defaults too,
// reads up to four boundaries after the landing, fresh and stale (two
// states back: the read may fail unavailable), and every read kind at
// each (about 43,000 scenarios, a minute and a half).
func TestAdvWatchLateCopy(t *testing.T) {
	all := envCases(t, 0) > 0
	for _, names := range [][]crdt.ActorID{{"a", "b"}, {"b", "a"}} {
		for _, hf := range []int{1, 0} {
			for doubt, kind := range watchKinds {
				t.Run(fmt.Sprintf("%s-late/H=F=%d/%s", names[0], hf, kind), func(t *testing.T) {
					base := watchPlan{names: names, hf: hf, doubt: doubt, land: 1 << 20, readAt: 1 << 20, read: "update"}
					n := runWatchPlan(t, base, false)
					runs := 0
					var smp sampler
					for _, land := range watchPositions(n, hf, all) {
						// L0 reads first amid L1's next calls, or after
						// them (fresh, stale, or after a retirement
						// pass); the read kinds in turn, every one with
						// COUNTERKIT_CASES.
						var plans []watchPlan
						for readAt := land; readAt <= min(land+2+2*b2i(all), n); readAt++ {
							p := base
							p.land, p.readAt = land, readAt
							plans = append(plans, p)
							if all {
								p.stale = true
								plans = append(plans, p)
							}
						}
						for _, v := range []struct{ stale, retire bool }{{false, false}, {true, false}, {false, true}} {
							p := base
							p.land, p.stale, p.retire = land, v.stale, v.retire
							plans = append(plans, p)
						}
						for k, p := range plans {
							for j, read := range watchReads {
								if !all && j != (land+p.readAt%(1<<20)+k)%len(watchReads) {
									continue
								}
								p.read = read
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
}

// TestAdvWatchThreeLedgers: x is delivered to three ledgers at once, or
// retried on two others while L0's call is in doubt. L2's put is slow,
// L0's slow or in doubt (held then lost, or refused then held: one kind
// per id order in turn, every kind with COUNTERKIT_CASES); L1 applies x
// and writes on past H + F (H=F=1, and the defaults with
// COUNTERKIT_CASES; every order of the three ids). The two puts land, and
// are
// acknowledged, before a pair of L1's store calls (each of the last 16
// boundaries, where L1 folds and forgets x, and the first, every other
// one, every fourth with -short, unless COUNTERKIT_CASES is set), so that both copies meet L1's, or
// one meets the other, and both are watched; then L0 reads (each kind in
// turn) and every ledger reads and writes twice. The checks of
// TestAdvWatchLateCopy: no call hangs, each slow call answers applied or
// duplicate of another writer's copy, x counts once, retries are
// recognised everywhere, no ledger that answered applied takes its copy
// out, and Value and Find succeed on every ledger.
//
// L0 in doubt with L2's id sorting first is left to
// TestAdvWatchGivenUpToAWatchedCopy.
//
// Seen to fail against the watch off (index.go settle, `if v == meet {`
// made `if false && v == meet {`): x counted twice.
func TestAdvWatchThreeLedgers(t *testing.T) {
	all := envCases(t, 0) > 0
	step := 2
	switch {
	case all:
		step = 1
	case testing.Short():
		step = 4
	}
	perms := [][]crdt.ActorID{{"a", "b", "c"}, {"a", "c", "b"}, {"b", "a", "c"}, {"b", "c", "a"}, {"c", "a", "b"}, {"c", "b", "a"}}
	hfs := []int{1}
	if all {
		hfs = append(hfs, 0)
	}
	for _, hf := range hfs {
		for o, names := range perms {
			for doubt, kind := range watchKinds {
				if !all && doubt != o%len(watchKinds) || doubt > 0 && names[2] < names[0] {
					continue // in doubt with L2's id first: TestAdvWatchGivenUpToAWatchedCopy
				}
				t.Run(fmt.Sprintf("H=F=%d/L0=%s,L1=%s,L2=%s/L0-%s", hf, names[0], names[1], names[2], kind), func(t *testing.T) {
					base := watchPlan{names: names, hf: hf, doubt: doubt, land: 1 << 20, land2: 1 << 20, readAt: 1 << 20, read: "update"}
					n := runWatchPlan(t, base, false)
					var lands []int
					for i := 0; i <= n; i++ {
						if i == 0 || i >= n-16 && (all || (n-i)%step == 0) {
							lands = append(lands, i)
						}
					}
					runs := 0
					for _, l0 := range lands {
						for _, l2 := range lands {
							p := base
							p.land, p.land2, p.read = l0, l2, watchReads[(l0+l2)%len(watchReads)]
							runWatchPlan(t, p, true)
							runs++
						}
					}
					t.Logf("%d scenarios over %d boundaries", runs, n)
				})
			}
		}
	}
}

// TestAdvWatchGivenUpToAWatchedCopy: x is delivered to L0, L1 and L2 at
// once (H=F=1). L0's call is in doubt (held then lost, or refused then
// held); L2's is slow. Both puts land at boundary 16 of L1's calls,
// before the account Put of the cycle in which L1 forgets x: L2's copy
// meets L1's and is watched. L1 forgets x, counting it. When L2's id
// sorts before L0's, L0 at its next read finds its copy and L2's, gives
// its own up (step 6) and writes the record it owes for its write in
// doubt. Both records would name L2's copy, the owner in L0's state; but
// x's record names L1, which is past it without x (L1 counted x), so both
// name L1. L2's watch then finds L1 counted x and takes L2's copy out. In
// the three id orders and both doubt kinds.
//
// Seen to fail against the give-up record not judged (index.go record's
// `case p.judge != nil && p.rec.Writer != l.writer:` made `case false:`):
// L0's record names L2, whose watch ends on it, and x counts twice for
// good, 3211 for 3111.
func TestAdvWatchGivenUpToAWatchedCopy(t *testing.T) {
	for _, names := range [][]crdt.ActorID{{"b", "c", "a"}, {"c", "a", "b"}, {"c", "b", "a"}} {
		for doubt := 1; doubt < len(watchKinds); doubt++ {
			t.Run(fmt.Sprintf("L0=%s,L1=%s,L2=%s/L0-%s", names[0], names[1], names[2], watchKinds[doubt]), func(t *testing.T) {
				runWatchPlan(t, watchPlan{names: names, hf: 1, doubt: doubt, land: 16, land2: 16, readAt: 1 << 20, read: "update"}, true)
			})
		}
	}
}

// watchPositions are the landings TestAdvWatchLateCopy tries out of n+1
// boundaries: every one at H=F=1 or with all, else the first four and the
// last sixteen (where L1 folds and forgets x).
func watchPositions(n, hf int, all bool) []int {
	var out []int
	for i := 0; i <= n; i++ {
		if all || hf != 0 || i < 4 || i >= n-16 {
			out = append(out, i)
		}
	}
	return out
}

// TestAdvWatchRestartsAllRetire: an actor restarts 50 times; each
// incarnation makes one call and is dropped idle. Every third call is a
// plain credit; the others are delivered at once to writer W too, the
// incarnation's put slow and landing after W applied and recorded the
// transaction, so that the two copies meet (the incarnation answers
// duplicate, W's copy counts, or the incarnation's when its id sorts
// first and W gives its copy up). A retiring ledger R and W write on,
// two hours apart. Every incarnation is retired eventually (none holds a
// late copy: nothing piles up), no pass retires one before it is idle
// for RetireAfter, each transaction counts once, and retries are
// recognised on W, R and a new ledger. Both id orders of the restarting
// actor and W.
//
// Seen to fail against lastApplied taking a copy that meets another
// writer's for a late one (index.go, `if v == counted {` made `if v ==
// counted || v == meet {`): with W's id first, the incarnations whose
// copies met W's are never retired. (With the incarnation's id first, W
// gives its copy up, and no copy meets another when R's passes run.)
func TestAdvWatchRestartsAllRetire(t *testing.T) {
	for _, names := range [][2]crdt.ActorID{{"a", "m"}, {"z", "m"}} {
		t.Run(fmt.Sprintf("restarting=%s,W=%s", names[0], names[1]), func(t *testing.T) {
			const restarts = 50
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			mk := func(st store.Siblings, actor crdt.ActorID, retireAfter time.Duration) *ledger.Ledger {
				return watchLedger(t, st, clock, actor, retireAfter)
			}
			w := mk(mem, names[1], -1)
			r := mk(mem, "r", time.Hour)
			amounts := map[crdt.TxnID]int64{}
			var want int64
			credit := func(l *ledger.Ledger, x crdt.TxnID, amount int64) {
				t.Helper()
				res, err := l.Update(ctx, x, amount)
				require.NoError(t, err, x)
				require.Equal(t, tpncounter.Applied, res.Outcome, x)
				amounts[x] = amount
				want += amount
			}
			credit(w, "open-w", 1000)
			credit(r, "open-r", 1000)
			var incs []crdt.ActorID
			for i := range restarts {
				ln := newLane(mem)
				inc := mk(ln, names[0], -1)
				x := crdt.TxnID(fmt.Sprintf("x%02d", i))
				if i%3 == 0 {
					credit(inc, x, int64(i+1))
				} else {
					g := ln.slowNext(newSlowPut())
					type answer struct {
						r   ledger.Result
						err error
					}
					done := make(chan answer, 1)
					go func() {
						res, err := inc.Update(ctx, x, int64(i+1))
						done <- answer{res, err}
					}()
					<-g.held
					credit(w, x, int64(i+1))
					close(g.land)
					<-g.landed
					close(g.ack)
					a := <-done
					require.NoError(t, a.err, x)
					require.Equal(t, tpncounter.Duplicate, a.r.Outcome, "%s: the incarnation's copy met W's", x)
				}
				incs = append(incs, inc.Writer())
				if i%10 == 9 {
					clock.Add(10 * time.Minute)
					credit(w, crdt.TxnID(fmt.Sprintf("w%02d", i)), 1)
				}
			}
			// Nothing is retired before it is idle for RetireAfter.
			credit(r, "r-early", 1)
			require.Len(t, liveOf(stored(t, mem), incs), restarts, "an incarnation retired before it was idle for RetireAfter")
			// Within the retry window (24 hours) of every call.
			for round := 0; round < 8 && len(liveOf(stored(t, mem), incs)) > 0; round++ {
				clock.Add(2 * time.Hour)
				credit(w, crdt.TxnID(fmt.Sprintf("w-round%d", round)), 1)
				credit(r, crdt.TxnID(fmt.Sprintf("r-round%d", round)), 1)
			}
			st := stored(t, mem)
			require.Empty(t, liveOf(st, incs), "every idle incarnation is retired")
			require.Equal(t, want, st.Value(), "each transaction counted once")
			fresh := mk(mem, "q", -1)
			for _, l := range []*ledger.Ledger{w, r, fresh} {
				for _, x := range slices.Sorted(maps.Keys(amounts)) {
					res, err := l.Update(ctx, x, amounts[x])
					require.NoError(t, err, x)
					require.True(t, isRecognised(res.Outcome), "a retry of %s on %s is applied again: %v", x, l.Actor(), res.Outcome)
				}
			}
			require.Equal(t, want, stored(t, mem).Value(), "after the retries")
			t.Logf("%d incarnations retired by %v; %d live actors, %d retired entries", restarts, clock.Now().Sub(time.Unix(1_800_000_000, 0)), len(maps.Collect(st.LiveActors())), st.Stats().Retired)
		})
	}
}

// TestAdvWatchRandom drives three ledgers (a random order of the ids a, b,
// c; History and Folded length 1 or the defaults) and a fourth, r, that
// retires idle writers (RetireAfter an hour; the clock moves up to 20
// minutes a step, the whole run within the retry window) through random
// steps: a new transaction to one ledger, or to two or three at once; a
// slow call on one ledger that lands, and is acknowledged, after another
// ledger applied the transaction and wrote up to 2H + 2 more; a retry of a
// call not answered on any ledger; a Value, Find or HasTransaction on
// any; a write of r. Puts of the account key are lost, lose their
// acknowledgement, are held in flight (delivered at random steps) or are
// refused; record puts are refused; reads of the account key are stale
// (up to three states back; record reads never are). Every call ends
// (none hangs) with an answer or unavailable / ambiguous_write, reads
// included; a ledger that answered applied in one attempt holds that copy
// when it answers and never takes it out. Then the store recovers, every
// ledger reads and writes twice, Value and Find succeed on every ledger,
// and every call not answered is retried until it is: each transaction
// counts once, and a retry of each on every ledger or a new one is
// recognised.
//
// Seen to fail against the watch off (index.go settle, `if v == meet {`
// made `if false && v == meet {`): a transaction counted twice, in 5 and
// 3 of 100 cases at seeds 1 and 2 (COUNTERKIT_CASES=50), and in case8 of
// H=F=1 at the CI size (seed 1). (The owed record's watch and the retirement's
// late-copy rule passed 80 cases broken: TestAdvWatchLateCopy catches all
// three every run.)
//
// Replay: COUNTERKIT_SEED=<seed> go test ./ledger -run '^TestAdvWatchRandom$'
// (calls made at once take turns drawn from the seed: inTurns). Scale: COUNTERKIT_CASES=<n> (cases per configuration;
// 10 by default, 3 with -short). COUNTERKIT_WATCH_TRACE=1 logs every store call.
func TestAdvWatchRandom(t *testing.T) {
	seed := doubtSeed(t)
	t.Logf("seed %d; replay: COUNTERKIT_SEED=%d go test ./ledger -run '^TestAdvWatchRandom$'", seed, seed)
	cases := shortCases(t, 10, 3)
	for _, hf := range []int{1, 0} {
		for c := range cases {
			caseSeed := seed + int64(hf*1_000_003+c*7919)
			t.Run(fmt.Sprintf("H=F=%d/case%d", hf, c), func(t *testing.T) {
				inBubble(t, func(t *testing.T) { watchRandomCase(t, caseSeed, hf, 40) })
			})
		}
	}
}

func watchRandomCase(t *testing.T, seed int64, hf, steps int) {
	rf := &randomFaults{rng: rand.New(rand.NewSource(seed)), refuseRecord: 0.12,
		puts:  []weightedFault{{faulty.Lose, 0.06}, {faulty.LoseAck, 0.12}, {faulty.Hold, 0.22}, {faulty.Refuse, 0.28}},
		stale: 0.1, maxAge: 3}
	policy, intn, setFaults, rng := rf.policy, rf.intn, rf.set, rf.rng
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	copts := tpncounter.Options{HistoryLength: hf, FoldedLength: hf}
	h := hf
	if hf == 0 {
		h = 10
	}
	names := []crdt.ActorID{"a", "b", "c"}
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	names = append(names, "r")
	var lanes []*lane
	var ledgers []*ledger.Ledger
	var watches []*copyWatch
	for _, name := range names {
		ln := &lane{Siblings: faulty.NewSiblings(mem, faulty.Options{Policy: ledger.FreshRecords(policy)}), mem: mem}
		retire := time.Duration(-1)
		if name == "r" {
			retire = time.Hour
		}
		l, err := ledger.New(ln, advKey, ledger.Options{Actor: name, RetryCount: 1, Backoff: ledger.Backoff{Initial: -1},
			Counter: copts, MaxGroup: 1, RetireAfter: retire, Clock: clock.Now})
		require.NoError(t, err)
		w := &copyWatch{appliedWatch: appliedWatch{writer: l.Writer(), counts: map[crdt.TxnID]bool{}}, since: map[crdt.TxnID]uint64{}}
		ln.wrote = func(v []byte) { w.wrote(t, v) }
		ln.read = func(sibs [][]byte) { w.read(t, sibs) }
		if os.Getenv("COUNTERKIT_WATCH_TRACE") != "" {
			ln.trace = func(format string, args ...any) { t.Logf("%s: %s", name, fmt.Sprintf(format, args...)) }
		}
		lanes, ledgers, watches = append(lanes, ln), append(ledgers, l), append(watches, w)
	}
	amounts := map[crdt.TxnID]int64{}
	var amu sync.Mutex // answered, written by calls made at once
	answered := map[crdt.TxnID]bool{}
	var next int
	newTxn := func() crdt.TxnID {
		next++
		x := crdt.TxnID(fmt.Sprintf("x%03d", next))
		amounts[x] = int64(next)
		if next%4 == 0 {
			amounts[x] = -1
		}
		return x
	}
	bounded := func(what string, f func(ctx context.Context) error) error {
		ctx, cancel := context.WithTimeout(context.Background(), settleCallTimeout)
		defer cancel()
		err := f(ctx)
		switch {
		case err == nil, errors.Is(err, crdt.ErrUnavailable), errors.Is(err, crdt.ErrAmbiguousWrite):
		case errors.Is(err, context.DeadlineExceeded):
			t.Errorf("seed %d: %s hangs", seed, what)
		default:
			t.Errorf("seed %d: %s: %v", seed, what, err)
		}
		return err
	}
	call := func(i int, x crdt.TxnID) error {
		return bounded(fmt.Sprintf("%s: Update(%s)", names[i], x), func(ctx context.Context) error {
			r, err := ledgers[i].Update(ctx, x, amounts[x])
			if err == nil {
				amu.Lock()
				answered[x] = true
				amu.Unlock()
				if r.Outcome == tpncounter.Applied && r.Attempts == 1 {
					st := stored(t, mem)
					if _, live := maps.Collect(st.LiveActors())[ledgers[i].Writer()]; live && st.Status(x) == tpncounter.Unknown {
						t.Errorf("seed %d: %s answered applied for %s, which the store does not hold", seed, names[i], x)
					}
					watches[i].follow(ledgers[i].Writer())
					watches[i].begin(st, x)
				}
			}
			return err
		})
	}
	read := func(i int) {
		switch k := intn(3); k {
		case 0:
			bounded(string(names[i])+": Value", func(ctx context.Context) error { _, err := ledgers[i].Value(ctx); return err })
		case 1:
			bounded(string(names[i])+": Find", func(ctx context.Context) error { _, err := ledgers[i].Find(ctx); return err })
		default:
			bounded(string(names[i])+": HasTransaction", func(ctx context.Context) error {
				_, err := ledgers[i].HasTransaction(ctx, "x001")
				return err
			})
		}
	}
	amounts["open"] = 1_000_000
	setFaults(false)
	require.NoError(t, call(0, "open"))
	setFaults(true)
	for step := range steps {
		clock.Add(time.Duration(intn(21)) * time.Minute)
		if intn(4) == 0 {
			for _, ln := range lanes {
				if ln.Held() > 0 {
					require.NoError(t, ln.Deliver(intn(ln.Held())))
				}
			}
		}
		i := intn(3)
		switch r := intn(12); {
		case r < 3:
			call(i, newTxn())
		case r < 5:
			// Delivered to two or three ledgers at once.
			x := newTxn()
			who := []int{0, 1, 2}
			if intn(2) == 0 {
				who = slices.Delete(who, i, i+1)
			}
			var in []*lane
			var fs []func()
			for _, j := range who {
				in = append(in, lanes[j])
				fs = append(fs, func() { call(j, x) })
			}
			inTurns(intn, in, fs)
		case r < 7:
			// Slow on ledger i: another applies x and writes on first.
			x := newTxn()
			g := lanes[i].slowNext(newSlowPut())
			done := make(chan struct{})
			go func() { call(i, x); close(done) }()
			select {
			case <-g.held:
			case <-done:
				// The call ended before its put: nothing is slow.
				lanes[i].slowNext(nil)
				continue
			}
			// The put lands, and is acknowledged, before a random store
			// call of the other ledger's (L0's call then settles while
			// that ledger's cycle runs), or after them; then, as often,
			// ledger i reads at once.
			j := (i + 1 + intn(2)) % 3
			more := intn(2*h + 3)
			at := intn(5*(more+1) + 2)
			var calls atomic.Int32
			var once sync.Once
			land := func() {
				once.Do(func() {
					close(g.land)
					<-g.landed
					close(g.ack)
					<-done
					if intn(2) == 0 {
						read(i)
					}
				})
			}
			lanes[j].mu.Lock()
			lanes[j].before = func(string, string) {
				if int(calls.Add(1)) > at {
					land()
				}
			}
			lanes[j].mu.Unlock()
			call(j, x)
			for range more {
				call(j, newTxn())
			}
			lanes[j].mu.Lock()
			lanes[j].before = nil
			lanes[j].mu.Unlock()
			land()
		case r < 9:
			read(intn(4))
		case r < 10:
			call(3, newTxn()) // r writes: a retirement pass when due
		default:
			var pool []crdt.TxnID
			for _, x := range slices.Sorted(maps.Keys(amounts)) {
				if !answered[x] {
					pool = append(pool, x)
				}
			}
			if len(pool) > 0 {
				call(i, pool[intn(len(pool))])
			}
		}
		t.Logf("step %d: held %d/%d/%d", step, lanes[0].Held(), lanes[1].Held(), lanes[2].Held())
	}
	// The store recovers.
	setFaults(false)
	for _, ln := range lanes {
		if intn(2) == 0 {
			require.NoError(t, ln.DeliverAll())
		} else {
			ln.DropHeld()
		}
	}
	for round := range 2 {
		for i := range ledgers {
			x := newTxn()
			require.NoError(t, call(i, x), "seed %d: round %d on %s after the store recovered", seed, round, names[i])
		}
	}
	for i, l := range ledgers {
		_, err := l.Value(context.Background())
		require.NoError(t, err, "seed %d: Value on %s", seed, names[i])
		_, err = l.Find(context.Background())
		require.NoError(t, err, "seed %d: Find on %s", seed, names[i])
	}
	for _, x := range slices.Sorted(maps.Keys(amounts)) {
		if !answered[x] {
			require.NoError(t, call(intn(4), x), "seed %d: %s retried after the store recovered", seed, x)
		}
	}
	for _, w := range watches {
		require.Empty(t, w.violations, "seed %d", seed)
	}
	requireRandomRunExact(t, seed, mem, clock, copts, ledgers, amounts)
}

// copyWatch is appliedWatch that also lets a copy go when a read shows it
// retired by another ledger: the fetched state holds the writer's entry
// at or past the version that held the copy when it was answered applied,
// and no longer holds the transaction (the writer's own take-out is a
// write, which appliedWatch sees first). A retired half of an entry (its
// credits or its debits) leaves the other half live, so liveness alone
// does not tell. TestCopyWatchCatchesATakeOut shows the rules on states
// built by hand. Seen to catch in TestAdvWatchRandom a ledger that takes
// out every copy recorded under its own writer (index.go, `if
// recs[i].gives &&` made `if (recs[i].gives || r.Writer == l.writer) &&`:
// 200 cases of 200 at seeds 1 and 2, COUNTERKIT_CASES=100, each by the
// watch). It misses a met copy taken out (`case v == counted:` made `case
// v == counted || v == meet:`), which the value checks catch.
type copyWatch struct {
	appliedWatch
	since map[crdt.TxnID]uint64
}

func (w *copyWatch) begin(st *tpncounter.Counter, x crdt.TxnID) {
	w.start(st, x)
	w.mu.Lock()
	w.since[x] = st.Version(w.writer)
	w.mu.Unlock()
}

func (w *copyWatch) read(t *testing.T, sibs [][]byte) {
	w.appliedWatch.read(t, sibs)
	st := decodeState(t, sibs...)
	w.mu.Lock()
	defer w.mu.Unlock()
	for x, counts := range w.counts {
		if counts && st.Status(x) == tpncounter.Unknown && st.Version(w.writer) >= w.since[x] {
			w.counts[x] = false
		}
	}
}

// TestAdvWatchDatedOnlyByItsOwnRecords: incarnation m's call of x is slow;
// meanwhile writer W applies x, records it, and folds it (History and
// Folded length 2). Two hours later m's put lands: m's copy meets W's
// (m answers duplicate) and x is m's newest credit, but the only record
// of x names W. W writes on (so m retires alone, not with W as a group).
// A ledger R (RetireAfter an hour) that first sees m then
// must date m from that pass, not from W's record two hours old (SPEC.md
// 6.9: a record naming another writer dates that writer): m is not
// retired then, nor 30 minutes later, and is retired once an hour has
// passed since (its copy does not count, and W's is folded: 6.10). x
// counts once throughout, and retries of x are recognised.
//
// Seen to fail against lastApplied dating an actor by any record of its
// transactions (index.go, `r.Writer == actor &&` dropped): "m retired at
// the first pass that saw it".
func TestAdvWatchDatedOnlyByItsOwnRecords(t *testing.T) {
	for _, names := range [][2]crdt.ActorID{{"m", "w"}, {"m", "a"}} {
		t.Run(fmt.Sprintf("m=%s,W=%s", names[0], names[1]), func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			mk := func(st store.Siblings, actor crdt.ActorID, retireAfter time.Duration) *ledger.Ledger {
				return watchLedger(t, st, clock, actor, retireAfter)
			}
			ln := newLane(mem)
			m, w, r := mk(ln, names[0], -1), mk(mem, names[1], -1), mk(mem, "r", time.Hour)
			want := int64(0)
			credit := func(l *ledger.Ledger, x crdt.TxnID, amount int64) {
				t.Helper()
				res, err := l.Update(ctx, x, amount)
				require.NoError(t, err, x)
				require.Equal(t, tpncounter.Applied, res.Outcome, x)
				want += amount
			}
			credit(w, "open-w", 1000)
			credit(r, "open-r", 1000)
			g := ln.slowNext(newSlowPut())
			type answer struct {
				r   ledger.Result
				err error
			}
			done := make(chan answer, 1)
			go func() {
				res, err := m.Update(ctx, "x", 100)
				done <- answer{res, err}
			}()
			<-g.held
			credit(w, "x", 100)
			credit(w, "w1", 1)
			credit(w, "w2", 1)
			credit(w, "w3", 1)
			clock.Add(2 * time.Hour)
			close(g.land)
			<-g.landed
			close(g.ack)
			a := <-done
			require.NoError(t, a.err)
			require.Equal(t, tpncounter.Duplicate, a.r.Outcome, "m's copy met W's")
			require.Equal(t, want, stored(t, mem).Value(), "x counted once")
			rec, ok := recordOf(t, mem, "x")
			require.True(t, ok)
			require.Equal(t, w.Writer(), rec.Writer, "the record of x names W")
			live := func() bool { return len(liveOf(stored(t, mem), []crdt.ActorID{m.Writer()})) == 1 }
			owner, ok := stored(t, mem).Owner("x")
			require.True(t, ok)
			require.Equal(t, w.Writer(), owner.Actor)
			require.True(t, owner.Folded, "W folded x")
			// W writes on, so that m retires alone (its copy does not
			// count and W's is folded), not with W as a group.
			credit(w, "w4", 1)
			credit(r, "r1", 1)
			require.True(t, live(), "m retired at the first pass that saw it (dated by W's record)")
			clock.Add(30 * time.Minute)
			credit(w, "w5", 1)
			credit(r, "r2", 1)
			require.True(t, live(), "m retired 30 minutes after the first pass that saw it")
			clock.Add(45 * time.Minute)
			credit(w, "w6", 1)
			credit(r, "r3", 1)
			credit(r, "r4", 1)
			require.False(t, live(), "m, idle for RetireAfter with no late copy, is retired")
			require.Len(t, liveOf(stored(t, mem), []crdt.ActorID{w.Writer()}), 1, "W writes: not retired")
			require.Equal(t, want, stored(t, mem).Value(), "x counted once after m's retirement")
			for _, l := range []*ledger.Ledger{w, r, mk(mem, "q", -1), mk(mem, names[0], -1)} {
				res, err := l.Update(ctx, "x", 100)
				require.NoError(t, err)
				require.True(t, isRecognised(res.Outcome), "a retry of x on %s: %v", l.Actor(), res.Outcome)
			}
			require.Equal(t, want, stored(t, mem).Value())
		})
	}
}

// watchLedger is a ledger of the retirement tests of this file: advLedger
// with calls one at a time and H=F=2.
func watchLedger(t *testing.T, st store.Siblings, clock *fakeClock, actor crdt.ActorID, retireAfter time.Duration) *ledger.Ledger {
	t.Helper()
	o := ledger.Options{Actor: actor, RetireAfter: retireAfter, RetryCount: 1, Backoff: ledger.Backoff{Initial: -1}, MaxGroup: 1,
		Counter: tpncounter.Options{HistoryLength: 2, FoldedLength: 2}}
	clock.opts(&o)
	l, err := ledger.New(st, advKey, o)
	require.NoError(t, err)
	return l
}

package modelcheck

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/internal/testsize"
)

// This file checks the protocol of balance.Transactions (SPEC.md 9.4), a
// credit whose cost does not depend on the writers or the window, on an
// abstract model: every action below stands for one store call or one
// step of a balance merge (SPEC.md 9.3), whose own guarantee (a row of one
// update id counts once while its tombstone exists) the balance package
// checks, as it checks the driver at the model's bounds
// (TestTransactionsLateRowAtTheBound, TestTransactionsStalledWriter).
//
// The protocol, for one transaction x of an account:
//   - the account is a balance partition whose N row for x is keyed by x
//     itself, so copies of x written by writers that cannot see each
//     other are one row, and a retry rewrites it;
//   - a credit reads x's record; if the record says x landed, it answers
//     duplicate; otherwise it may write the N row until W after that read
//     (a later send reads the record again);
//   - a merge that finds x's row live first marks x's record landed, and
//     writes x's tombstone (and sums the row) only once the mark is
//     acknowledged; the tombstone, and with it any copy of the row that
//     came back, is collected G after it was written.
//
// The store's bounds: a write lands within L of being sent or never, and a
// record read may miss what landed up to D earlier. The claim checked:
// with G = W + L + D, x counts exactly once from the moment any copy
// landed, in every schedule; with G one less, without the merge's mark,
// with the tombstone written before the mark is acknowledged, or without
// the writer's deadline, some schedule counts it twice.

// rowLedgerRules are the protocol's parameters, and the switches that
// break it.
type rowLedgerRules struct {
	W, L, D, G int // ticks
	Attempts   int // calls of x: twins and retries, each starting any time
	Merges     int // merges, each any time
	Horizon    int // the last tick

	noMergeMark bool // the merge does not mark the record
	tombFirst   bool // the merge writes the tombstone, then the mark
	noDeadline  bool // a writer sends its row however long after its read
}

const (
	rlIdle  = iota // not started
	rlRead         // read the record at f: not landed
	rlSent         // row sent at s
	rlAcked        // row acknowledged; the writer may mark the record
	rlDone         // answered, crashed, or gave up
	none    = -1
)

type rlAttempt struct{ phase, f, s int8 }

type rlState struct {
	t          int8
	row, tomb  bool // x's N row, x's tombstone (of a valid merge)
	base       int8 // times x was summed by a merge
	landed     bool // some copy of x's row landed
	mark       int8 // when the record's mark first landed
	tombAt     int8 // when the tombstone was written
	markWanted bool // a merge waits to write the mark
	summing    bool // a merge waits for the mark's acknowledgement
	markSent   int8
	merges     int8
	attempts   [3]rlAttempt
	nAttempts  int8
	lastAction string
}

// value is what a reader of the balance would count for x.
func (s *rlState) value() int {
	v := int(s.base)
	if s.row && !s.tomb {
		v++
	}
	return v
}

type rlChecker struct {
	r       rowLedgerRules
	visited map[rlKey]bool
	states  int
	trace   []string
	found   []string // the first violating trace
}

// rlKey is the state without the trace.
type rlKey struct {
	t, base, mark, tombAt, markSent, merges int8
	row, tomb, landed, markWanted, summing  bool
	attempts                                [3]rlAttempt
}

func (s *rlState) key() rlKey {
	k := rlKey{s.t, s.base, s.mark, s.tombAt, s.markSent, s.merges,
		s.row, s.tomb, s.landed, s.markWanted, s.summing, s.attempts}
	// Calls are alike: a state is the same whichever call is where, and
	// what a call no longer uses does not tell states apart.
	for i := range k.attempts {
		switch a := &k.attempts[i]; a.phase {
		case rlIdle, rlAcked, rlDone:
			a.f, a.s = 0, 0
		case rlSent:
			a.f = 0
		}
	}
	slices.SortFunc(k.attempts[:], func(a, b rlAttempt) int {
		return cmp.Or(cmp.Compare(a.phase, b.phase), cmp.Compare(a.f, b.f), cmp.Compare(a.s, b.s))
	})
	return k
}

func checkRowLedger(r rowLedgerRules) (states int, violation []string) {
	c := &rlChecker{r: r, visited: map[rlKey]bool{}}
	init := rlState{mark: none, tombAt: none, markSent: none, nAttempts: int8(r.Attempts)}
	c.explore(init)
	return c.states, c.found
}

func (c *rlChecker) explore(s rlState) {
	if c.found != nil {
		return
	}
	k := s.key()
	if c.visited[k] {
		return
	}
	c.visited[k] = true
	c.states++
	want := 0
	if s.landed {
		want = 1
	}
	if got := s.value(); got != want {
		c.found = append(append([]string(nil), c.trace...),
			fmt.Sprintf("=> x counts %d, want %d", got, want))
		return
	}
	for _, n := range c.next(s) {
		c.trace = append(c.trace, n.lastAction)
		c.explore(n)
		c.trace = c.trace[:len(c.trace)-1]
	}
}

// next lists every state one action away.
func (c *rlChecker) next(s rlState) []rlState {
	r := c.r
	var out []rlState
	add := func(n rlState, format string, args ...any) {
		n.lastAction = fmt.Sprintf("t=%d ", s.t) + fmt.Sprintf(format, args...)
		out = append(out, n)
	}
	t := s.t
	// A record read at t sees a mark that landed by t-D; one that landed
	// later it may or may not see.
	readOutcomes := func() (landed, notLanded bool) {
		switch {
		case s.mark == none || s.mark > t:
			return false, true
		case s.mark <= t-int8(r.D):
			return true, false
		default:
			return true, true
		}
	}
	for i := 0; i < int(s.nAttempts); i++ {
		a := s.attempts[i]
		switch {
		case a.phase == rlIdle || (a.phase == rlRead && !r.noDeadline && t > a.f+int8(r.W)):
			what := "reads x's record"
			if a.phase == rlRead {
				what = "reads x's record again (its deadline passed)"
			}
			yes, no := readOutcomes()
			if yes {
				n := s
				n.attempts[i] = rlAttempt{phase: rlDone}
				add(n, "call %d %s: landed, answers duplicate", i, what)
			}
			if no {
				n := s
				n.attempts[i] = rlAttempt{phase: rlRead, f: t}
				add(n, "call %d %s: not landed", i, what)
			}
		case a.phase == rlRead:
			n := s
			n.attempts[i] = rlAttempt{phase: rlSent, f: a.f, s: t}
			add(n, "call %d sends x's row", i)
		case a.phase == rlSent:
			for _, acked := range []bool{true, false} {
				n := s
				n.row, n.landed = true, true
				n.attempts[i].phase = rlDone
				if acked {
					n.attempts[i].phase = rlAcked
				}
				add(n, "call %d's row lands (acknowledged: %v)", i, acked)
			}
			n := s
			n.attempts[i].phase = rlDone
			add(n, "call %d's row is lost", i)
		case a.phase == rlAcked:
			n := s
			n.attempts[i].phase = rlDone
			if n.mark == none {
				n.mark = t
			}
			add(n, "call %d marks x's record landed", i)
		}
	}
	sum := func(n *rlState) { // the merge's tombstone and sum; the row is deleted at settling
		if n.row && !n.tomb {
			n.base++
			n.tomb, n.tombAt = true, t
		}
		n.row, n.summing = false, false
	}
	if int(s.merges) < r.Merges && s.row && !s.summing {
		n := s
		n.merges++
		switch {
		case s.tomb || r.noMergeMark:
			sum(&n)
			add(n, "a merge sums x's row (or deletes it: cancelled)")
		case r.tombFirst:
			sum(&n)
			n.markWanted = true
			add(n, "a merge sums x's row, writes its tombstone, then will mark x's record")
		default:
			n.markWanted, n.summing = true, true
			add(n, "a merge finds x's row live and will mark x's record")
		}
	}
	if s.markWanted && s.markSent == none {
		n := s
		n.markSent = t
		add(n, "the merge sends the mark of x's record")
	}
	if s.markSent != none {
		n := s
		n.markSent, n.markWanted = none, false
		if n.mark == none {
			n.mark = t
		}
		if n.summing {
			sum(&n)
		}
		add(n, "the mark lands and is acknowledged (then the merge sums x's row)")
		n = s
		n.markSent = none
		if n.mark == none {
			n.mark = t
		}
		add(n, "the mark lands, its acknowledgement is lost (sent again)")
		n = s
		n.markSent = none
		add(n, "the mark is lost (sent again)")
	}
	if s.tomb && t >= s.tombAt+int8(r.G) {
		n := s
		n.tomb, n.row = false, false // with any row it cancels (SPEC.md 9.3 step 7)
		add(n, "a merge collects x's tombstone and deletes the rows it cancels")
	}
	// Time passes only when no write would outlive its bound L.
	if int(t) < r.Horizon {
		ok := s.markSent == none || t+1 <= s.markSent+int8(r.L)
		for i := 0; i < int(s.nAttempts); i++ {
			if a := s.attempts[i]; a.phase == rlSent && t+1 > a.s+int8(r.L) {
				ok = false
			}
		}
		if ok {
			n := s
			n.t++
			add(n, "tick")
		}
	}
	return out
}

func rowLedgerScope() rowLedgerRules {
	r := rowLedgerRules{W: 2, L: 2, D: 1, Attempts: 3, Merges: 3, Horizon: 13}
	if large() {
		r = rowLedgerRules{W: 2, L: 3, D: 2, Attempts: 3, Merges: 3, Horizon: 17}
	}
	r.G = r.W + r.L + r.D
	return r
}

// TestRowLedgerDesign checks the protocol at its bound, G = W + L + D. It
// runs on one goroutine: the race pass (-short) leaves it to the full
// pass.
func TestRowLedgerDesign(t *testing.T) {
	testsize.SkipSequential(t)
	r := rowLedgerScope()
	states, v := checkRowLedger(r)
	if v != nil {
		t.Fatalf("G=%d: %d states, x miscounted:\n%s", r.G, states, strings.Join(v, "\n"))
	}
	t.Logf("W=%d L=%d D=%d G=%d, %d calls, %d merges, %d ticks: %d states, x counted once in each",
		r.W, r.L, r.D, r.G, r.Attempts, r.Merges, r.Horizon, states)
}

// TestRowLedgerDesignBroken shows each rule is needed: without it the
// search finds a schedule that counts x twice. It runs on one goroutine:
// the race pass (-short) leaves it to the full pass.
func TestRowLedgerDesignBroken(t *testing.T) {
	testsize.SkipSequential(t)
	for _, tc := range []struct {
		name   string
		break_ func(*rowLedgerRules)
	}{
		{"grace one tick short", func(r *rowLedgerRules) { r.G-- }},
		{"merge does not mark the record", func(r *rowLedgerRules) { r.noMergeMark = true }},
		{"tombstone before the mark", func(r *rowLedgerRules) { r.tombFirst = true }},
		{"writer has no deadline", func(r *rowLedgerRules) { r.noDeadline = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rowLedgerScope()
			tc.break_(&r)
			states, v := checkRowLedger(r)
			if v == nil {
				t.Fatalf("%d states, no schedule counts x twice", states)
			}
			t.Logf("after %d states:\n%s", states, strings.Join(v, "\n"))
		})
	}
}

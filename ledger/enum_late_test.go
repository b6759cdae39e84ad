package ledger_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestLateCopyEnumerated runs every continuation, to depth 2 on a Sharded
// account for the first, third, ... two-actor scope and on a Book for the
// others, and to depth 1 on the other and for the three-actor scopes
// (depth 1 on both with -short; depths 2 and 3 on both with
// COUNTERKIT_CASES), of schedules that leave a late copy of t1 (SPEC.md
// 6.11 Limits, "Concurrent copies"): A's write of t1 is held in flight; B
// applies the retry and, with a history and folded record of one, folds
// and forgets t1; A's write lands, before or after A restarts, or stays in
// flight; or A then settles the copy and its write of the take-out is
// refused, left ahead of the store (SPEC.md 6.9). The continuations are
// new transactions and retries of t1 on every actor under every fault,
// restarts, flushes, Book evictions, ticks of 70 minutes and 6 hours, and
// deliveries, on a Book and on a Sharded account. Each schedule then
// quiesces and, once idle writers have retired, the value must count
// every landed transaction once: never less (a late copy left out of a
// retired total that no one else counts, or a take-out dropped that the
// retirement counted) nor more. Ticks past RetryWindow are left out: a
// copy landing after its records died stays counted (the stated limit).
func TestLateCopyEnumerated(t *testing.T) {
	t.Parallel()
	// depths gives the depths run on a Book or a Sharded account for the
	// i-th scope. Every scope to depth 2 on both takes 15 s of CPU: by
	// default each two-actor scope goes to depth 2 on one of them, in
	// turn, and to depth 1 on the other; the three-actor ones (extensions
	// of two-actor ones, with 36 steps) to depth 1.
	depths := func(i int, p lateScope, book bool) []int {
		switch {
		case testing.Short():
			return []int{1}
		case proptest.Scale(1) > 1:
			return []int{2, 3}
		case p.actors == 2 && book == (i%2 == 1):
			return []int{2}
		}
		return []int{1}
	}
	for i, p := range lateScopes() {
		for _, book := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/book=%v", p.name, book), func(t *testing.T) {
				for _, depth := range depths(i, p, book) {
					n, fails := p.enumerate(book, depth, 3)
					for _, err := range fails {
						t.Errorf("%v", err)
					}
					t.Logf("%d schedules (depth %d), %d failures", n, depth, len(fails))
				}
			})
		}
	}
}

// lateScope is a schedule that leaves a late copy of t1 (TestLateCopyEnumerated).
type lateScope struct {
	name   string
	actors int
	steps  []enumStep
}

func lateScopes() []lateScope {
	const A, B = 0, 1
	nw := func(a int, f string) enumStep { return enumStep{op: "new", actor: a, fault: f} }
	retry := enumStep{op: "retry", actor: B, txn: 0}
	forgets := []enumStep{nw(B, ""), nw(B, ""), nw(B, "")} // B folds and forgets t1
	lands := enumStep{op: "deliver"}
	restart := enumStep{op: "restart", actor: A}
	return []lateScope{
		{"dead-landed", 2, slices.Concat([]enumStep{nw(A, "holdAll"), restart, retry}, forgets, []enumStep{lands})},
		{"alive-landed", 2, slices.Concat([]enumStep{nw(A, "holdAll"), retry}, forgets, []enumStep{lands})},
		{"alive-refused-takeout", 2, slices.Concat([]enumStep{nw(A, "holdAll"), retry}, forgets, []enumStep{lands, nw(A, "refuseAll")})},
		{"dead-inflight", 2, []enumStep{nw(A, "holdAll"), restart, retry, nw(B, ""), nw(B, "")}},
		{"alive-inflight", 2, []enumStep{nw(A, "holdAll"), retry, nw(B, "")}},
		{"three-dead-landed", 3, slices.Concat([]enumStep{nw(A, "holdAll"), restart, retry}, forgets, []enumStep{lands})},
		{"three-alive-refused", 3, slices.Concat([]enumStep{nw(A, "holdAll"), retry}, forgets, []enumStep{lands, nw(A, "refuseAll")})},
	}
}

// enumerate runs every continuation of p's steps to depth, on a Book or a
// Sharded account, stopping after stop failures; it returns the number
// of schedules run and the failures.
func (p lateScope) enumerate(book bool, depth, stop int) (n int, fails []error) {
	small := func(o *ledger.Options) {
		o.MaxGroup = 1
		o.Counter = tpncounter.Options{HistoryLength: 1, FoldedLength: 1}
	}
	ids := []crdt.TxnID{"t1", "t3", "t5", "t7", "t9", "t21", "t23", "t25", "t27"} // one sub-key of 2
	faults := []string{"", "holdAll", "refuseAll", "stale", "recRefuse"}
	if p.actors == 3 {
		faults = faults[:4]
	}
	var alpha []enumStep
	for a := range p.actors {
		for _, f := range faults {
			alpha = append(alpha, enumStep{op: "new", actor: a, fault: f}, enumStep{op: "retry", actor: a, txn: 0, fault: f})
		}
		alpha = append(alpha, enumStep{op: "restart", actor: a}, enumStep{op: "flush", actor: a})
		if book {
			alpha = append(alpha, enumStep{op: "evict", actor: a})
		}
	}
	alpha = append(alpha, enumStep{op: "tick", d: 70 * time.Minute}, enumStep{op: "tick", d: 6 * time.Hour}, enumStep{op: "deliver"})
	var walk func(s []enumStep, d int)
	walk = func(s []enumStep, d int) {
		if len(fails) >= stop {
			return
		}
		if d == 0 {
			n++
			if _, err := enumRun(enumMode{eventual: true}, book, p.actors, s, small, ids...); err != nil {
				fails = append(fails, err)
			}
			return
		}
		for _, st := range alpha {
			walk(append(slices.Clip(s), st), d-1)
		}
	}
	walk(p.steps, depth)
	return n, fails
}

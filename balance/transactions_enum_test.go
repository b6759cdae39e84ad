package balance_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/stamp"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store/faulty"
)

// This file enumerates every sequence of a few Transactions operations on
// one transaction x (7), with the faults and clock steps SPEC.md 9.4's
// timing allows, on the real driver over the memory store, and checks the
// promise after every step: x counts 7 once a copy landed and 0 before;
// and a call made less than RetryWindow after a merge's records of x were
// acknowledged (every clock within FutureSkew) answers duplicate.

// txnAction is one step of a sequence.
type txnAction struct {
	name string
	run  func(w *txnWorld) error
}

// txnWorld is one run: a store, a clock, writers at clock offsets 0 and
// +FutureSkew, and what the checks need to know.
type txnWorld struct {
	ctx         context.Context
	c           *testClock
	st          *faulty.Partitions
	w0, w1      *balance.Transactions
	o           balance.TxnOptions
	rowFault    faulty.Fault // the fault of the next row write
	mergeWrites int          // writes of the merge running, and the one that fails
	failAt      int
	inMerge     bool
	held        []time.Time // sends of the held row writes, oldest first
	landed      bool
	recordedAt  time.Time // when a merge that completed recorded x (zero: none)
	stall       bool      // the next lookup of w1 is followed by a merge and settling
	inside      bool      // the next lookup of w1 is followed by a merge, its write by none
	illegal     bool      // the sequence broke the timing assumptions: skip it
}

// worldStart returns when a new run's clocks start: a day after every
// write stamp the process has handed out, and no earlier than from. The
// process's write clock never goes back (internal/stamp), so a run whose
// clocks started earlier would stamp its writes ahead of them. Runs start
// where the last one's writes ended, not a fixed span after its start, so
// that a long enumeration's clocks stay inside the timeuuid's range (year
// 5236; later times are clamped, timeid.New).
func worldStart(from time.Time) time.Time {
	return time.UnixMicro(stamp.Reserve(from, 1)).UTC().Add(24 * time.Hour)
}

func newTxnWorld() *txnWorld {
	w := &txnWorld{ctx: context.Background(), c: &testClock{t: worldStart(t0)}}
	w.st = faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
	w.st.SetPolicy(func(call faulty.Call) faulty.Fault {
		switch {
		case call.Method != faulty.MethodApply:
			return faulty.Pass
		case w.inMerge:
			if w.mergeWrites++; w.mergeWrites == w.failAt {
				return faulty.Refuse
			}
			return faulty.Pass
		case !strings.Contains(call.Key, "#txn."):
			f := w.rowFault
			w.rowFault = faulty.Pass
			return f
		}
		return faulty.Pass
	})
	mk := func(off time.Duration) *balance.Transactions {
		tx, err := balance.NewTransactions(w.st, balance.TxnOptions{Options: balance.Options{Clock: func() time.Time { return w.c.Now().Add(off) }}})
		if err != nil {
			panic(err)
		}
		return tx
	}
	w.w0 = mk(0)
	w.o = w.w0.Options()
	w.w1 = mk(w.o.FutureSkew)
	w.st.SetHook(func(_ context.Context, call faulty.Call, after bool) error {
		if after && call.Method == faulty.MethodScan && w.stall {
			// A writer stalls between its record read and its write
			// while x is merged, recorded and settled.
			w.stall = false
			w.c.Add(time.Second)
			_ = w.merge(0)
			w.c.Add(w.o.SettleGrace + time.Second)
			_ = w.merge(0)
		}
		if after && call.Method == faulty.MethodScan && w.inside {
			// A writer reads no record, a merge records and sums
			// another copy, then the writer's copy lands: placed after
			// the merge's tombstone and sum (SPEC.md 9.4).
			w.inside = false
			w.c.Add(time.Second)
			_ = w.merge(0)
		}
		return nil
	})
	return w
}

// apply calls Apply on tx with the next row write's fault f, and checks the
// answer against the records.
func (w *txnWorld) apply(tx *balance.Transactions, f faulty.Fault) error {
	asked := w.c.Now()
	if !w.recordedAt.IsZero() && asked.Sub(w.recordedAt) >= w.o.RetryWindow-w.o.FutureSkew {
		w.illegal = true // past the window: an untimed retry may count again
		return nil
	}
	w.rowFault = f
	before := w.st.Held()
	out, err := tx.Apply(w.ctx, acct, "x", 7)
	w.rowFault = faulty.Pass
	if w.st.Held() > before {
		w.held = append(w.held, w.c.Now())
	}
	if f == faulty.LoseAck || (err == nil && out == balance.Applied) {
		w.landed = true
	}
	if err != nil && !errors.Is(err, crdt.ErrAmbiguousWrite) {
		return fmt.Errorf("apply: %w", err)
	}
	if err == nil && out != balance.Duplicate && !w.recordedAt.IsZero() && !asked.Before(w.recordedAt) {
		return fmt.Errorf("apply %v after x was recorded: %v, want duplicate", asked.Sub(w.recordedAt), out)
	}
	return nil
}

// merge runs w0's Merge, its write failAt refused (0: none).
func (w *txnWorld) merge(failAt int) error {
	w.inMerge, w.mergeWrites, w.failAt = true, 0, failAt
	start := w.c.Now()
	reps, err := w.w0.Merge(w.ctx, acct)
	w.inMerge = false
	if err == nil {
		for _, r := range reps {
			if len(r.Tombstones) > 0 && w.landed && w.recordedAt.IsZero() {
				w.recordedAt = start
			}
		}
	}
	if err != nil && !errors.Is(err, crdt.ErrUnavailable) {
		return fmt.Errorf("merge: %w", err)
	}
	return nil
}

// deliver lands the oldest held row write the latency bound still allows
// to land (older ones never will).
func (w *txnWorld) deliver() error {
	for i, sent := range w.held {
		if w.c.Now().Sub(sent) <= w.o.SafetyMargin-2*w.o.FutureSkew {
			w.held = append(w.held[:i], w.held[i+1:]...)
			w.landed = true
			return w.st.Deliver(i)
		}
	}
	w.illegal = true
	return nil
}

func txnActions() []txnAction {
	return []txnAction{
		{"A", func(w *txnWorld) error { return w.apply(w.w0, faulty.Pass) }},
		{"A+", func(w *txnWorld) error { return w.apply(w.w1, faulty.Pass) }},
		{"Ahold", func(w *txnWorld) error { return w.apply(w.w0, faulty.Hold) }},
		{"Alose", func(w *txnWorld) error { return w.apply(w.w0, faulty.LoseAck) }},
		{"Astall", func(w *txnWorld) error { w.stall = true; return w.apply(w.w1, faulty.Pass) }},
		{"Ainside", func(w *txnWorld) error { w.inside = true; return w.apply(w.w1, faulty.Pass) }},
		{"deliver", func(w *txnWorld) error { return w.deliver() }},
		{"M", func(w *txnWorld) error { return w.merge(0) }},
		{"Mcrash1", func(w *txnWorld) error { return w.merge(1) }},
		{"Mcrash2", func(w *txnWorld) error { return w.merge(2) }},
		{"t20s", func(w *txnWorld) error { w.c.Add(20 * time.Second); return nil }},
		{"tSettle", func(w *txnWorld) error { w.c.Add(w.o.SettleGrace + time.Second); return nil }},
		{"tRetry", func(w *txnWorld) error { w.c.Add(w.o.RetryWindow - 2*w.o.FutureSkew - time.Minute); return nil }},
	}
}

// runTxnSequence runs one sequence and returns the first violation.
func runTxnSequence(seq []txnAction) error {
	w := newTxnWorld()
	var trace []string
	for _, a := range seq {
		trace = append(trace, a.name)
		if err := a.run(w); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(trace, " "), err)
		}
		if w.illegal {
			return nil
		}
		want := int64(0)
		if w.landed {
			want = 7
		}
		got, err := w.w0.Balance(w.ctx, acct)
		if err != nil || got != want {
			return fmt.Errorf("%s: balance %d (%v), want %d", strings.Join(trace, " "), got, err, want)
		}
	}
	return nil
}

// enumerateTxn runs every sequence of n actions and returns how many.
func enumerateTxn(n int) (int, error) {
	acts := txnActions()
	idx := make([]int, n)
	runs := 0
	for {
		seq := make([]txnAction, n)
		for i, k := range idx {
			seq[i] = acts[k]
		}
		runs++
		if err := runTxnSequence(seq); err != nil {
			return runs, err
		}
		i := n - 1
		for ; i >= 0 && idx[i] == len(acts)-1; i-- {
			idx[i] = 0
		}
		if i < 0 {
			return runs, nil
		}
		idx[i]++
	}
}

// TestTransactionsEveryScheduleCountsOnce: every sequence of 3 steps (4
// with COUNTERKIT_CASES above 1, 5 with it at 10 or more) of 13
// operations.
func TestTransactionsEveryScheduleCountsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("2,197 sequences; the first pass runs them")
	}
	n := 3
	if s := proptest.Scale(1); s >= 10 {
		n = 5
	} else if s > 1 {
		n = 4
	}
	runs, err := enumerateTxn(n)
	if err != nil {
		t.Fatalf("after %d sequences: %v", runs, err)
	}
	t.Logf("%d sequences of %d steps: x counted once, every retry inside the window a duplicate", runs, n)
}

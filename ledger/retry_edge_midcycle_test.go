package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// edgeKey is the account of the retry-window edge tests.
const edgeKey = "acct"

// TestRetryMidCycleRecognised: writer A credits x (no fault, its Put's
// acknowledgement lost, or its record Put refused); before or after each
// of the first 220 store calls of that credit, writer B (a Ledger, or a
// Book with MaxOpen 1) retries x. Then each writer makes 25 more credits
// (past its history), and x is retried through each writer and a fresh
// one a minute, two hours and 22 hours later. Every retry after A's or
// B's acknowledged Applied must be a duplicate, and the value exact. By
// default B retries before and after each odd-numbered call, so once at
// every point between two calls (before and after every call with
// COUNTERKIT_CASES set); the race pass (-short) runs every eighth of
// these cases.
func TestRetryMidCycleRecognised(t *testing.T) {
	var s sampler
	odd := proptest.Scale(1) == 1 // before k+1 is after k but for concurrent calls
	for _, bBook := range []bool{false, true} {
		for _, after := range []bool{false, true} {
			for _, fault := range []string{"none", "loseack", "recordrefused"} {
				for k := 1; k <= 220; k++ {
					if odd && k%2 == 0 {
						continue
					}
					if s.skip() {
						continue
					}
					name := fmt.Sprintf("bBook=%v/after=%v/fault=%s/call=%d", bBook, after, fault, k)
					t.Run(name, func(t *testing.T) { midCycleRetry(t, bBook, after, fault, k) })
				}
			}
		}
	}
}

func midCycleRetry(t *testing.T, bBook, after bool, fault string, k int) {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	var mu sync.Mutex // the log; a ledger may make calls from several goroutines
	var log []string
	logf := func(f string, a ...any) { mu.Lock(); log = append(log, fmt.Sprintf(f, a...)); mu.Unlock() }
	var inA, injected, lostAck atomic.Bool
	var n atomic.Int64
	var bRetry func()
	first := true // A's first credit (x); set before any other goroutine runs
	fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{
		Policy: func(c faulty.Call) faulty.Fault {
			if !inA.Load() || !first {
				return faulty.Pass
			}
			switch fault {
			case "loseack":
				if c.Method == faulty.MethodPut && c.Key == edgeKey && lostAck.CompareAndSwap(false, true) {
					return faulty.LoseAck
				}
			case "recordrefused":
				if c.Method == faulty.MethodPut && ledger.IsRecordKey(c.Key) {
					return faulty.Refuse
				}
			}
			return faulty.Pass
		},
	})
	fs.SetHook(func(_ context.Context, c faulty.Call, isAfter bool) error {
		if !inA.Load() || injected.Load() || isAfter != after {
			return nil
		}
		if n.Add(1) == int64(k) && injected.CompareAndSwap(false, true) {
			logf("  -- B retries x %s A's call %d: %v", map[bool]string{false: "before", true: "after"}[after], k, c)
			inA.Store(false)
			bRetry()
			inA.Store(true)
		}
		return nil
	})
	opts := func(actor crdt.ActorID) ledger.Options {
		return ledger.Options{Actor: actor, Clock: clock, Backoff: ledger.Backoff{Initial: -1}}
	}
	a, err := ledger.New(fs, edgeKey, opts("a"))
	if err != nil {
		t.Fatal(err)
	}
	var bl *ledger.Ledger
	var bb *ledger.Book
	if bBook {
		bb, err = ledger.NewBook(fs, ledger.BookOptions{Options: opts("b"), MaxOpen: 1})
	} else {
		bl, err = ledger.New(fs, edgeKey, opts("b"))
	}
	if err != nil {
		t.Fatal(err)
	}
	credit := func(name string, x crdt.TxnID, amount int64) (tpncounter.Outcome, error) {
		var res ledger.Result
		var err error
		switch {
		case name == "a":
			inA.Store(true)
			res, err = a.Credit(ctx, x, amount)
			inA.Store(false)
		case bBook:
			var br ledger.BookResult
			br, err = bb.Credit(ctx, edgeKey, x, amount)
			res = br.Result
		default:
			res, err = bl.Credit(ctx, x, amount)
		}
		logf("%s credit %s: %v landed=%v value=%d err=%v", name, x, res.Outcome, res.Landed, res.Value, err)
		return res.Outcome, err
	}
	var promised bool
	var bad []string
	check := func(who string, out tpncounter.Outcome, err error) {
		if promised && out == tpncounter.Applied && (err == nil || errors.Is(err, crdt.ErrAmbiguousWrite)) {
			bad = append(bad, who+": retry applied again")
		}
		if err == nil && out == tpncounter.Applied {
			promised = true
		}
	}
	bRetry = func() {
		out, err := credit("b", "x", 1000)
		check("b mid-cycle", out, err)
		if bBook {
			// the Book drops it, if it may
			_, _ = bb.Credit(ctx, "other", "o1", 1)
		}
	}
	out, err := credit("a", "x", 1000)
	first = false
	check("a", out, err)
	fill := 0
	for range 25 {
		for _, w := range []string{"a", "b"} {
			fill++
			if _, err := credit(w, crdt.TxnID(fmt.Sprintf("f%d", fill)), 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, step := range []time.Duration{time.Minute, 2 * time.Hour, 20 * time.Hour} {
		now = now.Add(step)
		for _, w := range []string{"a", "b"} {
			out, err := credit(w, "x", 1000)
			check(w+" later", out, err)
			fill++
			if _, err := credit(w, crdt.TxnID(fmt.Sprintf("f%d", fill)), 1); err != nil {
				t.Fatal(err)
			}
		}
		c, err := ledger.New(fs, edgeKey, opts("c"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Credit(ctx, "x", 1000)
		logf("c credit x: %v err=%v", res.Outcome, err)
		check("fresh c", res.Outcome, err)
	}
	if !injected.Load() {
		t.Skip("A made fewer calls")
	}
	r, err := ledger.New(fs, edgeKey, opts("reader"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := r.Value(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(1000 + fill); v != want {
		bad = append(bad, fmt.Sprintf("value %d, want %d", v, want))
	}
	if len(bad) > 0 {
		t.Fatalf("%s\n%s", strings.Join(bad, "\n"), strings.Join(log, "\n"))
	}
}

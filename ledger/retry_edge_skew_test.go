package ledger_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestRetryAtWindowEdgeWithSkew: A (clock off by sa) applies x, acknowledged
// or ambiguous (a lost acknowledgement, then a refused read, its record
// written by A's next write, or by B retiring A when A stops); A's entry
// then forgets x (25 more credits, or its retirement). B (clock off by sb)
// retries x at the last nanosecond the window promises, less what the
// stated clock limit takes (SPEC.md 6.11 Limits, Clocks: a clock behind
// by d shortens the window by d): W − 1ns − max(0, sb − sa) after the
// landing. It must be a duplicate, and the value exact.
func TestRetryAtWindowEdgeWithSkew(t *testing.T) {
	skews := []time.Duration{-30 * time.Second, 0, 30 * time.Second}
	for _, sa := range skews {
		for _, sb := range skews {
			for _, mode := range []string{"acked", "ambiguous-then-A-writes", "ambiguous-then-A-stops"} {
				for _, bBook := range []bool{false, true} {
					t.Run(fmt.Sprintf("sa=%v/sb=%v/%s/bBook=%v", sa, sb, mode, bBook), func(t *testing.T) {
						edgeRetry(t, sa, sb, mode, bBook)
					})
				}
			}
		}
	}
}

func edgeRetry(t *testing.T, sa, sb time.Duration, mode string, bBook bool) {
	ctx := context.Background()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	var script []faulty.Fault
	fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{Policy: func(c faulty.Call) faulty.Fault {
		if c.Key != edgeKey || len(script) == 0 {
			return faulty.Pass
		}
		f := script[0]
		script = script[1:]
		return f
	}})
	opts := func(actor crdt.ActorID, skew time.Duration) ledger.Options {
		return ledger.Options{Actor: actor, Clock: func() time.Time { return now.Add(skew) }, Backoff: ledger.Backoff{Initial: -1}}
	}
	a, err := ledger.New(fs, edgeKey, opts("a", sa))
	if err != nil {
		t.Fatal(err)
	}
	var bl *ledger.Ledger
	var bb *ledger.Book
	if bBook {
		bb, err = ledger.NewBook(fs, ledger.BookOptions{Options: opts("b", sb), MaxOpen: 1})
	} else {
		bl, err = ledger.New(fs, edgeKey, opts("b", sb))
	}
	if err != nil {
		t.Fatal(err)
	}
	credit := func(name string, x crdt.TxnID) (ledger.Result, error) {
		switch {
		case name == "a":
			return a.Credit(ctx, x, 1000)
		case bBook:
			r, err := bb.Credit(ctx, edgeKey, x, 1000)
			return r.Result, err
		}
		return bl.Credit(ctx, x, 1000)
	}
	fills := 0
	fill := func(name string, n int) {
		for range n {
			fills++
			if _, err := credit(name, crdt.TxnID(fmt.Sprintf("f%d", fills))); err != nil {
				t.Fatal(err)
			}
		}
	}
	fill("b", 1)
	if mode != "acked" {
		// fetch, put (ack lost), fetch refused
		script = []faulty.Fault{faulty.Pass, faulty.LoseAck, faulty.Refuse}
	}
	res, err := credit("a", "x")
	script = nil
	t.Logf("a credit x: %v %v", res.Outcome, err)
	landed := now
	switch mode {
	case "acked", "ambiguous-then-A-writes":
		fill("a", 25)
	case "ambiguous-then-A-stops":
		// b retires a after RetireAfter (records x first)
		now = now.Add(ledger.DefaultRetireAfter + time.Minute)
		fill("b", 2)
		now = now.Add(ledger.DefaultRetireAfter + time.Minute)
		fill("b", 2)
	}
	now = landed.Add(ledger.DefaultRetryWindow - 1 - max(0, sb-sa))
	chk, err := ledger.New(fs, edgeKey, opts("check", 0))
	if err != nil {
		t.Fatal(err)
	}
	if has, err := chk.HasTransaction(ctx, "x"); err != nil || has {
		t.Fatalf("the counter still holds x (%v, %v): the record is not what recognises the retry", has, err)
	}
	r, err := credit("b", "x")
	if err != nil || r.Outcome == tpncounter.Applied {
		t.Errorf("retry at the window's edge: %v %v", r.Outcome, err)
	}
	rd, err := ledger.New(fs, edgeKey, opts("reader", 0))
	if err != nil {
		t.Fatal(err)
	}
	v, err := rd.Value(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(1000 + fills*1000); v != want {
		t.Errorf("value %d, want %d", v, want)
	}
}

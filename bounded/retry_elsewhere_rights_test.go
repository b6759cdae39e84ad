package bounded_test

import (
	"context"
	"errors"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
)

// ivFaultOnKey fails the account key's Puts of one wrapper with the
// given faults in order (then passes).
func ivFaultOnKey(faults ...faulty.Fault) faulty.Policy {
	i := 0
	return func(c faulty.Call) faulty.Fault {
		if c.Method != faulty.MethodPut || c.Key != ivKey || i >= len(faults) {
			return faulty.Pass
		}
		i++
		return faults[i-1]
	}
}

func ivOpen(t *testing.T, st *faulty.Siblings, actor crdt.ActorID) *bounded.Account {
	t.Helper()
	a, err := bounded.Open(st, ivKey, bounded.AccountOptions{Actor: actor, RetryCount: 1, Backoff: bounded.Backoff{Initial: -1}, Clock: ivClock})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestRetryElsewhereLeavesNoRightsStranded: a credit answered
// ErrAmbiguousWrite on a (its Put refused, then lost), retried on b as
// SPEC 13.5 expects callers may ("a retry elsewhere while the first write
// is in doubt"), is acknowledged there. a's next write lands its pending
// copy; a is the smaller holder, so b takes its copy back: x counts once,
// by a's copy, and a holds its 3 rights. No call of x comes to a again,
// but x's record, once written, takes x out of a's unconfirmed credits
// (SPEC.md 13.5), so a grants b's request and b's debit of 3 goes
// through. Before, x stayed unconfirmed while a lived and the debit was
// refused for ever.
func TestRetryElsewhereLeavesNoRightsStranded(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	sa := faulty.NewSiblings(mem, faulty.Options{Policy: ivFaultOnKey(faulty.Refuse, faulty.Lose)})
	sb := faulty.NewSiblings(mem, faulty.Options{})
	a, b := ivOpen(t, sa, "a"), ivOpen(t, sb, "b")
	if _, err := a.Credit(ctx, "x", 3); !errors.Is(err, crdt.ErrAmbiguousWrite) {
		t.Fatalf("a's credit: %v, want ambiguous", err)
	}
	if res, err := b.Credit(ctx, "x", 3); err != nil || res.Outcome != bounded.Applied {
		t.Fatalf("b's retry: %+v %v", res, err)
	}
	for _, acc := range []*bounded.Account{a, b, a, b} {
		if _, err := acc.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c, err := a.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Value() != 3 || len(c.Holders("x")) != 1 || c.Rights(a.Writer()) != 3 {
		t.Fatalf("value %d, holders %v, a's rights %d: want 3, one copy, 3", c.Value(), c.Holders("x"), c.Rights(a.Writer()))
	}
	// b asks; a syncs (it would grant its spare rights); b debits again.
	_, err = b.Debit(ctx, "d", 3)
	var ir *bounded.InsufficientRightsError
	if !errors.As(err, &ir) {
		t.Fatalf("b's debit: %v, want insufficient rights (it asks)", err)
	}
	if _, err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Debit(ctx, "d", 3); err != nil {
		t.Errorf("b's debit of 3 after a's sync: %v; the value is 3 and a, live, holds all 3 rights", err)
	}
}

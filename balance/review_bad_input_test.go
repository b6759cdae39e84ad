package balance_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
)

// Every Transactions method refuses an account Apply refuses (an invalid
// key, one past MaxTxnAccountLen, one containing '#') with
// crdt.ErrInvalidKey, and Recorded an invalid transaction id with
// crdt.ErrInvalidTxnID, writing nothing; Apply and Merge with a clock
// before 1970 are crdt.ErrInvalidConfig, nothing written (SPEC.md 9.4
// "Places").
func TestReviewBadInputEveryMethod(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	mem := &countWrites{Partitions: memory.NewPartitions()}
	tx := newTxns(t, mem, c)
	mustApply(t, tx, "x", 1, balance.Applied)
	before := mem.n.Load()
	accounts := []string{"", "a#0", "a#txn.1.1", "#", strings.Repeat("a", balance.MaxTxnAccountLen+1), "a\xff", "a\x00b"}
	for _, a := range accounts {
		calls := map[string]error{}
		_, calls["Balance"] = tx.Balance(ctx, a)
		_, calls["Conflicts"] = tx.Conflicts(ctx, a)
		_, calls["Merge"] = tx.Merge(ctx, a)
		_, calls["Recorded"] = tx.Recorded(ctx, a, "x")
		calls["Delete"] = tx.Delete(ctx, a)
		_, calls["Apply"] = tx.Apply(ctx, a, "x", 1)
		for m, err := range calls {
			if !errors.Is(err, crdt.ErrInvalidKey) {
				t.Errorf("%s(%q) = %v, want crdt.ErrInvalidKey", m, a, err)
			}
		}
	}
	for _, id := range []crdt.TxnID{"", crdt.TxnID(strings.Repeat("x", 300)), "a\xff"} {
		if _, err := tx.Recorded(ctx, acct, id); !errors.Is(err, crdt.ErrInvalidTxnID) {
			t.Errorf("Recorded(%q) = %v, want crdt.ErrInvalidTxnID", id, err)
		}
		if _, err := tx.Apply(ctx, acct, id, 1); !errors.Is(err, crdt.ErrInvalidTxnID) {
			t.Errorf("Apply(%q) = %v, want crdt.ErrInvalidTxnID", id, err)
		}
	}
	if n := mem.n.Load(); n != before {
		t.Errorf("refused calls wrote %d batches", n-before)
	}
	c.Set(time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC))
	if _, err := tx.Apply(ctx, acct, "y", 1); !errors.Is(err, crdt.ErrInvalidConfig) {
		t.Errorf("Apply before 1970 = %v", err)
	}
	if _, err := tx.Merge(ctx, acct); !errors.Is(err, crdt.ErrInvalidConfig) {
		t.Errorf("Merge before 1970 = %v", err)
	}
	if n := mem.n.Load(); n != before {
		t.Errorf("calls before 1970 wrote %d batches", n-before)
	}
}

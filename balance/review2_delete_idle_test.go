package balance_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

// Transactions.Delete removes the account: "its row partitions; the record
// partitions of every window a record not yet expired can be in (those its
// merges wrote before, as expiry bounds them, however long the account
// idled ...)". When Delete returns nil, no partition the account ever
// wrote may hold a row, whether the account idled or not, and whether the
// reads Delete makes to find old windows were answered or refused.
func TestReview2DeleteIdleAccountLeavesNothing(t *testing.T) {
	for _, idle := range []time.Duration{0, 2 * 24 * time.Hour, 6 * 24 * time.Hour, 40 * 24 * time.Hour} {
		for _, refuse := range []string{"none", "rows", "mark", "all"} {
			t.Run(fmt.Sprintf("idle%v/refuse-%s", idle, refuse), func(t *testing.T) {
				ctx := context.Background()
				c := &testClock{t: worldStart(t0)}
				mem := memory.NewPartitions()
				st := faulty.NewPartitions(mem, faulty.Options{})
				written := map[string]bool{}
				inDelete := false
				st.SetPolicy(func(call faulty.Call) faulty.Fault {
					for _, m := range call.Batch {
						if m.Op == store.OpPut {
							written[m.Partition] = true
						}
					}
					if !inDelete || !faulty.IsRead(call.Method) {
						return faulty.Pass
					}
					isMark := strings.HasSuffix(call.Key, "#txn.expired")
					isRows := !strings.Contains(call.Key, "#txn.")
					switch {
					case refuse == "all" && (isMark || isRows),
						refuse == "rows" && isRows,
						refuse == "mark" && isMark:
						return faulty.Refuse
					}
					return faulty.Pass
				})
				tx, err := balance.NewTransactions(st, balance.TxnOptions{Partitions: 2, RecordShards: 2,
					Options: balance.Options{Clock: c.Now}})
				if err != nil {
					t.Fatal(err)
				}
				for i := range 6 {
					if _, err := tx.Apply(ctx, acct, crdt.TxnID(fmt.Sprintf("t%d", i)), int64(i+1)); err != nil {
						t.Fatal(err)
					}
					c.Add(time.Second)
					if _, err := tx.Merge(ctx, acct); err != nil {
						t.Fatal(err)
					}
					c.Add(70 * time.Second)
				}
				c.Add(idle)
				inDelete = true
				err = tx.Delete(ctx, acct)
				inDelete = false
				if err != nil {
					t.Logf("Delete: %v (called again)", err)
					if err := tx.Delete(ctx, acct); err != nil {
						t.Fatal(err)
					}
				}
				var left []string
				for p := range written {
					rows, err := mem.Snapshot(ctx, p, 1000, store.ReadAny)
					if err != nil {
						t.Fatal(err)
					}
					if len(rows) > 0 {
						left = append(left, fmt.Sprintf("%s (%d rows)", p, len(rows)))
					}
				}
				sort.Strings(left)
				if len(left) > 0 {
					t.Errorf("Delete returned nil, but partitions still hold rows: %v", left)
				}
			})
		}
	}
}

package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
)

// forgetRecords is a store whose transaction records (ledger.IsRecordKey)
// always read empty and whose record writes are dropped: a ledger over it
// knows only what its counter's history holds (tpncounter HistoryLength +
// FoldedLength transactions per writer), the broken variant the late
// retries below must catch.
type forgetRecords struct{ store.Siblings }

func (f forgetRecords) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	if ledger.IsRecordKey(key) {
		return nil, nil, nil
	}
	return f.Siblings.Fetch(ctx, key)
}

func (f forgetRecords) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	if ledger.IsRecordKey(key) {
		return nil
	}
	return f.Siblings.Put(ctx, key, actor, value, token)
}

// lateWorkload is 10,001 transactions on one account through the example's
// actors, faults and concurrent deliveries (30% to two actors at once), then the first transaction
// delivered once more: a retry after 10,000 other transactions, seconds
// after its first application, so inside the default retry window. The
// actors retry at once (no backoff between attempts), which keeps the test
// short and changes nothing the window depends on.
func lateWorkload(seed int64) workload {
	return workload{seed: seed, txns: 10_001, actors: 4, dup: 0.3, accounts: 1, late: 1, backoff: ledger.Backoff{Initial: -1}}
}

// TestWithoutRecordsLateRetryCountsTwice runs late retries over
// forgetRecords: each is applied again, and run reports both the wrong
// balance and the late retry counted again. The retry after 10,000
// transactions (lateWorkload, about 10 s of CPU with -race) runs when
// COUNTERKIT_CASES is above 1.
func TestWithoutRecordsLateRetryCountsTwice(t *testing.T) {
	cases := []struct {
		name string
		w    workload
	}{
		// One actor, about 67 credits and 33 debits after the first
		// transaction: beyond its entry's history either way.
		{"after 100", workload{seed: 1, txns: 101, actors: 1, accounts: 1, late: 1}},
	}
	if casesScale() > 1 {
		cases = append(cases, struct {
			name string
			w    workload
		}{"after 10,000", lateWorkload(1)})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := run(forgetRecords{memory.NewSiblings()}, c.w)
			if err == nil || r == nil {
				t.Fatalf("run %+v without records: %v, want the double count found", c.w, err)
			}
			for _, want := range []string{"a balance differs", "1 late retries inside the retry window were applied again"} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("run without records: %v; want %q", err, want)
				}
			}
			if r.lateApplied != 1 {
				t.Fatalf("late retry without records: %d applied, want 1", r.lateApplied)
			}
			t.Logf("without records: %v", err)
		})
	}
}

// casesScale is COUNTERKIT_CASES (1 when unset or malformed).
func casesScale() float64 {
	f, err := strconv.ParseFloat(os.Getenv("COUNTERKIT_CASES"), 64)
	if err != nil || f <= 0 {
		return 1
	}
	return f
}

package ledger_test

// Probes of a writer dies with its write or record in
// doubt; the client's retries go to other instances for a day.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// dieWith runs pay-0's first delivery on a ledger of actor "dead" whose
// first Put of kind (the account key or the record) gets fault, and the
// next ones are refused, and then drops that ledger (a crash: nothing of it runs again).
func dieWith(t *testing.T, mem *memory.Siblings, c *promiseClock, record bool, fault faulty.Fault) *faulty.Siblings {
	t.Helper()
	var mu sync.Mutex
	done := false
	policy := func(call faulty.Call) faulty.Fault {
		mu.Lock()
		defer mu.Unlock()
		if call.Method != faulty.MethodPut || ledger.IsRecordKey(call.Key) != record {
			return faulty.Pass
		}
		if done {
			return faulty.Refuse // the store stays down until the crash
		}
		done = true
		return fault
	}
	st := faulty.NewSiblings(mem, faulty.Options{Policy: faulty.Policy(policy)})
	l, err := ledger.New(st, "acct", promiseOpts("dead", c))
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Credit(context.Background(), "pay-0", 100)
	t.Logf("first delivery (dies after): %+v %v", r, err)
	return st
}

// TestPromiseRetryAfterWriterDied: the first delivery's writer dies
// with its account write or its record in doubt; the client retries on
// instance b at once, b takes 10,000 other credits over the next day
// (2,000 with -short), and
// the retries at +1 h and +23 h 59 m on new instances are duplicates; the
// value counts pay-0 once at the end (and, for a write held in flight that
// lands late, once the limit of SPEC.md 6.11 has passed: RetireAfter and
// a pass interval after the dead entry last changed).
func TestPromiseRetryAfterWriterDied(t *testing.T) {
	for _, tc := range []struct {
		name   string
		record bool
		fault  faulty.Fault
	}{
		{"account put lost ack", false, faulty.LoseAck},
		{"account put lost", false, faulty.Lose},
		{"account put held", false, faulty.Hold},
		{"record put lost ack", true, faulty.LoseAck},
		{"record put refused", true, faulty.Refuse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := newPromiseClock()
			mem := memory.NewSiblings()
			st := dieWith(t, mem, c, tc.record, tc.fault)
			b, _ := ledger.New(mem, "acct", promiseOpts("b", c))
			r, err := b.Credit(ctx, "pay-0", 100)
			if err != nil || (r.Outcome != tpncounter.Applied && !isDuplicate(r.Outcome)) || r.Value != 100 {
				t.Fatalf("retry on b: %+v %v", r, err)
			}
			// 100 credits over the next minute fold pay-0 out of b's
			// history; then the held write, if any, lands.
			creditMany(t, c, 100, time.Minute, "m-", ledgerCredit(b))
			if n := st.Held(); n > 0 {
				if err := st.DeliverAll(); err != nil {
					t.Fatal(err)
				}
			}
			want := int64(100 + 100)
			checks := []time.Duration{time.Hour, 23*time.Hour + 59*time.Minute}
			start := c.Now().Add(-time.Minute)
			per := 5000
			if testing.Short() {
				per = 1000
			}
			for i, at := range checks {
				creditMany(t, c, per, start.Add(at).Sub(c.Now())-time.Second, fmt.Sprint("o", i, "-"), ledgerCredit(b))
				want += int64(per)
				c.Add(time.Second)
				n, _ := ledger.New(mem, "acct", promiseOpts(crdt.ActorID(fmt.Sprint("n", i)), c))
				r, err := n.Credit(ctx, "pay-0", 100)
				if err != nil || !isDuplicate(r.Outcome) {
					t.Fatalf("retry at +%v: %+v %v", at, r, err)
				}
				if at > 2*time.Hour && r.Value != want {
					t.Fatalf("retry at +%v: value %d, want %d", at, r.Value, want)
				}
			}
		})
	}
}

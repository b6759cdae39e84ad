package balance_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// TestAccountsCapacity checks SPEC.md 9.3's capacity of one account: at r
// updates a second, merged every I, an account holds about
// r·(GCGrace + SettleGrace + 2·I) rows (a tombstone stays until GCGrace
// old, an N row until a merge settles its sum), so that step 1's 100,000
// rows are reached at about 150 updates a second with the defaults. It
// runs 50 a second, merged every 5 s, past GCGrace, and compares the
// most rows the partition held with the formula.
func TestAccountsCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("34,500 updates: not with -short")
	}
	const rate, every = 50, 5 * time.Second
	ctx := context.Background()
	c := newTestClock()
	st := memory.NewPartitions()
	ac, err := balance.New(st, balance.Options{Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	o := ac.Options()
	want := rate * (o.GCGrace + o.SettleGrace + 2*every).Seconds()
	most, n := 0, 0
	for s := 1; time.Duration(s)*time.Second <= o.GCGrace+o.SettleGrace+6*every; s++ {
		for i := range rate {
			c.Add(time.Second / rate)
			n++
			if err := ac.Add(ctx, "acct", timeid.FromParts(c.Now(), uint16(i), 7), 1); err != nil {
				t.Fatalf("add %d: %v", n, err)
			}
		}
		if time.Duration(s)*time.Second%every == 0 {
			if _, err := ac.Merge(ctx, "acct"); err != nil {
				t.Fatalf("merge at %ds: %v", s, err)
			}
			rows, err := st.Snapshot(ctx, "acct", math.MaxInt, store.ReadAny)
			if err != nil {
				t.Fatal(err)
			}
			most = max(most, len(rows))
		}
	}
	if v, err := ac.Balance(ctx, "acct"); err != nil || v != int64(n) {
		t.Fatalf("balance %d, %v; want %d", v, err, n)
	}
	t.Logf("%d updates at %d a second, merged every %v: at most %d rows; r·(GCGrace + SettleGrace + 2·I) = %.0f", n, rate, every, most, want)
	if r := float64(most) / want; r < 0.8 || r > 1.2 {
		t.Errorf("at most %d rows, %.2f× the formula's %.0f", most, r, want)
	}
	if capacity := float64(balance.MaxRows) / (o.GCGrace + o.SettleGrace + 2*every).Seconds(); capacity < 140 || capacity > 160 {
		t.Errorf("capacity %.0f updates a second; SPEC.md 9.3 says about 150", capacity)
	}
}

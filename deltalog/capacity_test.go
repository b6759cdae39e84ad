package deltalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/timeid"
)

// TestCountersCapacity checks SPEC.md 8.4's capacity formula: a counter
// taking r updates a second, merged every I, has reads that scan about
// r·(Window + SafetyMargin + I) cells, since a merge folds only cells
// older than now − Window − SafetyMargin. It runs 10 a second with the
// defaults, merged every 5 s, past that age.
func TestCountersCapacity(t *testing.T) {
	const rate, every = 10, 5 * time.Second
	ctx := context.Background()
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	c, err := deltalog.New(memory.NewPartitions(), deltalog.Options{Clock: func() time.Time { return now }})
	require.NoError(t, err)
	o := c.Options()
	want := rate * (o.Window + o.SafetyMargin + every).Seconds()
	most, n := 0, 0
	for s := 1; time.Duration(s)*time.Second <= o.Window+o.SafetyMargin+20*every; s++ {
		for i := range rate {
			now = now.Add(time.Second / rate)
			n++
			require.NoError(t, c.Add(ctx, "views", timeid.FromParts(now, uint16(i), 7), 1))
		}
		if time.Duration(s)*time.Second%every == 0 {
			_, _, err := c.Merge(ctx, "views")
			require.NoError(t, err)
			r, err := c.Read(ctx, "views")
			require.NoError(t, err)
			require.Equal(t, int64(n), r.Value)
			most = max(most, r.Cells)
		}
	}
	t.Logf("%d updates at %d a second, merged every %v: reads scanned at most %d cells; r·(Window + SafetyMargin + I) = %.0f", n, rate, every, most, want)
	if r := float64(most) / want; r < 0.9 || r > 1.1 {
		t.Errorf("reads scanned at most %d cells, %.2f× the formula's %.0f", most, r, want)
	}
}

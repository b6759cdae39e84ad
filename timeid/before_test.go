package timeid_test

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/timeid"
)

// TestDescendingBefore checks AppendDescendingBefore's promise on ids and
// times at and around tick boundaries and on random ones: an id's key is at
// or after the bound exactly when the id's time is before t. Replay:
// COUNTERKIT_SEED=<seed> go test ./timeid -run '^TestDescendingBefore$'
func TestDescendingBefore(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	epoch := time.Date(1582, time.October, 15, 0, 0, 0, 0, time.UTC)
	base := time.Date(2026, 12, 4, 13, 0, 0, 0, time.UTC)
	tails := []struct {
		seq  uint16
		node uint64
	}{{0, 0}, {0x3fff, 1<<48 - 1}, {0x2000, 0x800000000000}, {0x1fff, 0x7fffffffffff}}
	check := func(id timeid.ID, at time.Time) {
		t.Helper()
		bound, ok := timeid.AppendDescendingBefore(nil, at)
		before := id.Time().Before(at)
		if !ok {
			require.False(t, before, "no bound for %v, yet id %s at %v is before it", at, id, id.Time())
			return
		}
		key := timeid.AppendDescending(nil, id)
		require.Equal(t, before, bytes.Compare(key, bound) >= 0, "id %s at %v, bound at %v", id, id.Time(), at)
	}
	// The last second the 60-bit timestamp reaches, which it holds only in
	// part: its last tick is at lastSecond + 684,697,500 ns.
	lastSecond := time.Unix(epoch.Unix()+(1<<60-1)/10_000_000, 0).UTC()
	lastTick := lastSecond.Add(684_697_500)
	for _, tm := range []time.Time{lastSecond, lastSecond.Add(100), lastTick.Add(-100), lastTick} {
		require.Equal(t, tm, timeid.FromParts(tm, 0, 0).Time(), "a time the timestamp holds round-trips")
	}
	require.Equal(t, lastTick, timeid.FromParts(lastTick.Add(100), 0, 0).Time(), "past the last tick: clamped")
	for _, at := range []time.Time{base, base.Add(50), base.Add(99), base.Add(100), base.Add(101), epoch, epoch.Add(100), epoch.Add(-time.Second),
		lastSecond, lastSecond.Add(100), lastTick.Add(-100), lastTick} {
		for _, d := range []time.Duration{-200, -101, -100, -99, -1, 0, 1, 99, 100, 101} {
			for _, tl := range tails {
				if tm := at.Add(d); !tm.Before(epoch) {
					check(timeid.FromParts(tm, tl.seq, tl.node), at)
				}
			}
		}
	}
	for range proptest.Scale(20_000) {
		at := base.Add(time.Duration(rng.Int64N(2_000)))
		id := timeid.FromParts(base.Add(time.Duration(rng.Int64N(2_000))), uint16(rng.Uint32()), rng.Uint64())
		check(id, at)
	}
	_, ok := timeid.AppendDescendingBefore(nil, epoch)
	require.False(t, ok, "no id is before the UUID epoch")
	_, ok = timeid.AppendDescendingBefore(nil, epoch.Add(100))
	require.True(t, ok, "the id of tick 0 is before the epoch's first tick after")
}

package deltalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/timeid"
)

// BenchmarkHotPath is the delta log's hot path with no Observer: Add of a
// new update (one write, no read) over adapters/memory, the clock moving
// 1 µs per update. It uses only what the package offered before
// observation existed, so that the same file measures both builds
// (BENCHMARKS.md, "Observation cost").
func BenchmarkHotPath(b *testing.B) { benchAdd(b, deltalog.Options{}) }

// benchAdd measures Add on counters made with opts (Window and Clock set
// here).
func benchAdd(b *testing.B, opts deltalog.Options) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	opts.Window, opts.Clock = time.Minute, func() time.Time { return now }
	c, err := deltalog.New(memory.NewPartitions(), opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Microsecond)
		if err := c.Add(ctx, "k", timeid.New(now), 1); err != nil {
			b.Fatal(err)
		}
	}
}

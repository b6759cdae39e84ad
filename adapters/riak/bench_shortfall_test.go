package riak_test

import (
	"testing"

	"github.com/counterkit/counterkit/bounded/boundedtest"
	"github.com/counterkit/counterkit/internal/twincheck"
)

// benchOnRiak runs a benchmark body on the real Riak named by RIAK_ADDR,
// or skips.
func benchOnRiak(b *testing.B, body func(b *testing.B, tg target)) {
	body(b, realTarget(b))
}

// benchOnDoubles runs a benchmark body once (b.N = 1, each sub-benchmark
// once) on each test double backend, as a subtest: the benchmark's run in
// CI.
func benchOnDoubles(t *testing.T, body func(b *testing.B, tg target)) {
	for _, bk := range backends {
		if bk.name == "riak" {
			continue
		}
		t.Run(bk.name, func(t *testing.T) {
			twincheck.RunBenchmarkOnce(t, func(b *testing.B) { body(b, bk.open(b)) })
		})
	}
}

// TestBenchmarksRunOnDoubles runs the body of every benchmark that can
// reach a real Riak once on the test doubles. testing.Benchmark keeps a
// failing body's log to itself: print from the body to see why one fails.
func TestBenchmarksRunOnDoubles(t *testing.T) {
	t.Run("Shortfall", func(t *testing.T) { benchOnDoubles(t, benchShortfall) })
}

// BenchmarkShortfall runs the bounded counter's workload where actors run
// short (boundedtest.BenchmarkShortfall: 8 accounts on one key, debits
// spread unevenly) against the real Riak named by RIAK_ADDR, in testBucket
// of the bucket type RIAK_BUCKET_TYPE (Riak's default type if unset), on a
// key of its own; it skips without RIAK_ADDR (TestBenchmarksRunOnDoubles
// runs it once on the test doubles).
//
//	RIAK_ADDR=127.0.0.1:8087 RIAK_BUCKET_TYPE=counterkit go test -run '^$' -bench Shortfall -benchtime 20000x -cpu 1
func BenchmarkShortfall(b *testing.B) { benchOnRiak(b, benchShortfall) }

func benchShortfall(b *testing.B, tg target) {
	boundedtest.BenchmarkShortfall(b, newStore(b, tg.cl, tg.opts))
}

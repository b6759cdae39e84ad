package riak_test

import (
	"testing"

	"github.com/counterkit/counterkit/bounded/boundedtest"
)

// BenchmarkShortfall runs the bounded counter's workload where actors run
// short (boundedtest.BenchmarkShortfall: 8 accounts on one key, debits
// spread unevenly) against the real Riak named by RIAK_ADDR, in testBucket
// of the bucket type RIAK_BUCKET_TYPE (Riak's default type if unset), on a
// key of its own; it skips without RIAK_ADDR.
//
//	RIAK_ADDR=127.0.0.1:8087 RIAK_BUCKET_TYPE=counterkit go test -run '^$' -bench Shortfall -benchtime 20000x -cpu 1
func BenchmarkShortfall(b *testing.B) {
	tg := realTarget(b)
	boundedtest.BenchmarkShortfall(b, newStore(b, tg.cl, tg.opts))
}

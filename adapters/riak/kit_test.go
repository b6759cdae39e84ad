package riak_test

import (
	"os"
	"testing"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/storetest"
)

// emptySiblings returns a riak.Siblings that holds nothing yet: the test
// double's backends start a fresh server per call; on a real Riak it uses
// a bucket of its own (unique name) in the bucket type RIAK_BUCKET_TYPE,
// whose properties the bucket inherits, so no bucket properties are
// stored in Riak's ring for it.
func emptySiblings(t testing.TB, b backend) store.Siblings {
	tg := b.open(t)
	if tg.srv == nil {
		tg.opts.Bucket = uniqueKey("storetest")
	}
	return newStore(t, newClusterTimeout(t, tg.addr, suiteRequestTimeout), tg.opts)
}

// realTypeHasDVV reports whether RIAK_BUCKET_TYPE names a created bucket
// type (which has dotted version vectors) rather than Riak's default type.
func realTypeHasDVV() bool {
	typ := os.Getenv(EnvRiakBucketType)
	return typ != "" && typ != "default"
}

// BenchmarkSiblings runs the kit's benchmarks against the test double on
// loopback (a created bucket type).
func BenchmarkSiblings(b *testing.B) {
	storetest.BenchmarkSiblings(b, func(b *testing.B) store.Siblings {
		_, cl := fakeCluster(b)
		return newStore(b, cl, riak.Options{})
	})
}

package cassandra

import (
	"testing"

	"github.com/counterkit/counterkit/bounded/boundedtest"
)

// BenchmarkShortfall runs the bounded counter's workload where actors run
// short (boundedtest.BenchmarkShortfall: 8 accounts on one key, debits
// spread unevenly) against the cluster, in the suite keyspace's tables on
// a key of its own; it skips without CASSANDRA_HOSTS (TestBenchmarksRunOnModel
// runs it once on the model).
//
//	CASSANDRA_HOSTS=127.0.0.1 go test -run '^$' -bench Shortfall -benchtime 20000x -cpu 1
func BenchmarkShortfall(b *testing.B) { benchOnCluster(b, benchShortfall) }

func benchShortfall(b *testing.B, tg *target) {
	boundedtest.BenchmarkShortfall(b, tg.newDB(b, Options{}).Siblings())
}

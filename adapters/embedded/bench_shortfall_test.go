package embedded_test

import (
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/bounded/boundedtest"
)

// BenchmarkShortfall runs the bounded counter's workload where actors run
// short (boundedtest.BenchmarkShortfall: 8 accounts on one key, debits
// spread unevenly) on a fresh store in a temporary directory. Every write
// is durable (one bbolt transaction and fsync) when it returns.
//
//	go test -run '^$' -bench Shortfall -benchtime 20000x -cpu 1   # in adapters/embedded
func BenchmarkShortfall(b *testing.B) {
	db, _ := openTemp(b, embedded.Options{})
	boundedtest.BenchmarkShortfall(b, db.Siblings())
}

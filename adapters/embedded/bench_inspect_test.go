package embedded_test

import (
	"context"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
)

// BenchmarkInspect measures Keys and ReadStats on a store of 20,000
// siblings and 20,000 rows in 100 partitions with the whole-file check
// and digests ("checked") and without them ("unchecked": a read of the
// engine's buckets alone, as counterkit list read the file before), in
// alternating phases of one run. x-unchecked is the checked time as a
// multiple of the unchecked one.
//
//	cd adapters/embedded && taskset -c 1 go test -run '^$' -bench Inspect -benchtime 40x
func BenchmarkInspect(b *testing.B) {
	ctx := context.Background()
	db, dir := openTemp(b, embedded.Options{})
	const n = 20000
	fillConcurrently(b, db, n)
	db.Close()
	for _, c := range []struct {
		name string
		op   func() error
	}{
		{"keys", func() error { _, err := embedded.Keys(ctx, dir); return err }},
		{"stats", func() error { _, err := embedded.ReadStats(ctx, dir); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			alternate(b, 1, [2]func(uint64) error{
				func(uint64) error { return c.op() },
				func(uint64) error {
					defer embedded.SetInspectUnchecked(true)()
					return c.op()
				},
			})
		})
	}
}

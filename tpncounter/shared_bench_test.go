package tpncounter

import (
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/crdt"
)

// sharedState is a hostile-looking but valid state: actors actors that all
// hold the same ids transactions (every id delivered to every actor). Each
// id's multi record has actors holders, so any index step that reads all
// holders makes decoding quadratic in the actors.
func sharedState(tb testing.TB, actors, ids int) []byte {
	opts := Options{HistoryLength: ids, FoldedLength: 1, MaxActors: actors}
	all, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	for a := 0; a < actors; a++ {
		c, _ := New(opts)
		for i := 0; i < ids; i++ {
			if _, err := c.Apply(crdt.ActorID(fmt.Sprintf("actor-%05d", a)), crdt.TxnID(fmt.Sprintf("x%d", i)), 1); err != nil {
				tb.Fatal(err)
			}
		}
		if err := all.Merge(c); err != nil {
			tb.Fatal(err)
		}
	}
	b, err := all.MarshalBinary()
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkDecodeShared decodes states whose ids every actor holds, at two
// sizes: with per-record owner and sums kept in step the cost per actor is
// flat (a quadratic index would show a 16x larger cost per actor at 16x
// the actors).
func BenchmarkDecodeShared(b *testing.B) {
	for _, actors := range []int{256, 4096} {
		data := sharedState(b, actors, 33)
		b.Run(fmt.Sprintf("actors=%d", actors), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				c, _ := New(Options{HistoryLength: 33, FoldedLength: 1, MaxActors: actors})
				if err := c.UnmarshalBinary(data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(actors), "ns/actor")
		})
	}
}

package tpncounter

import (
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/crdt"
)

// BenchmarkCentral measures the operations every caller uses on a Counter
// of 100 actors with full histories (credits and debits): Apply of a new
// transaction, Apply of a retry, Merge of a state in which 10 actors
// wrote, MarshalBinary, UnmarshalBinary and MergeBinary of that state.
func BenchmarkCentral(b *testing.B) {
	build := func(actors int) *Counter {
		c, _ := New(Options{})
		for a := 0; a < actors; a++ {
			for h := 0; h < 25; h++ {
				amt := int64(h + 1)
				if h%3 == 0 {
					amt = -amt
				}
				c.Apply(crdt.ActorID(fmt.Sprintf("actor-%04d", a)), crdt.TxnID(fmt.Sprintf("txn-%04d-%04d", a, h)), amt)
			}
		}
		return c
	}
	base := build(100)
	changed := base.Clone()
	for a := 0; a < 10; a++ {
		changed.Apply(crdt.ActorID(fmt.Sprintf("actor-%04d", a*10)), crdt.TxnID(fmt.Sprintf("new-%04d", a)), 7)
	}
	data, err := changed.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]crdt.TxnID, 4096)
	for i := range ids {
		ids[i] = crdt.TxnID(fmt.Sprintf("bench-%06d", i))
	}
	b.Run("Apply/new", func(b *testing.B) {
		c := base.Clone()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := c.Apply(crdt.ActorID("actor-0001"), crdt.TxnID(fmt.Sprint(i)), 3); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Apply/retry", func(b *testing.B) {
		c := base.Clone()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if out, err := c.Apply("actor-0002", "txn-0050-0024", -25); err != nil || out != Duplicate {
				b.Fatal(out, err)
			}
		}
	})
	b.Run("Merge", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			c := base.Clone()
			b.StartTimer()
			if err := c.Merge(changed); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("MarshalBinary", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			c := changed.Clone() // no cached encodings
			b.StartTimer()
			if _, err := c.MarshalBinary(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("UnmarshalBinary", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var c Counter
			if err := c.UnmarshalBinary(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("MergeBinary", func(b *testing.B) {
		var c Counter
		if err := c.UnmarshalBinary(data); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			d := c.Clone()
			d.MarshalBinary() // cache the encodings, as a reader does
			b.StartTimer()
			if err := d.MergeBinary(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

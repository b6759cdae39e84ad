package tpncounter

import (
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/crdt"
)

// turnStates returns the states of the ledger's account that writers
// credit in turn: s, of actors actors with default Options, each with a
// full history and folded record; and next, s after every actor but the
// first applied one more transaction (what a writer fetches when the
// others each credited once since its last read).
func turnStates(tb testing.TB, actors int) (s, next *Counter) {
	s, err := New(Options{})
	if err != nil {
		tb.Fatal(err)
	}
	actor := func(a int) crdt.ActorID { return crdt.ActorID(fmt.Sprintf("writer-%02d", a)) }
	for h := 0; h < 3*DefaultHistoryLength; h++ {
		for a := 0; a < actors; a++ {
			if _, err := s.Apply(actor(a), crdt.TxnID(fmt.Sprintf("txn-%02d-%06d", a, h)), int64(1+h%7)); err != nil {
				tb.Fatal(err)
			}
		}
	}
	next = s.Clone()
	for a := 1; a < actors; a++ {
		if _, err := next.Apply(actor(a), crdt.TxnID(fmt.Sprintf("next-%02d", a)), 3); err != nil {
			tb.Fatal(err)
		}
	}
	return s, next
}

// BenchmarkMergeBinaryTurns measures the ledger's hot path when 32
// writers of one account credit in turn: a writer merges the fetched
// state, in which 31 entries changed by one transaction each, into its
// cached state (MergeBinary of next's encoding into a copy of s whose
// entry encodings are cached, as after the writer's last read). The copy
// is made, and its encodings cached, with the timer stopped; it takes over
// the previous copy's MergeBinary scratch memory, as the one Counter a
// reader keeps would have it ("changed=31/fresh" does not: its figures
// include that memory's first growth). "unchanged"
// merges s's own encoding into the copy (every entry passed over): the
// floor of the operation. "decode+merge" is what MergeBinary saves:
// UnmarshalBinary of next's encoding and Merge into the copy.
func BenchmarkMergeBinaryTurns(b *testing.B) {
	s, next := turnStates(b, 32)
	same, changed := must(s.MarshalBinary()), must(next.MarshalBinary())
	run := func(name string, warm bool, merge func(c *Counter) error) {
		b.Run(name, func(b *testing.B) {
			var scratch *mergeScratch
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				c := s.Clone()
				c.MarshalBinary() // cache the encodings, as a reader does
				if warm {
					c.merge = scratch
				}
				b.StartTimer()
				if err := merge(c); err != nil {
					b.Fatal(err)
				}
				scratch = c.merge
			}
		})
	}
	run("unchanged", true, func(c *Counter) error { return c.MergeBinary(same) })
	run("changed=31", true, func(c *Counter) error { return c.MergeBinary(changed) })
	run("changed=31/fresh", false, func(c *Counter) error { return c.MergeBinary(changed) })
	run("decode+merge", false, func(c *Counter) error {
		var o Counter
		if err := o.UnmarshalBinary(changed); err != nil {
			return err
		}
		return c.Merge(&o)
	})
}

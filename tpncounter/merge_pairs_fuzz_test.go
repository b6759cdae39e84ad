package tpncounter

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/counterkit/counterkit/crdt"
)

// FuzzMergeOfDecodedPairs decodes two inputs and checks, whatever states
// they hold: Merge commutes (same errors, Equal results), MergeBinary of
// the second input gives what Merge gives, the merged state's encoding
// decodes to it (unless it is above 16 MiB), an Apply on it changes the
// value by its amount or not at all, and (without a Base, whose merges
// need the grace-period assumption: TestMergeOfAFoldPastAnUnseenRetirement)
// Merge is idempotent and the merge is above both states. k picks the
// Apply's actor, txn and amount. The seeds are every pair of codecCases.
//
// Run: go test ./tpncounter -run '^$' -fuzz '^FuzzMergeOfDecodedPairs$' -fuzztime 60s
func FuzzMergeOfDecodedPairs(f *testing.F) {
	var seeds [][]byte
	for _, c := range codecCases() {
		b, err := c.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, a := range seeds {
		for _, b := range seeds {
			f.Add(a, b, uint8(0))
		}
	}
	f.Fuzz(func(t *testing.T, x, y []byte, k uint8) {
		var a, b Counter
		if a.UnmarshalBinary(x) != nil || b.UnmarshalBinary(y) != nil {
			return
		}
		// Each input re-encodes to itself (but version 1), and Value is
		// BigValue, or the end of int64 it passed.
		for i, c := range []*Counter{&a, &b} {
			in := [][]byte{x, y}[i]
			out, err := c.MarshalBinary()
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			if v := in[1+1+len("tpncounter")]; v != 1 && !bytes.Equal(out, in) {
				t.Fatalf("version %d input re-encodes differently", v)
			}
			bv := c.BigValue()
			w := c.Value()
			if (bv.IsInt64() && w != bv.Int64()) || (!bv.IsInt64() && w != map[int]int64{1: math.MaxInt64, -1: math.MinInt64}[bv.Sign()]) {
				t.Fatalf("Value %d BigValue %s", w, bv)
			}
		}
		ab, ba := a.Clone(), b.Clone()
		e1, e2 := ab.Merge(&b), ba.Merge(&a)
		if (e1 == nil) != (e2 == nil) {
			t.Fatalf("merge errors differ: %v %v", e1, e2)
		}
		if e1 != nil {
			return
		}
		if !ab.Equal(ba) || ab.BigValue().Cmp(ba.BigValue()) != 0 {
			t.Fatalf("not commutative: %s vs %s", ab.BigValue(), ba.BigValue())
		}
		mb := a.Clone()
		if err := mb.MergeBinary(y); err != nil || !mb.Equal(ab) {
			t.Fatalf("MergeBinary differs: %v", err)
		}
		pa, na := a.Bases()
		pb, nb := b.Bases()
		if pa.Cutoff.IsZero() && na.Cutoff.IsZero() && pb.Cutoff.IsZero() && nb.Cutoff.IsZero() {
			again := ab.Clone()
			if err := again.Merge(&a); err != nil || !again.Equal(ab) {
				t.Fatalf("not idempotent")
			}
			if !a.Leq(ab) || !b.Leq(ab) {
				t.Fatalf("not an upper bound")
			}
		}
		enc, err := ab.MarshalBinary()
		if err != nil {
			if errors.Is(err, crdt.ErrTooLarge) {
				return
			}
			t.Fatalf("encode merged: %v", err)
		}
		var d Counter
		if err := d.UnmarshalBinary(enc); err != nil {
			t.Fatalf("merged state's encoding refused: %v", err)
		}
		if !d.Equal(ab) {
			t.Fatalf("merged roundtrip")
		}
		actors := []crdt.ActorID{"a", "b", "zz"}
		txns := []crdt.TxnID{"t1", "t2", "x@5", "new"}
		amt := []int64{1, -1, 5, -3, math.MaxInt64}
		act := actors[int(k)%len(actors)]
		tx := txns[int(k/3)%len(txns)]
		am := amt[int(k/12)%len(amt)]
		before := ab.BigValue()
		out, err := ab.Apply(act, tx, am)
		if err == nil && out == Applied {
			want := new(big.Int).Add(before, big.NewInt(am))
			if ab.BigValue().Cmp(want) != 0 {
				t.Fatalf("applied %d: %s -> %s", am, before, ab.BigValue())
			}
		} else if ab.BigValue().Cmp(before) != 0 {
			t.Fatalf("outcome %v err %v changed value", out, err)
		}
		for _, act := range actors {
			if _, err := ab.Compact(act); err != nil && !errors.Is(err, crdt.ErrOverflow) {
				t.Fatal(err)
			}
		}
		enc, err = ab.MarshalBinary()
		if err == nil {
			if err := d.UnmarshalBinary(enc); err != nil {
				t.Fatalf("after apply: own encoding refused: %v", err)
			}
		}
	})
}

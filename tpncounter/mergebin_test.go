package tpncounter

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
)

// TestEncodingCacheAndMergeBinary runs random schedules of Apply, Compact,
// Retract, Retire, Merge and MergeBinary over three replicas and checks,
// after every step, that MarshalBinary with cached entry encodings (and
// cached runs of retired entries, see segments) equals an encoding from
// scratch, and that MergeBinary gives exactly what decoding
// and Merge give (same state, same error), leaving the receiver unchanged
// on error, for valid and for damaged inputs.
//
// Replay: COUNTERKIT_SEED=<seed> go test ./tpncounter -run TestEncodingCacheAndMergeBinary
func TestEncodingCacheAndMergeBinary(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	opts := Options{HistoryLength: 3, FoldedLength: 2}
	schedules := proptest.Scale(60)
	var merged, skippedAll, damaged, lenient int
	for s := 0; s < schedules; s++ {
		reps := make([]*Counter, 3)
		for i := range reps {
			reps[i] = newT(t, opts)
		}
		for step := 0; step < 80; step++ {
			i := r.IntN(len(reps))
			c, actor := reps[i], crdt.ActorID(fmt.Sprintf("r%d", i))
			txn := crdt.TxnID(fmt.Sprintf("t%d", r.IntN(40)))
			if r.IntN(2) == 0 { // a UUID id, written as 16 bytes (format version 3)
				txn = crdt.TxnID(fmt.Sprintf("%08x-0000-4000-8000-%012x", r.IntN(40), 7))
			}
			amount := int64(1 + r.IntN(3))
			if r.IntN(3) == 0 {
				amount = -amount
			}
			what := ""
			switch k := r.IntN(10); {
			case k < 5:
				what = fmt.Sprintf("%s applies %s %d", actor, txn, amount)
				_, _ = c.Apply(actor, txn, amount) // conflicts are refused, state unchanged
			case k < 6:
				what = fmt.Sprintf("%s compacts", actor)
				_, _ = c.Compact(actor)
			case k < 7:
				what = fmt.Sprintf("%s retracts %s", actor, txn)
				_, _ = c.Retract(actor, txn)
			case k < 8: // its owner's next Apply makes it live again
				j := r.IntN(len(reps))
				what = fmt.Sprintf("r%d retires r%d", i, j)
				_, _ = c.Retire(crdt.ActorID(fmt.Sprintf("r%d", j)))
			default:
				j := r.IntN(len(reps))
				what = fmt.Sprintf("r%d merges r%d", i, j)
				data := must(reps[j].MarshalBinary())
				if r.IntN(4) == 0 {
					data = bytes.Clone(data)
					data[r.IntN(len(data))] ^= byte(1 << r.IntN(8))
					damaged++
				}
				want := c.Clone()
				o := newT(t, opts)
				wantErr := o.UnmarshalBinary(data)
				if wantErr == nil {
					wantErr = want.Merge(o)
				}
				before := must(c.MarshalBinary())
				if wantErr == nil && !want.Equal(c) {
					merged++
				} else if wantErr == nil {
					skippedAll++
				}
				err := c.MergeBinary(data)
				if (err == nil) != (wantErr == nil) {
					// The one documented difference: checks that involve
					// only entries equal to c's own are not repeated.
					if err == nil && wantErr != nil {
						lenient++
						if !want.Equal(c) {
							t.Fatalf("and changed the state")
						}
						continue
					}
					t.Fatalf("seed %d schedule %d step %d (%s): MergeBinary error %v, decode and Merge %v", seed, s, step, what, err, wantErr)
				}
				if err != nil {
					if got := must(c.MarshalBinary()); !bytes.Equal(got, before) {
						t.Fatalf("seed %d schedule %d step %d (%s): MergeBinary failed (%v) and changed the state", seed, s, step, what, err)
					}
					continue
				}
				if !want.Equal(c) || want.Value() != c.Value() {
					t.Fatalf("seed %d schedule %d step %d (%s): MergeBinary gave another state (value %d) than decode and Merge (value %d)", seed, s, step, what, c.Value(), want.Value())
				}
			}
			for k, rep := range reps {
				got := must(rep.MarshalBinary())
				fresh := rep.Clone()
				dropEncodings(fresh)
				if want := must(fresh.MarshalBinary()); !bytes.Equal(got, want) {
					t.Fatalf("seed %d schedule %d step %d (%s): r%d's cached encoding differs from a fresh one", seed, s, step, what, k)
				}
			}
		}
	}
	t.Logf("%d schedules; merges that changed the state %d, that changed nothing %d, on damaged input %d (accepted there, unchanged, where decoding refuses: %d)", schedules, merged, skippedAll, damaged, lenient)
}

func newT(t *testing.T, o Options) *Counter {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

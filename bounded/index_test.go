package bounded

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
)

// checkIndex compares c's holders index, if built, with the holders its
// entries give: every transaction's holders in actor order with their
// amounts, the transactions two or more hold, one table slot each.
func checkIndex(t *testing.T, c *Counter, what string) {
	t.Helper()
	if c.idx == nil {
		return
	}
	want := map[crdt.TxnID][]Holder{}
	for _, a := range c.Actors() {
		for _, x := range c.entries[a].recent {
			want[x.ID] = append(want[x.ID], Holder{a, x.Amount})
		}
	}
	var doubled []crdt.TxnID
	for id, hs := range want {
		if got := c.Holders(id); !slices.Equal(got, hs) {
			t.Fatalf("%s: Holders(%q) = %v, want %v", what, id, got, hs)
		}
		if len(hs) > 1 {
			doubled = append(doubled, id)
		}
	}
	slices.Sort(doubled)
	if got := c.Doubled(); !slices.Equal(got, doubled) {
		t.Fatalf("%s: Doubled() = %v, want %v", what, got, doubled)
	}
	if c.idx.n != len(want) || len(c.idx.aix) != len(c.entries) {
		t.Fatalf("%s: the index holds %d transactions of %d actors, want %d of %d", what, c.idx.n, len(c.idx.aix), len(want), len(c.entries))
	}
	if hs := c.Holders("never-applied"); hs != nil {
		t.Fatalf("%s: Holders(never-applied) = %v", what, hs)
	}
}

// TestIndexAgainstEntries runs random applies (some retries and conflicts),
// retracts, transfers, merges, clones and decodes on counters with small
// windows and few ids, so that copies are shared and windows slide and
// are cut in the middle, and compares each counter's index with its
// entries after every step; also with every id hashed alike, so that
// every lookup runs the whole probe run and removal shifts it, and with a
// few tags. Clones taken along the way must still match their own entries
// at the end (clones share holder lists).
func TestIndexAgainstEntries(t *testing.T) {
	testsize.SkipSequential(t)
	for _, mode := range []string{"hash", "one-tag", "four-tags"} {
		t.Run(mode, func(t *testing.T) {
			switch mode {
			case "one-tag":
				forcedHash = func(crdt.TxnID) uint64 { return 0x8000_0000_0000_0000 }
			case "four-tags":
				forcedHash = func(x crdt.TxnID) uint64 { return uint64(len(x)%4) << 62 }
			}
			defer func() { forcedHash = nil }()
			for seed := range uint64(20) {
				indexRun(t, rand.New(rand.NewPCG(seed, 7)), fmt.Sprintf("%s seed %d", mode, seed))
			}
		})
	}
}

func indexRun(t *testing.T, rng *rand.Rand, name string) {
	actors := []crdt.ActorID{"a", "b", "c", "d", "e"}
	reps := make([]*Counter, 3)
	for i := range reps {
		c, err := New(Options{Bound: -1000, Origin: "a", Window: 1 + rng.IntN(6)})
		if err != nil {
			t.Fatal(err)
		}
		reps[i] = c
	}
	var snaps []*Counter
	for step := range 300 {
		i := rng.IntN(len(reps))
		c := reps[i]
		actor := actors[rng.IntN(len(actors))]
		what := fmt.Sprintf("%s step %d", name, step)
		switch op := rng.IntN(10); {
		case op < 5:
			amt := int64(rng.IntN(5) - 2)
			if amt == 0 {
				amt = 3
			}
			c.Apply(actor, crdt.TxnID(fmt.Sprintf("t%d", rng.IntN(24))), amt) // refusals change nothing
		case op == 5:
			if e := c.entries[actor]; e != nil && len(e.recent) > 0 {
				c.Retract(actor, e.recent[rng.IntN(len(e.recent))].ID)
			}
		case op == 6:
			c.Transfer("a", actor, 1)
		case op == 7:
			if err := c.Merge(reps[rng.IntN(len(reps))]); err != nil {
				t.Fatal(err)
			}
		case op == 8:
			snaps = append(snaps, c.Clone())
			reps[i] = c.Clone()
		default:
			b, err := c.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			d, err := Decode(b, c.window())
			if err != nil {
				break // a merge of writers that spent the same rights (invariants)
			}
			if rng.IntN(2) == 0 {
				d.Known("t0", 1) // built now, else at the next use
			}
			reps[i] = d
		}
		checkIndex(t, reps[i], what)
	}
	for k, s := range snaps {
		checkIndex(t, s, fmt.Sprintf("%s snapshot %d", name, k))
	}
}

package gcounter_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/pncounter"
)

// TestHandleThroughMergeGrowAndDecode: handles of gcounter and pncounter
// taken at random times keep adding to their own actor while Merge adds
// and raises actors, Grow reserves room and UnmarshalBinary replaces the
// state; every count matches a model after every step.
func TestHandleThroughMergeGrowAndDecode(t *testing.T) {
	testsize.SkipSequential(t)
	for seed := range uint64(100) {
		r := rand.New(rand.NewPCG(seed, 2))
		c := gcounter.New()
		p := pncounter.New()
		model := map[crdt.ActorID]int64{}
		pm := map[crdt.ActorID]int64{}
		actors := []crdt.ActorID{}
		for i := range 40 {
			actors = append(actors, crdt.ActorID(fmt.Sprintf("a%02d", i)))
		}
		type hp struct {
			a  crdt.ActorID
			g  gcounter.Handle
			ph pncounter.Handle
		}
		var hs []hp
		for step := 0; step < 200; step++ {
			switch r.IntN(7) {
			case 0:
				a := actors[r.IntN(len(actors))]
				hs = append(hs, hp{a, c.Handle(a), p.Handle(a)})
			case 1, 2:
				if len(hs) == 0 {
					continue
				}
				h := hs[r.IntN(len(hs))]
				n := r.Int64N(5)
				if err := h.g.Add(n); err != nil {
					t.Fatal(err)
				}
				model[h.a] += n
				d := r.Int64N(9) - 4
				if err := h.ph.Add(d); err != nil {
					t.Fatal(err)
				}
				pm[h.a] += d
			case 3:
				o := gcounter.New()
				po := pncounter.New()
				for range r.IntN(10) {
					a := actors[r.IntN(len(actors))]
					v := model[a] + r.Int64N(3)
					if v > 0 && o.Get(a) == 0 {
						_ = o.Increment(a, v)
					}
					_ = po.Apply(a, 1)
				}
				if err := c.Merge(o); err != nil {
					t.Fatal(err)
				}
				for a, n := range o.All() {
					model[a] = max(model[a], n)
				}
				if err := p.Merge(po); err != nil {
					t.Fatal(err)
				}
				for a, d := range po.P().All() {
					pm[a] = max(pm[a]+p.N().Get(a), d) - p.N().Get(a)
				}
			case 4:
				b, _ := c.MarshalBinary()
				if err := c.UnmarshalBinary(b); err != nil {
					t.Fatal(err)
				}
				b, _ = p.MarshalBinary()
				if err := p.UnmarshalBinary(b); err != nil {
					t.Fatal(err)
				}
			case 5:
				c.Grow(r.IntN(100))
				p.Grow(r.IntN(50), r.IntN(50))
			case 6:
				a := actors[r.IntN(len(actors))]
				_ = c.Increment(a, 1)
				model[a]++
				_ = p.Decrement(a, 1)
				pm[a]--
			}
			for _, a := range actors {
				if c.Get(a) != model[a] {
					t.Fatalf("seed %d step %d: %s has %d want %d", seed, step, a, c.Get(a), model[a])
				}
				if p.Get(a) != pm[a] {
					t.Fatalf("seed %d step %d: pn %s has %d want %d", seed, step, a, p.Get(a), pm[a])
				}
			}
		}
	}
}

package proptest

import (
	"fmt"
	"strings"
)

// operand is a reachable state used as an argument of the algebraic laws.
type operand[S any, O any] struct {
	name string
	Replica[S, O]
}

// lawOperands returns the final replica states and the two picked
// snapshots (when any were sent).
func lawOperands[S any, O any](tr *Trace[S, O]) []operand[S, O] {
	var xs []operand[S, O]
	for i, r := range tr.Replicas {
		xs = append(xs, operand[S, O]{name: fmt.Sprintf("final %s", Actor(i)), Replica: r})
	}
	if n := len(tr.Snapshots); n > 0 {
		for _, p := range tr.Schedule.Picks {
			k := pick(p, n)
			xs = append(xs, operand[S, O]{name: fmt.Sprintf("snapshot #%d of %s", k, tr.Snapshots[k].Actor), Replica: tr.Snapshots[k]})
		}
	}
	return xs
}

// join returns a fresh a⊔b, checking that Merge succeeds and leaves b alone.
func (c *checker[S, O]) join(a, b operand[S, O]) (S, *Violation) {
	d := c.m.Clone(a.State)
	ref := c.m.Clone(b.State)
	if err := c.m.Merge(d, b.State); err != nil {
		return d, c.fail(LawMergeError, "%s ⊔ %s: %v", a.name, b.name, err)
	}
	if !c.m.Equal(b.State, ref) {
		return d, c.fail(LawSrcUnchanged, "%s ⊔ %s modified the source from %+v to %+v", a.name, b.name, ref, b.State)
	}
	return d, nil
}

// laws checks the algebraic laws on the operands of a finished simulation.
func (c *checker[S, O]) laws() *Violation {
	m := c.m
	xs := lawOperands(c.tr)
	empty := operand[S, O]{name: "empty", Replica: Replica[S, O]{State: m.New()}}
	if v := c.checkValue("empty", empty.State, nil); v != nil {
		return v
	}
	for _, x := range xs {
		if cl := m.Clone(x.State); !c.same(cl, x.State) {
			return c.fail(LawClone, "Clone(%s = %+v) = %+v is not Equal to it", x.name, x.State, cl)
		}
		if m.Leq != nil && !m.Leq(x.State, x.State) {
			return c.fail(LawLeq, "Leq is not reflexive on %s = %+v", x.name, x.State)
		}
		xx, v := c.join(x, x)
		if v != nil {
			return v
		}
		if !c.same(xx, x.State) {
			return c.fail(LawIdempotent, "%s ⊔ itself = %+v (value %v) but %s = %+v (value %v)",
				x.name, xx, m.Value(xx), x.name, x.State, m.Value(x.State))
		}
		for _, pair := range [][2]operand[S, O]{{x, empty}, {empty, x}} {
			j, v := c.join(pair[0], pair[1])
			if v != nil {
				return v
			}
			if !c.same(j, x.State) {
				return c.fail(LawIdentity, "%s ⊔ %s = %+v but %s = %+v", pair[0].name, pair[1].name, j, x.name, x.State)
			}
		}
	}
	joins := make(map[[2]int]S)
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			a, b := xs[i], xs[j]
			ab, v := c.join(a, b)
			if v != nil {
				return v
			}
			ba, v := c.join(b, a)
			if v != nil {
				return v
			}
			if !c.same(ab, ba) {
				return c.fail(LawCommutative, "%s = %+v, %s = %+v: a⊔b = %+v (value %v) but b⊔a = %+v (value %v)",
					a.name, a.State, b.name, b.State, ab, m.Value(ab), ba, m.Value(ba))
			}
			if v := c.checkValue(a.name+" ⊔ "+b.name, ab, union(a.Ops, b.Ops)); v != nil {
				return v
			}
			if m.Leq != nil {
				if !m.Leq(a.State, ab) || !m.Leq(b.State, ab) {
					return c.fail(LawUpperBound, "%s ⊔ %s = %+v is not ≥ both %+v and %+v", a.name, b.name, ab, a.State, b.State)
				}
				for _, p := range [][2]operand[S, O]{{a, b}, {b, a}} {
					if m.Leq(p[0].State, p[1].State) && !c.same(ab, p[1].State) {
						return c.fail(LawLeq, "%s ≤ %s but their join %+v differs from %+v", p[0].name, p[1].name, ab, p[1].State)
					}
				}
			}
			joins[[2]int{i, j}] = ab
		}
	}
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			for k := j + 1; k < len(xs); k++ {
				ab := operand[S, O]{name: "(" + xs[i].name + " ⊔ " + xs[j].name + ")", Replica: Replica[S, O]{State: joins[[2]int{i, j}]}}
				bc := operand[S, O]{name: "(" + xs[j].name + " ⊔ " + xs[k].name + ")", Replica: Replica[S, O]{State: joins[[2]int{j, k}]}}
				left, v := c.join(ab, xs[k])
				if v != nil {
					return v
				}
				right, v := c.join(xs[i], bc)
				if v != nil {
					return v
				}
				if !c.same(left, right) {
					return c.fail(LawAssociative, "%s ⊔ %s = %+v (value %v) but %s ⊔ %s = %+v (value %v)",
						ab.name, xs[k].name, left, m.Value(left), xs[i].name, bc.name, right, m.Value(right))
				}
			}
		}
	}
	return nil
}

// converge runs full gossip on the final replicas of a finished simulation:
// replica i merges the pre-gossip snapshot of every other replica j, in the
// order j = i+1, i+2, ... (mod n). Then every replica must be Equal, have
// the value Expect of all accepted ops, and stay unchanged when it merges
// any other replica again.
func (c *checker[S, O]) converge() *Violation {
	m := c.m
	reps := c.tr.Replicas
	n := len(reps)
	pre := make([]message[S, O], n)
	for i, r := range reps {
		pre[i] = message[S, O]{snap: Replica[S, O]{Actor: r.Actor, State: m.Clone(r.State), Ops: r.Ops}, ref: m.Clone(r.State)}
	}
	for i := range reps {
		for k := 1; k < n; k++ {
			j := (i + k) % n
			if v := c.mergeInto(&reps[i], pre[j], fmt.Sprintf("final %s", pre[j].snap.Actor)); v != nil {
				return v
			}
		}
	}
	for i := range reps {
		if v := c.checkValue(fmt.Sprintf("%s after gossip", reps[i].Actor), reps[i].State, c.tr.Accepted); v != nil {
			return v
		}
	}
	for i := 1; i < n; i++ {
		if !c.same(reps[i].State, reps[0].State) {
			lines := make([]string, n)
			for k, r := range reps {
				lines[k] = fmt.Sprintf("    %s: value %v, state %+v", r.Actor, m.Value(r.State), r.State)
			}
			return c.fail(LawConvergence, "after full gossip the replicas differ:\n%s", strings.Join(lines, "\n"))
		}
	}
	for i := range reps {
		before := m.Clone(reps[i].State)
		if err := m.Merge(reps[i].State, reps[(i+1)%n].State); err != nil {
			return c.fail(LawMergeError, "%s merging converged %s: %v", reps[i].Actor, reps[(i+1)%n].Actor, err)
		}
		if !c.same(before, reps[i].State) {
			return c.fail(LawConvergence, "%s changed from %+v to %+v when merging an already converged replica",
				reps[i].Actor, before, reps[i].State)
		}
	}
	return nil
}

package proptest

import (
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/counterkit/counterkit/crdt"
)

// Names of the laws a Violation can report.
const (
	// LawValue: Value(s) equals Expect of the accepted ops in s's causal
	// history (the ops applied at s or at any replica whose snapshot s has
	// merged, directly or transitively).
	LawValue           = "value"
	LawRejectUnchanged = "reject-unchanged" // a rejected Apply leaves the state Equal
	LawInflationary    = "inflationary"     // s ≤ Apply(s) (with Model.Leq)
	LawMergeError      = "merge-error"      // Merge failed on two reachable states
	// LawSrcUnchanged: Merge(dst, src) leaves src Equal to a copy taken
	// before, and a delivered snapshot's value still matches its history
	// (a shallow Clone breaks this).
	LawSrcUnchanged = "src-unchanged"
	LawUpperBound   = "upper-bound" // a ≤ a⊔b and b ≤ a⊔b (with Model.Leq)
	LawLeq          = "leq"         // Leq is reflexive, a ≤ b implies a⊔b = b
	LawClone        = "clone"       // Clone(s) is Equal to s
	LawCommutative  = "commutative" // a⊔b = b⊔a
	LawAssociative  = "associative" // (a⊔b)⊔c = a⊔(b⊔c)
	LawIdempotent   = "idempotent"  // a⊔a = a
	LawIdentity     = "identity"    // a⊔empty = empty⊔a = a
	// LawConvergence: after full gossip every replica is Equal, and merging
	// any replica into another changes nothing.
	LawConvergence = "convergence"
	LawPanic       = "panic" // a model function panicked
)

// Violation is a broken law found by Simulate or a checker. "Equal" in a
// law means both Model.Equal and equal Values.
type Violation struct {
	Law    string // one of the Law constants
	Step   int    // the schedule step being run, or -1 after the schedule
	Detail string // what was observed, with the states involved
}

// Error returns "law <Law> violated at step <Step>: <Detail>".
func (v *Violation) Error() string {
	where := "after the schedule"
	if v.Step >= 0 {
		where = fmt.Sprintf("at step %d", v.Step)
	}
	return fmt.Sprintf("law %s violated %s: %s", v.Law, where, v.Detail)
}

// Replica is one state of a simulation together with its causal history.
type Replica[S any, O any] struct {
	Actor crdt.ActorID // the replica's actor (the sender, for a snapshot)
	State S
	Ops   []int // ascending: the accepted Apply steps whose effect State includes
}

// Trace is what Simulate observed.
type Trace[S any, O any] struct {
	Schedule  Schedule[O]
	Replicas  []Replica[S, O] // after the last step, before any gossip
	Snapshots []Replica[S, O] // the sent snapshots in send order, as sent
	Accepted  []int           // ascending: the Apply steps that returned no error
}

// Ops returns the ops of the given Apply steps, in the given order.
func (t *Trace[S, O]) Ops(steps []int) []O {
	ops := make([]O, len(steps))
	for i, s := range steps {
		ops[i] = t.Schedule.Steps[s].Op
	}
	return ops
}

// Simulate runs sched against m, checking after every step that the changed
// state's Value equals Expect of its causal history (LawValue), that a
// rejected Apply changed nothing (LawRejectUnchanged), that Merge succeeded
// (LawMergeError) and left the delivered snapshot unchanged
// (LawSrcUnchanged), that Clone copies are Equal (LawClone) and, with
// m.Leq, that Apply and Merge only inflate (LawInflationary,
// LawUpperBound).
//
// The error is a *Violation for the first broken law (a panic in a model
// function becomes LawPanic), or wraps crdt.ErrInvalidConfig when m lacks a
// required function. Simulate is deterministic: it uses no randomness of
// its own.
func Simulate[S any, O any](m Model[S, O], sched Schedule[O]) (*Trace[S, O], error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	c := &checker[S, O]{m: m, tr: &Trace[S, O]{Schedule: sched}, step: -1}
	if v := c.run(c.simulate); v != nil {
		return c.tr, v
	}
	return c.tr, nil
}

type checker[S any, O any] struct {
	m    Model[S, O]
	tr   *Trace[S, O]
	step int
}

type message[S any, O any] struct {
	snap Replica[S, O]
	ref  S // second copy, to detect a Merge that mutates its source
	at   int
}

// run calls f, converting a panic into a LawPanic violation.
func (c *checker[S, O]) run(f func() *Violation) (v *Violation) {
	defer func() {
		if r := recover(); r != nil {
			v = c.fail(LawPanic, "panic: %v\n%s", r, debug.Stack())
		}
	}()
	return f()
}

func (c *checker[S, O]) fail(law, format string, args ...any) *Violation {
	return &Violation{Law: law, Step: c.step, Detail: fmt.Sprintf(format, args...)}
}

func (c *checker[S, O]) simulate() *Violation {
	m, sched := c.m, c.tr.Schedule
	n := max(sched.Replicas, 1)
	reps := make([]Replica[S, O], n)
	for i := range reps {
		reps[i] = Replica[S, O]{Actor: Actor(i), State: m.New()}
	}
	c.tr.Replicas = reps
	var pool []message[S, O]
	for i, st := range sched.Steps {
		c.step = i
		switch st.Kind {
		case StepApply:
			r := &reps[pick(st.Replica, n)]
			before := m.Clone(r.State)
			if err := m.Apply(r.State, r.Actor, st.Op); err != nil {
				if !c.same(before, r.State) {
					return c.fail(LawRejectUnchanged, "%s rejected %+v (%v) but its state changed from %+v to %+v",
						r.Actor, st.Op, err, before, r.State)
				}
				continue
			}
			r.Ops = append(r.Ops, i)
			c.tr.Accepted = append(c.tr.Accepted, i)
			if m.Leq != nil && !m.Leq(before, r.State) {
				return c.fail(LawInflationary, "%s applied %+v: state %+v is not ≤ new state %+v",
					r.Actor, st.Op, before, r.State)
			}
			if v := c.checkValue(string(r.Actor), r.State, r.Ops); v != nil {
				return v
			}
		case StepSend:
			r := reps[pick(st.Replica, n)]
			snap := Replica[S, O]{Actor: r.Actor, State: m.Clone(r.State), Ops: r.Ops[:len(r.Ops):len(r.Ops)]}
			if !m.Equal(snap.State, r.State) {
				return c.fail(LawClone, "Clone(%+v) = %+v is not Equal to it", r.State, snap.State)
			}
			pool = append(pool, message[S, O]{snap: snap, ref: m.Clone(r.State), at: i})
			c.tr.Snapshots = append(c.tr.Snapshots, snap)
		case StepDeliver, StepDrop:
			if len(pool) == 0 {
				continue
			}
			k := pick(st.Msg, len(pool))
			if st.Kind == StepDrop {
				pool = append(pool[:k:k], pool[k+1:]...)
				continue
			}
			msg := pool[k]
			r := &reps[pick(st.Replica, n)]
			before := m.Clone(r.State)
			if v := c.mergeInto(r, msg, fmt.Sprintf("%s@%d", msg.snap.Actor, msg.at)); v != nil {
				return v
			}
			if m.Leq != nil && (!m.Leq(before, r.State) || !m.Leq(msg.snap.State, r.State)) {
				return c.fail(LawUpperBound, "%s merged %+v: result %+v is not ≥ both %+v and the source",
					r.Actor, msg.snap.State, r.State, before)
			}
			if v := c.checkValue(string(r.Actor), r.State, r.Ops); v != nil {
				return v
			}
		}
	}
	c.step = -1
	return nil
}

// mergeInto merges msg's snapshot src into r, checking that Merge succeeds,
// leaves src Equal to msg's ref and that src still has the value of its
// history.
func (c *checker[S, O]) mergeInto(r *Replica[S, O], msg message[S, O], what string) *Violation {
	src, ref := msg.snap, msg.ref
	if v := c.checkValue("source "+what, src.State, src.Ops); v != nil {
		v.Law = LawSrcUnchanged
		v.Detail += " (an earlier Merge or Clone shares or modified this snapshot)"
		return v
	}
	if err := c.m.Merge(r.State, src.State); err != nil {
		return c.fail(LawMergeError, "%s merging %s: %v", r.Actor, what, err)
	}
	if !c.m.Equal(src.State, ref) {
		return c.fail(LawSrcUnchanged, "%s merging %s modified the source from %+v to %+v",
			r.Actor, what, ref, src.State)
	}
	r.Ops = union(r.Ops, src.Ops)
	return nil
}

func (c *checker[S, O]) same(a, b S) bool {
	return c.m.Equal(a, b) && reflect.DeepEqual(c.m.Value(a), c.m.Value(b))
}

func (c *checker[S, O]) checkValue(who string, s S, hist []int) *Violation {
	got := c.m.Value(s)
	ops := c.tr.Ops(hist)
	want := c.m.Expect(ops)
	if reflect.DeepEqual(got, want) {
		return nil
	}
	types := ""
	if reflect.TypeOf(got) != reflect.TypeOf(want) {
		types = fmt.Sprintf(" (types %T and %T differ)", got, want)
	}
	return c.fail(LawValue, "%s: Value = %v but Expect = %v%s for its %d ops %s; state %+v",
		who, got, want, types, len(hist), formatOps(hist, ops), s)
}

func formatOps[O any](steps []int, ops []O) string {
	const limit = 16
	s := make([]string, 0, min(len(ops), limit)+1)
	for i := range min(len(ops), limit) {
		s = append(s, fmt.Sprintf("%d:%+v", steps[i], ops[i]))
	}
	if len(ops) > limit {
		s = append(s, fmt.Sprintf("... %d more", len(ops)-limit))
	}
	return "[" + strings.Join(s, " ") + "]"
}

// union merges two ascending lists without duplicates into a new list.
func union(a, b []int) []int {
	out := append(append(make([]int, 0, len(a)+len(b)), a...), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

package proptest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/leanovate/gopter"
)

// Result is the outcome of RunLaws or RunConvergence.
type Result struct {
	Property  string // "laws of <model>" or "convergence of <model>"
	Seed      int64  // the seed used; replay with COUNTERKIT_SEED=<Seed>
	Cases     int    // cases required to pass
	Passed    bool
	Succeeded int // cases that passed
	// Violation is the broken law of the smallest failing schedule found,
	// nil when the check passed or stopped on an error; Schedule renders
	// that schedule.
	Violation *Violation
	Schedule  string
	// Shrinks counts the successful shrinking steps; OriginalSteps is the
	// length of the failing schedule before shrinking.
	Shrinks, OriginalSteps int
	Report                 string // the verdict, seed, violation and schedule
}

// RunLaws checks, on cfg.Cases random schedules, that the states the
// schedule reaches obey the join-semilattice laws and the reference model:
// everything Simulate checks per step, then, on the final replica states
// and two picked snapshots, Clone fidelity, idempotence, identity with the
// empty state, commutativity and the value of every pairwise join,
// associativity of every triple, and the Leq laws when m.Leq is set.
//
// The error, wrapping crdt.ErrInvalidConfig, is for an invalid model or
// configuration; a broken law is reported in the Result.
func RunLaws[S any, O any](m Model[S, O], cfg Options) (Result, error) {
	return runCheck(m, cfg, "laws of "+m.name(), (*checker[S, O]).laws)
}

// RunConvergence checks, on cfg.Cases random schedules, everything
// Simulate checks per step, then runs full gossip (every replica merges a
// pre-gossip snapshot of every other) and requires all replicas to be Equal
// with Value equal to Expect of all accepted ops, and to stay unchanged
// when merging each other again.
//
// The error, wrapping crdt.ErrInvalidConfig, is for an invalid model or
// configuration; a non-converging model is reported in the Result.
func RunConvergence[S any, O any](m Model[S, O], cfg Options) (Result, error) {
	return runCheck(m, cfg, "convergence of "+m.name(), (*checker[S, O]).converge)
}

// LawsProp returns RunLaws's property for a gopter.Properties of your own;
// its failure label is the Violation text.
func LawsProp[S any, O any](m Model[S, O], cfg Options) gopter.Prop {
	return scheduleProp(m, cfg, (*checker[S, O]).laws, nil)
}

// ConvergenceProp returns RunConvergence's property.
func ConvergenceProp[S any, O any](m Model[S, O], cfg Options) gopter.Prop {
	return scheduleProp(m, cfg, (*checker[S, O]).converge, nil)
}

// CheckLaws runs RunLaws and fails t on any violation, with the law, the
// shrunk schedule and the command that replays it. It always logs the seed.
func CheckLaws[S any, O any](t *testing.T, m Model[S, O], cfg Options) {
	t.Helper()
	checkWith(t, func() (Result, error) { return RunLaws(m, cfg) })
}

// CheckConvergence runs RunConvergence and fails t like CheckLaws.
func CheckConvergence[S any, O any](t *testing.T, m Model[S, O], cfg Options) {
	t.Helper()
	checkWith(t, func() (Result, error) { return RunConvergence(m, cfg) })
}

type testingT interface {
	Helper()
	Name() string
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

func checkWith(t testingT, run func() (Result, error)) {
	t.Helper()
	res, err := run()
	if err != nil {
		t.Fatalf("proptest: %v", err)
		return
	}
	replay := replayCommand(t.Name(), res.Seed)
	t.Logf("proptest: %s: seed %d, %d cases; replay: %s", res.Property, res.Seed, res.Cases, replay)
	if !res.Passed {
		t.Errorf("%s\nreplay: %s", res.Report, replay)
	}
}

func runCheck[S any, O any](m Model[S, O], cfg Options, name string, final func(*checker[S, O]) *Violation) (Result, error) {
	if err := m.validate(); err != nil {
		return Result{}, err
	}
	cfg, err := cfg.normalize()
	if err != nil {
		return Result{}, err
	}
	params := gopter.DefaultTestParametersWithSeed(cfg.Seed) // MinSize 0, one worker
	params.MinSuccessfulTests = cfg.Cases
	params.MaxSize = MaxSteps(cfg.MaxOps)
	var last *Violation
	tr := scheduleProp(m, cfg, final, func(v *Violation) { last = v }).Check(params)
	res := Result{Property: name, Seed: cfg.Seed, Cases: cfg.Cases, Passed: tr.Passed(), Succeeded: tr.Succeeded}
	var b strings.Builder
	switch {
	case res.Passed:
		fmt.Fprintf(&b, "proptest: %s passed %d cases (seed %d)", name, tr.Succeeded, cfg.Seed)
	case tr.Status == gopter.TestFailed:
		res.Violation = last
		fmt.Fprintf(&b, "proptest: %s falsified after %d passed cases (seed %d)\n", name, tr.Succeeded, cfg.Seed)
		for _, l := range tr.Labels {
			fmt.Fprintln(&b, l)
		}
		if len(tr.Args) > 0 {
			arg := tr.Args[0]
			res.Schedule = arg.ArgFormatted
			res.Shrinks = arg.Shrinks
			if s, ok := arg.OrigArg.(Schedule[O]); ok {
				res.OriginalSteps = len(s.Steps)
			}
			fmt.Fprintf(&b, "shrunk %d times from a schedule of %d steps to:\n%s", res.Shrinks, res.OriginalSteps, res.Schedule)
		}
	case tr.Status == gopter.TestError:
		fmt.Fprintf(&b, "proptest: %s stopped with an error after %d passed cases (seed %d): %v", name, tr.Succeeded, cfg.Seed, tr.Error)
	default:
		fmt.Fprintf(&b, "proptest: %s gave up after %d passed cases and %d discarded (seed %d): GenOp rejected too many values",
			name, tr.Succeeded, tr.Discarded, cfg.Seed)
	}
	res.Report = b.String()
	return res, nil
}

// scheduleProp builds the gopter property: generate a schedule, simulate it,
// run final, and on failure shrink by removing steps while some law still
// breaks. record, if set, receives the violation of the smallest failing
// schedule.
func scheduleProp[S any, O any](m Model[S, O], cfg Options, final func(*checker[S, O]) *Violation, record func(*Violation)) gopter.Prop {
	if err := m.validate(); err != nil {
		return func(*gopter.GenParameters) *gopter.PropResult {
			return &gopter.PropResult{Status: gopter.PropError, Error: err}
		}
	}
	gen := GenSchedule[O](m.GenOp, cfg)
	run := func(s Schedule[O]) *Violation {
		c := &checker[S, O]{m: m, tr: &Trace[S, O]{Schedule: s}, step: -1}
		return c.run(func() *Violation {
			if v := c.simulate(); v != nil {
				return v
			}
			return final(c)
		})
	}
	return gopter.SaveProp(func(gp *gopter.GenParameters) *gopter.PropResult {
		v, ok := gen(gp).Retrieve()
		if !ok {
			return &gopter.PropResult{Status: gopter.PropUndecided}
		}
		orig := v.(Schedule[O])
		viol := run(orig)
		if viol == nil {
			return &gopter.PropResult{Status: gopter.PropTrue}
		}
		shrunk, shrinks := orig, 0
	shrink:
		for shrinks < gp.MaxShrinkCount {
			next := shrinkSchedule[O](shrunk)
			for cand, ok := next(); ok; cand, ok = next() {
				if cv := run(cand.(Schedule[O])); cv != nil {
					shrunk, viol = cand.(Schedule[O]), cv
					shrinks++
					continue shrink
				}
			}
			break // no smaller schedule still fails
		}
		if record != nil {
			record(viol)
		}
		return &gopter.PropResult{
			Status: gopter.PropFalse,
			Labels: []string{viol.Error()},
			Args: gopter.PropArgs{{
				Label:            "schedule",
				Arg:              shrunk,
				ArgFormatted:     shrunk.String(),
				OrigArg:          orig,
				OrigArgFormatted: orig.String(),
				Shrinks:          shrinks,
			}},
		}
	})
}

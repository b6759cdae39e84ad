package faulty

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/counterkit/counterkit/crdt"
)

// An Answer is how a Plan answers one write: with Err, after applying the
// write (Apply: a lost acknowledgement) or instead of it.
type Answer struct {
	Apply bool
	Err   error
}

// A Plan is a Hook (Options.Hook: plan.Hook) that numbers the writes
// through a wrapper (Put, Delete, Apply) from 1, in the order they start,
// and answers those Answers lists, so that a test can give any write any
// error. It is safe for concurrent use.
type Plan struct {
	mu      sync.Mutex
	answers map[int]Answer
	writes  int
	byCall  map[uint64]int // a running write's number, by Call.N
	log     []string
}

// NewPlan returns a Plan answering the writes of answers.
func NewPlan(answers map[int]Answer) *Plan {
	return &Plan{answers: answers, byCall: map[uint64]int{}}
}

// Set replaces the answers, for the writes from the next one on (the
// numbering goes on).
func (p *Plan) Set(answers map[int]Answer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answers = answers
}

// Hook is the Plan's Hook.
func (p *Plan) Hook(_ context.Context, c Call, after bool) error {
	if IsRead(c.Method) {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if after {
		n := p.byCall[c.N]
		delete(p.byCall, c.N)
		if a, ok := p.answers[n]; ok && a.Apply {
			return a.Err
		}
		return nil
	}
	p.writes++
	n := p.writes
	a, ok := p.answers[n]
	line := fmt.Sprintf("#%d %v", n, c)
	if ok {
		line += fmt.Sprintf(" [apply=%v err=%v]", a.Apply, a.Err)
	}
	p.log = append(p.log, line)
	if ok && !a.Apply {
		return a.Err
	}
	p.byCall[c.N] = n
	return nil
}

// Writes returns how many writes have started.
func (p *Plan) Writes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.writes
}

// Log returns one line per write: its number, its call, and its Answer.
func (p *Plan) Log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

// A WriteError is an error a store may answer a write with.
type WriteError struct {
	Name string
	Err  error
	// NotWritten: an error a store returns only when nothing was
	// written (package store, "Errors"): crdt.ErrUnavailable and the
	// refusals of the input.
	NotWritten bool
}

// WriteErrors are the kinds of error a write can end with: those saying
// nothing was written, and those a caller must take as ambiguous (the
// write may have landed).
var WriteErrors = []WriteError{
	{"unavailable", fmt.Errorf("faulty: injected: %w", crdt.ErrUnavailable), true},
	{"too-large", fmt.Errorf("faulty: injected size refusal: %w", crdt.ErrTooLarge), true},
	{"corrupt", fmt.Errorf("faulty: injected token refusal: %w", crdt.ErrCorruptEncoding), true},
	{"invalid-key", fmt.Errorf("faulty: injected key refusal: %w", crdt.ErrInvalidKey), true},
	{"misconfigured", fmt.Errorf("faulty: injected configuration refusal: %w", crdt.ErrMisconfiguredStore), false},
	{"deadline", context.DeadlineExceeded, false},
	{"canceled", context.Canceled, false},
	{"unclassified", errors.New("faulty: injected unclassified error"), false},
	{"ambiguous", fmt.Errorf("faulty: injected: %w", crdt.ErrAmbiguousWrite), false},
}

// A Trial is one plan of Trials: Kind answers writes First to Last (one
// write, or two in a row), after applying them (Apply) or instead.
type Trial struct {
	Kind        WriteError
	Apply       bool
	First, Last int
}

// Answers returns the trial's answers, for NewPlan or Plan.Set.
func (t Trial) Answers() map[int]Answer {
	a := Answer{Apply: t.Apply, Err: t.Kind.Err}
	return map[int]Answer{t.First: a, t.Last: a}
}

// String names the trial: its kind, Apply, and its writes.
func (t Trial) String() string {
	return fmt.Sprintf("%s/apply=%v #%d-#%d", t.Kind.Name, t.Apply, t.First, t.Last)
}

// Trials returns the trials of a run of n writes: each of WriteErrors
// answering one write, or two in a row, among the first n+2 (a retry may
// add writes), landed or not, except a NotWritten error answering a
// landed write (which a store never does) unless broken.
func Trials(n int, broken bool) []Trial {
	var out []Trial
	for _, k := range WriteErrors {
		for _, apply := range []bool{true, false} {
			if apply && k.NotWritten && !broken {
				continue
			}
			for p := 1; p <= n+2; p++ {
				for q := p; q <= min(p+1, n+2); q++ {
					out = append(out, Trial{Kind: k, Apply: apply, First: p, Last: q})
				}
			}
		}
	}
	return out
}

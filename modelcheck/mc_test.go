package modelcheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
)

func TestCounts(t *testing.T) {
	txns := []Txn{{"x", 1}, {"y", 10}, {"d", -100}, {"z", 1000}}
	for _, tc := range []struct {
		value int64
		want  map[crdt.TxnID]int
	}{
		{0, map[crdt.TxnID]int{}},
		{1011, map[crdt.TxnID]int{"x": 1, "y": 1, "z": 1}},
		{2051 - 2000 + 1000, map[crdt.TxnID]int{"x": 1, "y": 5, "z": 1}},
		{-100, map[crdt.TxnID]int{"d": 1}},
		{1000 - 200 + 2, map[crdt.TxnID]int{"x": 2, "d": 2, "z": 1}},
	} {
		got, err := Counts(tc.value, txns)
		if err != nil {
			t.Fatalf("%d: %v", tc.value, err)
		}
		for _, x := range txns {
			if got[x.ID] != tc.want[x.ID] {
				t.Errorf("%d: %q counts %d, want %d", tc.value, x.ID, got[x.ID], tc.want[x.ID])
			}
		}
	}
	if _, err := Counts(100000, txns); err == nil {
		t.Error("a value no combination makes was decoded")
	}
}

func TestDefinite(t *testing.T) {
	for err, want := range map[error]bool{
		nil:                    false,
		crdt.ErrUnavailable:    true,
		context.Canceled:       true,
		crdt.ErrAmbiguousWrite: false,
		ErrUnclassified:        false,
		crdt.ErrOutsideWindow:  true,
		fmt.Errorf("%w: %w", crdt.ErrAmbiguousWrite, crdt.ErrUnavailable): false,
		errors.New("something"): false,
	} {
		if got := Definite(err); got != want {
			t.Errorf("Definite(%v) = %v, want %v", err, got, want)
		}
	}
}

func TestChoicesRoundTrip(t *testing.T) {
	cs := []int{0, 3, 12, 1}
	got, err := ParseChoices(FormatChoices(cs))
	if err != nil || fmt.Sprint(got) != fmt.Sprint(cs) {
		t.Fatalf("%v, %v", got, err)
	}
	if _, err := ParseChoices("1.x"); err == nil {
		t.Fatal("a bad schedule parsed")
	}
}

func TestQuiet(t *testing.T) {
	dump := "goroutine 1 [running]:\nf()\n\ngoroutine 2 [chan receive]:\ng()\n\ngoroutine 3 [sync.Mutex.Lock, 2 minutes]:\nh()\n"
	if !quiet([]byte(dump)) {
		t.Error("waiting goroutines reported busy")
	}
	for _, state := range []string{"runnable", "running", "semacquire", "copystack", "GC assist wait"} {
		if quiet([]byte(dump + "\ngoroutine 4 [" + state + "]:\ni()\n")) {
			t.Errorf("a goroutine in state %q reported waiting", state)
		}
	}
}

// TestExploreCountsSchedules: two scripts of one Put each, with the
// Refuse fate and at most one fault, have six schedules.
func TestExploreCountsSchedules(t *testing.T) {
	s := Scope{Name: "two-puts", Fates: Of(Refuse), MaxFaults: 1, MaxPreemptions: 1,
		Build: func(w *World) {
			for _, name := range []string{"A", "B"} {
				w.Go(name, func(r *Runner) {
					r.Do(name+"1", "", 0, func(ctx context.Context) Result {
						return Result{Err: w.Store.Put(ctx, "k", crdt.ActorID(name), []byte(name), nil)}
					})
				})
			}
		}}
	rep := Explore(s)
	// First choice: A deliver, A refuse, B deliver, B refuse (4); then the
	// other's call: deliver or (if no fault yet) refuse.
	// A-deliver → B {deliver, refuse}: 2; A-refuse → B deliver: 1; same for B first: 3.
	if rep.Schedules != 6 || rep.Violation != nil {
		t.Fatalf("%d schedules (%v), want 6", rep.Schedules, rep.Violation)
	}
}

// TestRetryWindowInTime: a retry starting RetryWindow or more after the
// transaction's first call is outside the window: untimed, the transaction
// may then count twice; timed, a retry answered instead of refused breaks
// the promise. Inside the window an answer Applied after an
// acknowledgement does.
func TestRetryWindowInTime(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timed   bool
		advance time.Duration
		counts  int
		wantErr bool
	}{
		{"untimed after the window, counted twice", false, 2 * time.Hour, 2, false},
		{"timed after the window, answered", true, 2 * time.Hour, 1, true},
		{"untimed inside the window, applied again", false, 30 * time.Minute, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			s := Scope{Name: "window", Build: func(w *World) {
				w.RetryWindow, w.Timed = time.Hour, tc.timed
				w.Go("A", func(r *Runner) {
					applied := func(context.Context) Result { return Result{Applied: true, Outcome: "applied"} }
					r.Do("A1", "x", 1, applied)
					w.Clock.Advance(tc.advance)
					r.Do("A2", "x", 1, applied)
					err = w.CheckCounts(map[crdt.TxnID]int{"x": tc.counts}, []Txn{{"x", 1}}, false)
				})
			}}
			if rep := Explore(s); rep.Violation != nil {
				t.Fatal(rep.Violation)
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("CheckCounts: %v, want an error: %v", err, tc.wantErr)
			}
		})
	}
}

// TestKeyNamesInTraces: a named key appears by its name in the trace.
func TestKeyNamesInTraces(t *testing.T) {
	s := Scope{Name: "names", Build: func(w *World) {
		w.Store.Name("counterkit.txn/ABC", "record(x)")
		w.Go("A", func(r *Runner) {
			r.Do("A1", "", 0, func(ctx context.Context) Result {
				return Result{Err: w.Store.Put(ctx, "counterkit.txn/ABC", "a", []byte("v"), nil)}
			})
		})
	}}
	_, trace := Replay(s, nil)
	if len(trace) == 0 || !strings.Contains(trace[0], "A1 Put record(x) #1") {
		t.Fatalf("trace %q does not name the key", trace)
	}
}

// TestStaleAges: after three writes of a key, a Stale fetch may be served
// any of the MaxStaleAge states before the current one (one option each),
// or by default only the state just before it.
func TestStaleAges(t *testing.T) {
	for _, tc := range []struct {
		maxAge int
		want   string // siblings each schedule's fetch was served
	}{
		{0, "[3 2]"},
		{1, "[3 2]"},
		{2, "[3 2 1]"},
		{3, "[3 2 1 0]"},
		{5, "[3 2 1 0]"}, // no state older than the first write's
	} {
		var served []int
		s := Scope{Name: "stale-ages", Fates: Of(Stale), MaxFaults: 1, MaxStaleAge: tc.maxAge,
			Build: func(w *World) {
				w.Go("A", func(r *Runner) {
					for i := range 3 {
						r.Do(fmt.Sprintf("P%d", i), "", 0, func(ctx context.Context) Result {
							return Result{Err: w.Store.Put(ctx, "k", "a", []byte{byte(i)}, nil)}
						})
					}
					r.Do("F", "", 0, func(ctx context.Context) Result {
						vals, _, err := w.Store.Fetch(ctx, "k")
						served = append(served, len(vals))
						return Result{Err: err}
					})
				})
			}}
		rep := Explore(s)
		if rep.Violation != nil {
			t.Fatal(rep.Violation)
		}
		if got := fmt.Sprint(served); got != tc.want || rep.Schedules != len(served) {
			t.Errorf("MaxStaleAge %d: %d schedules served %s siblings, want %s", tc.maxAge, rep.Schedules, got, tc.want)
		}
	}
	v, trace := Replay(Scope{Name: "stale-trace", Fates: Of(Stale), MaxFaults: 1, MaxStaleAge: 2, Build: func(w *World) {
		w.Go("A", func(r *Runner) {
			for _, l := range []string{"P1", "P2", "F"} {
				r.Do(l, "", 0, func(ctx context.Context) Result {
					if l == "F" {
						_, _, err := w.Store.Fetch(ctx, "k")
						return Result{Err: err}
					}
					return Result{Err: w.Store.Put(ctx, "k", "a", []byte(l), nil)}
				})
			}
		})
	}}, []int{0, 0, 2})
	if v != nil || !strings.Contains(strings.Join(trace, "\n"), "F Fetch k #1 → stale by 2") {
		t.Fatalf("trace %q (%v) does not show the stale age", trace, v)
	}
}

package faulty_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

func putRow(key, value string, ts int64) store.Mutation {
	return store.Mutation{Partition: key, Op: store.OpPut, Key: []byte("r"), Value: []byte(value), Timestamp: ts}
}

// A Policy sees each Call: its method, key, number and, for an Apply, the
// batch, so it can pick one kind of write. This one refuses partition
// deletes and passes everything else.
func ExampleCall() {
	ctx := context.Background()
	p := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{
		Policy: func(c faulty.Call) faulty.Fault {
			fmt.Println(c, faulty.IsRead(c.Method), len(c.Batch))
			if c.Method == faulty.MethodApply && c.Batch[0].Op == store.OpDeletePartition {
				return faulty.Refuse
			}
			return faulty.Pass
		},
	})
	_ = p.Apply(ctx, []store.Mutation{putRow("acct-1", "10", 1)})
	err := p.Apply(ctx, []store.Mutation{{Partition: "acct-1", Op: store.OpDeletePartition, Timestamp: 2}})
	rows, _ := p.Snapshot(ctx, "acct-1", 10, store.ReadComplete)
	fmt.Println(errors.Is(err, crdt.ErrUnavailable), len(rows))
	// Output:
	// Apply "acct-1" #1 false 1
	// Apply "acct-1" #2 false 1
	// Snapshot "acct-1" #3 true 0
	// true 1
}

// Each Fault names what happens to a call; for a write, whether it lands
// and which error the caller sees.
func ExampleFault() {
	ctx := context.Background()
	for _, f := range []faulty.Fault{faulty.Pass, faulty.Refuse, faulty.LoseAck, faulty.Lose, faulty.Unclassified} {
		inner := memory.NewSiblings()
		s := faulty.NewSiblings(inner, faulty.Options{Policy: faulty.Script(f)})
		err := s.Put(ctx, "k", "a", []byte("v"), nil)
		fmt.Printf("%-12s landed=%v ambiguous=%v unavailable=%v unclassified=%v\n", f,
			inner.Count("k") == 1, errors.Is(err, crdt.ErrAmbiguousWrite),
			errors.Is(err, crdt.ErrUnavailable), errors.Is(err, faulty.ErrUnclassified))
	}
	old := faulty.StaleBy(3)
	fmt.Println(old, old.Kind() == faulty.Stale, old.Age())
	// Output:
	// pass         landed=true ambiguous=false unavailable=false unclassified=false
	// refuse       landed=false ambiguous=false unavailable=true unclassified=false
	// lose-ack     landed=true ambiguous=true unavailable=false unclassified=false
	// lose         landed=false ambiguous=true unavailable=false unclassified=false
	// unclassified landed=true ambiguous=false unavailable=false unclassified=true
	// stale(3) true 3
}

// A Hook runs before and after each call. Failing before a call stops it
// (a crash); failing after it returns an error for a call that took effect
// (a lost acknowledgement).
func ExampleHook() {
	ctx := context.Background()
	inner := memory.NewSiblings()
	crash := errors.New("process crashed")
	s := faulty.NewSiblings(inner, faulty.Options{
		Hook: func(_ context.Context, c faulty.Call, after bool) error {
			fmt.Println("hook:", c, "after:", after)
			switch {
			case c.Key == "audit" && !after:
				return crash
			case c.Method == faulty.MethodPut && after:
				return fmt.Errorf("connection reset: %w", crdt.ErrAmbiguousWrite)
			}
			return nil
		},
	})
	err := s.Put(ctx, "balance", "a", []byte("v"), nil)
	fmt.Println("balance:", errors.Is(err, crdt.ErrAmbiguousWrite), inner.Count("balance"))
	err = s.Put(ctx, "audit", "a", []byte("v"), nil)
	fmt.Println("audit:", errors.Is(err, crash), inner.Count("audit"))
	// Output:
	// hook: Put "balance" #1 after: false
	// hook: Put "balance" #1 after: true
	// balance: true 1
	// hook: Put "audit" #2 after: false
	// audit: true 0
}

// A stale read answers from an older recorded state. By default the
// wrapper records the states that reads returned; RecordWrites also records
// the state after every write, so a stale read can return one that no
// reader saw. History bounds how many are kept (negative: none, and a
// stale read is answered fresh).
func ExampleOptions() {
	ctx := context.Background()
	for _, o := range []faulty.Options{{History: -1}, {}, {RecordWrites: true}} {
		p := faulty.NewPartitions(memory.NewPartitions(), o)
		_ = p.Apply(ctx, []store.Mutation{putRow("acct-1", "10", 1)})
		_, _ = p.Snapshot(ctx, "acct-1", 10, store.ReadAny) // a reader sees 10
		_ = p.Apply(ctx, []store.Mutation{putRow("acct-1", "20", 2)})
		_ = p.Apply(ctx, []store.Mutation{putRow("acct-1", "30", 3)})

		p.SetPolicy(faulty.Script(faulty.Stale))
		rows, _ := p.Snapshot(ctx, "acct-1", 10, store.ReadAny)
		fmt.Printf("History=%d RecordWrites=%v: stale read %s\n", o.History, o.RecordWrites, rows[0].Value)
	}
	// Output:
	// History=-1 RecordWrites=false: stale read 30
	// History=0 RecordWrites=false: stale read 10
	// History=0 RecordWrites=true: stale read 20
}

// A Partitions wrapper can hold a batch in flight: the writer sees an
// ambiguous error, readers do not see the rows, and the test delivers it
// when it chooses, possibly after newer writes.
func ExamplePartitions() {
	ctx := context.Background()
	p := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{
		Policy: faulty.Only(faulty.Script(faulty.Hold), faulty.MethodApply),
	})
	err := p.Apply(ctx, []store.Mutation{putRow("acct-1", "old", 1)})
	fmt.Println(errors.Is(err, crdt.ErrAmbiguousWrite), p.Held(), p.HeldCalls())
	_ = p.Apply(ctx, []store.Mutation{putRow("acct-1", "new", 2)})

	if err := p.Deliver(0); err != nil { // the older batch arrives last
		fmt.Println(err)
	}
	rows, _ := p.Snapshot(ctx, "acct-1", 10, store.ReadComplete)
	fmt.Printf("%s held=%d\n", rows[0].Value, p.Held())
	fmt.Println(errors.Is(p.Deliver(0), crdt.ErrNotFound))
	// Output:
	// true 1 [Apply "acct-1" #1]
	// new held=0
	// true
}

// Any func(Call) Fault is a Policy; Only and Keys narrow one to some
// methods and keys. Here every second write to an account key loses its
// acknowledgement, and other keys are left alone.
func ExamplePolicy() {
	ctx := context.Background()
	writes := 0
	var everySecond faulty.Policy = func(faulty.Call) faulty.Fault {
		writes++
		if writes%2 == 0 {
			return faulty.LoseAck
		}
		return faulty.Pass
	}
	isAccount := func(key string) bool { return strings.HasPrefix(key, "acct/") }
	s := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{
		Policy: faulty.Keys(faulty.Only(everySecond, faulty.MethodPut), isAccount),
	})
	for _, key := range []string{"acct/1", "log/1", "acct/2", "acct/3", "acct/4"} {
		_, _, _ = s.Fetch(ctx, key)
		err := s.Put(ctx, key, "a", []byte("v"), nil)
		fmt.Println(key, errors.Is(err, crdt.ErrAmbiguousWrite))
	}
	c := s.Counts()
	fmt.Println("pass:", c[faulty.Pass], "lose-ack:", c[faulty.LoseAck])
	// Output:
	// acct/1 false
	// log/1 false
	// acct/2 true
	// acct/3 false
	// acct/4 true
	// pass: 8 lose-ack: 2
}

// Rates drive Seeded: the same seed and the same calls give the same
// faults, so a failing randomised test replays from its seed. A rate of 1
// gives the fault to every write.
func ExampleRates() {
	ctx := context.Background()
	run := func(seed int64, r faulty.Rates) map[faulty.Fault]int {
		s := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{Policy: faulty.Seeded(seed, r)})
		for i := range 50 {
			_ = s.Put(ctx, fmt.Sprint("k", i), "a", []byte("v"), nil)
		}
		return s.Counts()
	}
	mixed := faulty.Rates{Refuse: 0.2, LoseAck: 0.2, Lose: 0.1}
	a, b := run(7, mixed), run(7, mixed)
	same := len(a) == len(b)
	for f, n := range a {
		same = same && b[f] == n
	}
	fmt.Println("replays:", same, "faults:", a[faulty.Refuse]+a[faulty.LoseAck]+a[faulty.Lose]+a[faulty.Pass] == 50)

	all := run(1, faulty.Rates{Refuse: 1})
	fmt.Println("refused:", all[faulty.Refuse], "passed:", all[faulty.Pass])
	// Output:
	// replays: true faults: true
	// refused: 50 passed: 0
}

// deleteless hides the Delete method of the store it wraps.
type deleteless struct{ store.Siblings }

// Siblings always has a Delete method; Store hands out the wrapper as a
// store.SiblingDeleter only when the wrapped store can delete, so code that
// probes for the capability sees the truth.
func ExampleSiblings() {
	ctx := context.Background()
	for _, inner := range []store.Siblings{memory.NewSiblings(), deleteless{memory.NewSiblings()}} {
		s := faulty.NewSiblings(inner, faulty.Options{})
		_, canDelete := s.Store().(store.SiblingDeleter)
		err := s.Delete(ctx, "k", nil)
		fmt.Println(canDelete, errors.Is(err, crdt.ErrMisconfiguredStore))
	}
	// Output:
	// true false
	// false true
}

// A Plan numbers the writes through a wrapper and answers the ones it
// lists: the second lands and loses its acknowledgement to a done
// context; the third is refused for what it is, and nothing is written.
func ExamplePlan() {
	ctx := context.Background()
	inner := memory.NewSiblings()
	plan := faulty.NewPlan(map[int]faulty.Answer{
		2: {Apply: true, Err: context.DeadlineExceeded},
		3: {Err: fmt.Errorf("value refused: %w", crdt.ErrTooLarge)},
	})
	s := faulty.NewSiblings(inner, faulty.Options{Hook: plan.Hook})
	for _, key := range []string{"a", "b", "c"} {
		err := s.Put(ctx, key, "w", []byte("v"), nil)
		fmt.Println(key, err, inner.Count(key))
	}
	fmt.Println(plan.Writes(), strings.Join(plan.Log(), "\n"))
	// Output:
	// a <nil> 1
	// b context deadline exceeded 1
	// c value refused: counterkit: state exceeds size limit 0
	// 3 #1 Put "a" #1
	// #2 Put "b" #2 [apply=true err=context deadline exceeded]
	// #3 Put "c" #3 [apply=false err=value refused: counterkit: state exceeds size limit]
}

// An Answer with Apply set lands the write before its error is returned.
func ExampleAnswer() {
	ctx := context.Background()
	inner := memory.NewSiblings()
	plan := faulty.NewPlan(map[int]faulty.Answer{1: {Apply: true, Err: errors.New("connection reset")}})
	err := faulty.NewSiblings(inner, faulty.Options{Hook: plan.Hook}).Put(ctx, "k", "w", []byte("v"), nil)
	fmt.Println(err, inner.Count("k"))
	// Output: connection reset 1
}

// WriteErrors lists the errors a test can give a write; Trials gives a
// NotWritten one only to a write that did not land.
func ExampleWriteError() {
	for _, e := range faulty.WriteErrors {
		fmt.Println(e.Name, e.NotWritten)
	}
	// Output:
	// unavailable true
	// too-large true
	// corrupt true
	// invalid-key true
	// misconfigured false
	// deadline false
	// canceled false
	// unclassified false
	// ambiguous false
}

// Trials lists the plans for a run of writes: every kind of error on one
// write or two in a row, landed or not (a refusal only not landed). A
// test runs its scenario once per trial, with the trial's answers.
func ExampleTrial() {
	trials := faulty.Trials(1, false)
	fmt.Println(len(trials), trials[0], trials[len(trials)-1])
	ctx := context.Background()
	for _, tr := range trials[:2] {
		inner := memory.NewSiblings()
		plan := faulty.NewPlan(tr.Answers())
		err := faulty.NewSiblings(inner, faulty.Options{Hook: plan.Hook}).Put(ctx, "k", "w", []byte("v"), nil)
		fmt.Println(tr, errors.Is(err, crdt.ErrUnavailable), inner.Count("k"))
	}
	// Output:
	// 70 unavailable/apply=false #1-#1 ambiguous/apply=false #3-#3
	// unavailable/apply=false #1-#1 true 0
	// unavailable/apply=false #1-#2 true 0
}

// Judge checks one run: update 10 was acknowledged and counts twice, and
// update 1, whose every attempt was answered "nothing written", counts.
func ExampleJudge() {
	problems, classes := faulty.Judge(map[int64]int64{1: 1, 10: 2, 100: 1},
		map[int64]bool{10: true, 100: true}, map[int64]bool{1: true})
	fmt.Println(problems)
	fmt.Println(classes)
	// Output:
	// [update 1 told not written, counted 1 update 10 (acked true) counted 2]
	// [told not written, counted 1 counted 2]
}

// Groups collects the runs of an exploration that went wrong, by group;
// Add reports a group's first run, the one worth logging.
func ExampleGroups() {
	bad := faulty.Groups{}
	fmt.Println(bad.Add("none/unavailable/apply=true", []string{"counted 2"}))
	fmt.Println(bad.Add("none/unavailable/apply=true", []string{"counted 2"}))
	fmt.Println(len(bad), bad["none/unavailable/apply=true"].Runs)
	// Output:
	// true
	// false
	// 1 2
}

// A Group is the runs of one group and the classes of their problems.
func ExampleGroup() {
	bad := faulty.Groups{}
	bad.Add("fresh/corrupt/apply=true", []string{"counted 2"})
	bad.Add("fresh/corrupt/apply=true", []string{"counted 3", "counted 2"})
	g := bad["fresh/corrupt/apply=true"]
	fmt.Println(g.Runs, g.Classes["counted 2"], g.Classes["counted 3"])
	// Output: 2 2 1
}

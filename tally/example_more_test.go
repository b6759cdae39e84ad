package tally_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
)

// Options are the time contract: a mutator lives Lifetime and stops
// taking updates Margin before it expires; New refuses a Grace shorter
// than 3·MaxSkew.
func ExampleOptions() {
	now := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	cfg := exampleConfig(&now)
	cfg.Lifetime = time.Hour
	cfg.Margin = 10 * time.Minute
	cfg.MaxSkew = time.Minute
	cfg.Grace = 5 * time.Minute
	c, err := tally.New[*tally.Sum](memory.NewPartitions(), "k", cfg)
	fmt.Println(err)
	m, _ := c.NewMutator()
	fmt.Println(m.ID(), "expires", m.ExpiresAt().Format(time.TimeOnly))
	now = now.Add(50 * time.Minute) // expires_at − Margin
	err = m.Stage(func(s *tally.Sum) error { return s.Add(1) })
	fmt.Println(errors.Is(err, crdt.ErrExpired))

	cfg.Grace = 2 * time.Minute // < 3·MaxSkew
	_, err = tally.New[*tally.Sum](memory.NewPartitions(), "k", cfg)
	fmt.Println(errors.Is(err, crdt.ErrInvalidConfig))
	// Output:
	// <nil>
	// web-1 expires 01:00:00
	// true
	// true
}

// A counter is one partition: a row per mutator shard, keyed 's' + the
// mutator id and holding bytes that DecodeShard turns back into a Shard,
// and after a GC the tally row, keyed 't'.
func ExampleShardRowKey() {
	ctx := context.Background()
	now := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	db := memory.NewPartitions()
	c, _ := tally.New[*tally.Sum](db, "k", exampleConfig(&now))
	for _, n := range []int64{42, 8} {
		m, _ := c.NewMutator()
		_ = m.Update(ctx, func(s *tally.Sum) error { return s.Add(n) })
	}
	fmt.Printf("%q\n", tally.ShardRowKey("web-1"))

	rows, _ := db.Snapshot(ctx, "k", 100, store.ReadComplete)
	for _, r := range rows {
		sh, err := tally.DecodeShard[*tally.Sum](r.Value)
		fmt.Printf("%q %s %d %s %v\n", r.Key, sh.Mutator, sh.State.Value(), time.UnixMicro(sh.ExpiresAt).UTC().Format(time.DateTime), err)
	}
	now = now.Add(49 * time.Hour) // both shards are final
	_, _ = c.GC(ctx)
	rows, _ = db.Snapshot(ctx, "k", 100, store.ReadComplete)
	t, err := tally.DecodeTally[*tally.Sum](rows[0].Value)
	fmt.Printf("%d row: %q %d %v\n", len(rows), rows[0].Key, t.State.Value(), err)
	// Output:
	// "sweb-1"
	// "sweb-1" web-1 42 2024-05-02 00:00:00 <nil>
	// "sweb-2" web-2 8 2024-05-02 00:00:00 <nil>
	// 1 row: "t" 50 <nil>
}

// A GCBatch is idempotent and carries its own timestamp, so applying it
// again, or late after a newer GC, converges to the same state.
func ExampleGCBatch() {
	ctx := context.Background()
	now := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	db := memory.NewPartitions()
	c, _ := tally.New[*tally.Sum](db, "k", exampleConfig(&now))
	m, _ := c.NewMutator()
	_ = m.Update(ctx, func(s *tally.Sum) error { return s.Add(7) })

	now = now.Add(49 * time.Hour) // the shard is final
	plan, _ := c.PlanGC(ctx)
	b := plan.Batch
	fmt.Println("delete:", b.Delete, "at", time.UnixMicro(b.WriteTS).UTC().Format(time.DateTime))
	for _, m := range b.Mutations("k") {
		fmt.Printf("%s %q at %d\n", m.Op, m.Key, m.Timestamp)
	}
	for range 2 { // the second apply is a retry
		if err := db.Apply(ctx, b.Mutations("k")); err != nil {
			panic(err)
		}
	}
	v, _ := c.ReadComplete(ctx)
	rows, _ := db.Snapshot(ctx, "k", 100, store.ReadComplete)
	fmt.Println("value:", v.Value(), "rows:", len(rows))
	// Output:
	// delete: [web-1] at 2024-05-02 00:00:00
	// put "t" at 1714608000000000
	// delete "sweb-1" at 1714608000000000
	// value: 7 rows: 1
}

// A GCPlan counts the final shards it folds and the live ones it leaves;
// once everything final is folded the next plan is empty.
func ExampleGCPlan() {
	ctx := context.Background()
	now := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	c, _ := tally.New[*tally.Sum](memory.NewPartitions(), "k", exampleConfig(&now))
	old, _ := c.NewMutator()
	_ = old.Update(ctx, func(s *tally.Sum) error { return s.Add(1) })
	now = now.Add(49 * time.Hour) // old's shard is final
	young, _ := c.NewMutator()
	_ = young.Update(ctx, func(s *tally.Sum) error { return s.Add(2) })

	plan, _ := c.GC(ctx)
	fmt.Println("folded:", plan.Folded, "live:", plan.Live, "empty:", plan.Empty())
	plan, _ = c.PlanGC(ctx)
	fmt.Println("folded:", plan.Folded, "live:", plan.Live, "empty:", plan.Empty())
	// Output:
	// folded: 1 live: 1 empty: false
	// folded: 0 live: 1 empty: true
}

// Kind names an aggregate on the wire: a shard of one kind does not
// decode as another.
func ExampleKind() {
	fmt.Println((*tally.Sum)(nil).Kind(), (*tally.Min)(nil).Kind(), (*tally.Max)(nil).Kind(),
		(*tally.Stats)(nil).Kind(), (*tally.Distinct)(nil).Kind())
	b, _ := tally.Shard[*tally.Sum]{Mutator: "web-1", ExpiresAt: 1, State: new(tally.Sum)}.MarshalBinary()
	_, err := tally.DecodeShard[*tally.Max](b)
	fmt.Println(errors.Is(err, crdt.ErrTypeMismatch))
	// Output:
	// sum min max stats distinct
	// true
}

// combine folds parts left to right; it works for every Aggregate.
func combine[A tally.Aggregate[A]](first A, rest ...A) (A, error) {
	acc := first.Clone()
	for _, p := range rest {
		if err := acc.Combine(p); err != nil {
			return acc, err
		}
	}
	return acc, nil
}

// Aggregate is the monoid contract a tally relies on: Combine in any order
// or grouping gives Equal results, which is what lets shards be folded by
// uncoordinated GCs.
func ExampleAggregate() {
	a, b, c := new(tally.Stats), new(tally.Stats), new(tally.Stats)
	_ = a.Add(1)
	_ = b.Add(5)
	_ = c.Add(3)
	x, _ := combine(a, b, c)
	y, _ := combine(c, a, b)
	fmt.Println(x, x.Equal(y))

	// Combine is exact past int64; Add, a mutator's own write, is not.
	var big, one tally.Sum
	_ = big.Add(1<<63 - 1)
	_ = one.Add(1)
	r, err := combine(&big, &one)
	fmt.Println(err, r.Value() == 1<<63-1, r.BigValue())
	fmt.Println(errors.Is(big.Add(1), crdt.ErrOverflow))
	// Output:
	// n=3 sum=9 min=1 max=5 sumsq=35 true
	// <nil> true 9223372036854775808
	// true
}

// Two servers that cannot see each other each count 2^63 − 1 bytes in
// their own shards. The read is exact (Value clamps); GC folds the shard
// the tally can hold and leaves the other; a later negative count brings
// the sum back and everything folds.
func ExampleSum_BigValue() {
	ctx := context.Background()
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	c, _ := tally.New[*tally.Sum](memory.NewPartitions(), "bytes", exampleConfig(&now))
	count := func(n int64) {
		m, _ := c.NewMutator()
		_ = m.Update(ctx, func(s *tally.Sum) error { return s.Add(n) })
		now = now.Add(time.Minute)
	}
	count(1<<63 - 1)
	count(1<<63 - 1)
	v, err := c.Read(ctx)
	fmt.Println(v.Value(), v.BigValue(), err)

	now = now.Add(49 * time.Hour) // past expiry and Grace
	plan, _ := c.GC(ctx)
	fmt.Println("folded", plan.Folded, "live", plan.Live)

	count(-(1<<63 - 1))
	now = now.Add(49 * time.Hour)
	plan, _ = c.GC(ctx)
	v, _ = c.Read(ctx)
	fmt.Println("folded", plan.Folded, "live", plan.Live, "value", v.Value())
	// Output:
	// 9223372036854775807 18446744073709551614 <nil>
	// folded 1 live 1
	// folded 2 live 0 value 9223372036854775807
}

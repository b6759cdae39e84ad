package tally_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tally"
)

// A Config is the time contract: a mutator lives Lifetime and stops
// taking updates Margin before it expires; New refuses a Grace shorter
// than 3·MaxSkew.
func ExampleConfig() {
	now := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	cfg := exampleConfig(&now)
	cfg.Lifetime = time.Hour
	cfg.Margin = 10 * time.Minute
	cfg.MaxSkew = time.Minute
	cfg.Grace = 5 * time.Minute
	c, err := tally.New[*tally.Sum](memory.NewTallyStore(), "k", cfg)
	fmt.Println(err)
	m, _ := c.NewMutator()
	fmt.Println(m.ID(), "expires", m.ExpiresAt().Format(time.TimeOnly))
	now = now.Add(50 * time.Minute) // expires_at − Margin
	err = m.Stage(func(s *tally.Sum) error { return s.Add(1) })
	fmt.Println(errors.Is(err, crdt.ErrExpired))

	cfg.Grace = 2 * time.Minute // < 3·MaxSkew
	_, err = tally.New[*tally.Sum](memory.NewTallyStore(), "k", cfg)
	fmt.Println(errors.Is(err, crdt.ErrInvalidConfig))
	// Output:
	// <nil>
	// web-1 expires 01:00:00
	// true
	// true
}

// An EncodedShard is a shard row as the store holds it: the mutator id and
// opaque bytes that DecodeShard turns back into a Shard.
func ExampleEncodedShard() {
	ctx := context.Background()
	now := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	store := memory.NewTallyStore()
	c, _ := tally.New[*tally.Sum](store, "k", exampleConfig(&now))
	m, _ := c.NewMutator()
	_ = m.Update(ctx, func(s *tally.Sum) error { return s.Add(42) })

	rows, _, _ := store.Read(ctx, "k", true)
	sh, err := tally.DecodeShard[*tally.Sum](rows[0].Data)
	fmt.Println(rows[0].Mutator, sh.Mutator, sh.State.Value(), time.UnixMicro(sh.ExpiresAt).UTC().Format(time.DateTime), err)
	// Output: web-1 web-1 42 2024-05-02 00:00:00 <nil>
}

// A GCBatch is idempotent and carries its own timestamp, so applying it
// again, or late after a newer GC, converges to the same state.
func ExampleGCBatch() {
	ctx := context.Background()
	now := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	store := memory.NewTallyStore()
	c, _ := tally.New[*tally.Sum](store, "k", exampleConfig(&now))
	m, _ := c.NewMutator()
	_ = m.Update(ctx, func(s *tally.Sum) error { return s.Add(7) })

	now = now.Add(49 * time.Hour) // the shard is final
	plan, _ := c.PlanGC(ctx)
	b := plan.Batch
	fmt.Println("delete:", b.Delete, "at", time.UnixMicro(b.WriteTS).UTC().Format(time.DateTime))
	for range 2 { // the second apply is a retry
		if err := store.ApplyGC(ctx, "k", b); err != nil {
			panic(err)
		}
	}
	v, _ := c.ReadComplete(ctx)
	fmt.Println("value:", v.Value(), "live shards:", store.LiveShards("k"))
	// Output:
	// delete: [web-1] at 2024-05-02 00:00:00
	// value: 7 live shards: 0
}

// A GCPlan counts the final shards it folds and the live ones it leaves;
// once everything final is folded the next plan is empty.
func ExampleGCPlan() {
	ctx := context.Background()
	now := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	c, _ := tally.New[*tally.Sum](memory.NewTallyStore(), "k", exampleConfig(&now))
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

	var big, one tally.Sum
	_ = big.Add(1<<63 - 1)
	_ = one.Add(1)
	r, err := combine(&big, &one) // the receiver is unchanged on overflow
	fmt.Println(errors.Is(err, crdt.ErrOverflow), r.Value() == 1<<63-1)
	// Output:
	// n=3 sum=9 min=1 max=5 sumsq=35 true
	// true true
}

// A Store resolves every cell by last write wins on explicit timestamps:
// a GC's delete at timestamp 20 hides a late shard write stamped 15 for
// good, while a write stamped 30 is visible again.
func ExampleStore() {
	ctx := context.Background()
	var s tally.Store = memory.NewTallyStore()
	sh := func(v string) tally.EncodedShard { return tally.EncodedShard{Mutator: "web-1", Data: []byte(v)} }
	_ = s.PutShard(ctx, "k", sh("a"), 10)
	_ = s.ApplyGC(ctx, "k", tally.GCBatch{WriteTS: 20, Tally: []byte("t"), Delete: []crdt.ActorID{"web-1"}})
	_ = s.PutShard(ctx, "k", sh("late"), 15)
	rows, tb, _ := s.Read(ctx, "k", true)
	fmt.Println(len(rows), string(tb))
	_ = s.PutShard(ctx, "k", sh("new"), 30)
	rows, _, _ = s.Read(ctx, "k", true)
	fmt.Println(len(rows), string(rows[0].Data))
	// Output:
	// 0 t
	// 1 new
}

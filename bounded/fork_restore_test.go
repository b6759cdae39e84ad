package bounded_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
)

// TestRefusedMergeLeavesTheAccount: a read whose siblings merge to a state
// that breaks rights-non-negative (an actor that forked) is refused
// corrupt (SPEC.md 13.5) and leaves the Account's state as it was, so once
// the store is repaired the same Account reads and writes again.
func TestRefusedMergeLeavesTheAccount(t *testing.T) {
	ctx := context.Background()
	base, err := bounded.New(bounded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := base.Apply("x", "c", 10); err != nil {
		t.Fatal(err)
	}
	// x writes two states from one: 10 to y, who spends it, and 10 to z.
	toY, toZ := base.Clone(), base.Clone()
	if err := toY.Transfer("x", "y", 10); err != nil {
		t.Fatal(err)
	}
	if _, err := toY.Apply("y", "d", -10); err != nil {
		t.Fatal(err)
	}
	if err := toZ.Transfer("x", "z", 10); err != nil {
		t.Fatal(err)
	}
	st := memory.NewSiblings()
	put := func(c *bounded.Counter) {
		t.Helper()
		b, err := c.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Put(ctx, "k", "w", b, nil); err != nil {
			t.Fatal(err)
		}
	}
	put(toY)
	put(toZ)
	a, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Value(ctx); !errors.Is(err, crdt.ErrCorruptEncoding) {
		t.Fatalf("forked siblings: %v; want corrupt", err)
	}
	// The store is repaired: one state of the two is left.
	_, tok, err := st.Fetch(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	b, err := toY.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "k", "w", b, tok); err != nil {
		t.Fatal(err)
	}
	if v, err := a.Value(ctx); err != nil || v != 0 {
		t.Fatalf("repaired store, same Account: value %d, %v; want 0", v, err)
	}
	if r, err := a.Credit(ctx, "e", 5); err != nil || r.Outcome != bounded.Applied || r.Value != 5 {
		t.Fatalf("repaired store, same Account: credit %+v, %v; want applied, value 5", r, err)
	}
}

// TestClockOutsideRecordTimes: a call made while the Account's clock reads
// where no transaction record can be timed fails invalid_config before it
// reads or writes (SPEC.md 13.5 "Records"), and the Account works again
// once the clock does.
func TestClockOutsideRecordTimes(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	now := time.Unix(0, 0)
	a, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: "a", Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{time.Unix(0, 0), time.Unix(-1, 0), time.Unix(0, math.MaxInt64).Add(time.Nanosecond), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)} {
		now = at
		if r, err := a.Credit(ctx, "c", 10); !errors.Is(err, crdt.ErrInvalidConfig) || r.Landed {
			t.Errorf("clock %v: credit %+v, %v; want invalid_config, not landed", at, r, err)
		}
		if _, err := a.Value(ctx); !errors.Is(err, crdt.ErrInvalidConfig) {
			t.Errorf("clock %v: value %v; want invalid_config", at, err)
		}
		if sibs, _, err := st.Fetch(ctx, "k"); err != nil || len(sibs) != 0 {
			t.Fatalf("clock %v: the store holds %d siblings, %v; want none", at, len(sibs), err)
		}
	}
	now = time.Unix(0, math.MaxInt64)
	if r, err := a.Credit(ctx, "c", 10); err != nil || r.Outcome != bounded.Applied {
		t.Fatalf("clock at the last nanosecond: %+v, %v; want applied", r, err)
	}
	now = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if r, err := a.Credit(ctx, "c", 10); err != nil || r.Outcome != bounded.Duplicate {
		t.Fatalf("a retry: %+v, %v; want duplicate", r, err)
	}
}

package memory_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/statestore"
)

// exampleTime is the fixed instant the examples in this file run at.
var exampleTime = time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)

// A DeltaLogStore keeps each counter's cells in clustering order (newest
// first) and scans them in pages, counting what it served.
func ExampleDeltaLogStore() {
	ctx := context.Background()
	var s deltalog.Store = memory.NewDeltaLogStore(2) // two cells per page
	var entries []deltalog.Entry
	for i, d := range []int64{5, -2, 7} {
		id := deltalog.IDFromParts(exampleTime.Add(time.Duration(i)*time.Second), 1, 1)
		entries = append(entries, deltalog.Entry{Counter: "stock", Cell: deltalog.Cell{ID: id, Kind: deltalog.KindRegular, Delta: d}})
	}
	if err := s.Insert(ctx, entries); err != nil { // one atomic write
		panic(err)
	}
	_ = s.Scan(ctx, "stock", func(c deltalog.Cell) bool {
		fmt.Println(c.ID.Time().Format(time.TimeOnly), c.Kind, c.Delta)
		return true
	})
	mem := s.(*memory.DeltaLogStore)
	fmt.Println("cells:", mem.Len("stock"), "pages:", mem.Calls().Pages)
	// Output:
	// 12:00:02 r 7
	// 12:00:01 r -2
	// 12:00:00 r 5
	// cells: 3 pages: 2
}

// DeltaLogCalls shows what deltalog.Counters costs: an Add is one insert of
// one cell and no read; a Read scans the cells since the last merge.
func ExampleDeltaLogCalls() {
	ctx := context.Background()
	store := memory.NewDeltaLogStore(0)
	counters, _ := deltalog.New(store, deltalog.Options{Clock: func() time.Time { return exampleTime }})
	for i := range 3 {
		_ = counters.Add(ctx, "likes", deltalog.IDFromParts(exampleTime, uint16(i), 1), 1)
	}
	r, _ := counters.Read(ctx, "likes")
	fmt.Println("value:", r.Value)
	fmt.Printf("%+v\n", store.Calls())
	// Output:
	// value: 3
	// {Inserts:3 CellsWritten:3 Scans:1 Pages:1 CellsRead:3 RangeDeletes:0 CounterDeletes:0}
}

// A DeltaLogHook that fails after an insert loses its acknowledgement: the
// write landed but the caller sees an error. Retrying with the same id
// rewrites the same cell, so the update counts once.
func ExampleDeltaLogHook() {
	ctx := context.Background()
	store := memory.NewDeltaLogStore(0)
	counters, _ := deltalog.New(store, deltalog.Options{Clock: func() time.Time { return exampleTime }})
	lost := true
	store.SetHook(func(_ context.Context, op string, after bool) error {
		if op == memory.DeltaLogOpInsert && after && lost {
			lost = false
			return fmt.Errorf("%w: acknowledgement lost", crdt.ErrAmbiguousWrite)
		}
		return nil
	})
	id := deltalog.IDFromParts(exampleTime, 1, 1)
	err := counters.Add(ctx, "orders", id, 1)
	fmt.Println("first attempt ambiguous:", errors.Is(err, crdt.ErrAmbiguousWrite))
	fmt.Println("retry:", counters.Add(ctx, "orders", id, 1))
	r, _ := counters.Read(ctx, "orders")
	fmt.Println("value:", r.Value, "cells:", store.Len("orders"))
	// Output:
	// first attempt ambiguous: true
	// retry: <nil>
	// value: 1 cells: 1
}

// A BalanceStore holds one partition of rows per account; Write applies a
// batch of mutations atomically and Rows returns a snapshot in clustering
// order (newest update id first).
func ExampleBalanceStore() {
	ctx := context.Background()
	var s balance.Store = memory.NewBalanceStore()
	older := balance.Row{UpdateID: deltalog.IDFromParts(exampleTime, 1, 1), Kind: balance.KindNormal, Amount: 100}
	newer := balance.Row{UpdateID: deltalog.IDFromParts(exampleTime.Add(time.Second), 1, 1), Kind: balance.KindNormal, Amount: -30}
	_ = s.Write(ctx, []balance.Mutation{{Account: "alice", Row: older}, {Account: "alice", Row: newer}})
	rows, _ := s.Rows(ctx, "alice")
	fmt.Println(len(rows), rows[0].Amount, rows[1].Amount)

	_ = s.Write(ctx, []balance.Mutation{{Account: "alice", Row: newer, Delete: true}})
	rows, _ = s.Rows(ctx, "alice")
	fmt.Println(len(rows), rows[0].Amount)

	_ = s.DeleteAccount(ctx, "alice")
	rows, _ = s.Rows(ctx, "alice")
	fmt.Println(len(rows))
	// Output:
	// 2 -30 100
	// 1 100
	// 0
}

// BalanceCalls shows what a balance.Ledger costs: an Add is one write and
// no read; a Merge reads once and writes its tombstones and its sum row.
func ExampleBalanceCalls() {
	ctx := context.Background()
	store := memory.NewBalanceStore()
	l, _ := balance.New(store, balance.Options{Clock: func() time.Time { return exampleTime }})
	_ = l.Add(ctx, "alice", deltalog.IDFromParts(exampleTime, 1, 1), 100)
	_ = l.Add(ctx, "alice", deltalog.IDFromParts(exampleTime, 2, 1), -30)
	fmt.Printf("after adds:  %+v\n", store.Calls())
	store.ResetCalls()
	_, _ = l.Merge(ctx, "alice")
	fmt.Printf("after merge: %+v\n", store.Calls())
	// Output:
	// after adds:  {Reads:0 RowsRead:0 Writes:2 RowsWritten:2 RowsDeleted:0 AccountDeletes:0}
	// after merge: {Reads:1 RowsRead:2 Writes:2 RowsWritten:3 RowsDeleted:0 AccountDeletes:0}
}

// A BalanceHook that fails before a write refuses it: nothing is stored,
// and the balance is unchanged.
func ExampleBalanceHook() {
	ctx := context.Background()
	store := memory.NewBalanceStore()
	l, _ := balance.New(store, balance.Options{Clock: func() time.Time { return exampleTime }})
	store.SetHook(func(_ context.Context, op string, after bool) error {
		if op == memory.BalanceOpWrite && !after {
			return fmt.Errorf("%w: replica down", crdt.ErrUnavailable)
		}
		return nil
	})
	err := l.Add(ctx, "alice", deltalog.IDFromParts(exampleTime, 1, 1), 100)
	fmt.Println("refused:", errors.Is(err, crdt.ErrUnavailable))
	store.SetHook(nil)
	b, _ := l.Balance(ctx, "alice")
	fmt.Println("balance:", b, "rows:", len(store.Snapshot("alice")))
	// Output:
	// refused: true
	// balance: 0 rows: 0
}

// StaleFetches makes the next Fetch return an old sibling set, as a
// lagging replica would; a Put based on it leaves siblings behind.
func ExampleFaulty_StaleFetches() {
	ctx := context.Background()
	inner := memory.NewLedgers()
	f := memory.NewFaulty(inner, 1)
	_, tok, _ := f.Fetch(ctx, "k")
	_ = f.Put(ctx, "k", "a", []byte("v1"), tok)
	f.StaleFetches(1) // one write old: before v1
	sibs, tok, _ := f.Fetch(ctx, "k")
	fmt.Println("stale fetch saw", len(sibs), "siblings")
	_ = f.Put(ctx, "k", "b", []byte("v2"), tok)
	fmt.Println("siblings now:", inner.Siblings("k"))
	// Output:
	// stale fetch saw 0 siblings
	// siblings now: 2
}

// Delete removes the siblings a token names; with the token of the latest
// Fetch that is the whole key.
func ExampleLedgers_Delete() {
	ctx := context.Background()
	var s ledger.Store = memory.NewLedgers()
	_ = s.Put(ctx, "k", "a", []byte("v"), nil)
	_, tok, _ := s.Fetch(ctx, "k")
	_ = s.(ledger.Deleter).Delete(ctx, "k", tok)
	sibs, _, _ := s.Fetch(ctx, "k")
	fmt.Println(len(sibs))
	// Output: 0
}

// Save merges on write, so a store keeps the join: an older state saved
// after a newer one changes nothing, and a state of another counter type is
// refused.
func ExampleStates_Save() {
	ctx := context.Background()
	s := memory.NewStates()
	var c gcounter.Counter
	_ = c.Increment("a", 1)
	old, _ := c.MarshalBinary()
	_ = c.Increment("a", 4)
	cur, _ := c.MarshalBinary()
	_ = s.Save(ctx, "k", "a", cur)
	_ = s.Save(ctx, "k", "a", old) // late, stale: absorbed by the join
	got, _ := statestore.Load[gcounter.Counter](ctx, s, "k")
	fmt.Println(got.Value())

	pn, _ := new(pncounter.Counter).MarshalBinary()
	err := s.Save(ctx, "k", "a", pn)
	fmt.Println(errors.Is(err, crdt.ErrTypeMismatch))
	// Output:
	// 5
	// true
}

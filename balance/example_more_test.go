package balance_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// An account balance: every Add is one insert, a retry with the same id
// counts once, and a Merge folds the rows without changing the balance.
func ExampleAccounts() {
	ctx := context.Background()
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	st := memory.NewPartitions()
	l, _ := balance.New(st, balance.Options{Clock: func() time.Time { return now }})
	sale := timeid.FromParts(now, 1, 1)
	_ = l.Add(ctx, "seller-7", sale, 2500)
	_ = l.Add(ctx, "seller-7", sale, 2500) // retry after a lost acknowledgement
	_ = l.Add(ctx, "seller-7", timeid.FromParts(now, 2, 1), -300)
	b, _ := l.Balance(ctx, "seller-7")
	fmt.Println("balance:", b, "rows:", len(storedRows(st, "seller-7")))
	_, _ = l.Merge(ctx, "seller-7")
	b, _ = l.Balance(ctx, "seller-7")
	fmt.Println("balance:", b, "rows:", len(storedRows(st, "seller-7")))
	// Output:
	// balance: 2200 rows: 2
	// balance: 2200 rows: 5
}

// A MergeReport says what each step of a merge wrote. The first merge
// writes one tombstone per row and a sum row; once that sum row is
// SettleGrace old, a later merge deletes the rows it covers.
func ExampleMergeReport() {
	ctx := context.Background()
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	l, _ := balance.New(memory.NewPartitions(), balance.Options{Clock: func() time.Time { return now }})
	_ = l.Add(ctx, "a", timeid.FromParts(now, 1, 1), 10)
	_ = l.Add(ctx, "a", timeid.FromParts(now, 2, 1), 5)

	now = now.Add(time.Second)
	rep, _ := l.Merge(ctx, "a")
	fmt.Println("tombstones:", len(rep.Tombstones), "sum:", rep.Sum.Amount, "covers:", rep.Sum.Covers, "deleted:", len(rep.Deleted))

	now = now.Add(2 * time.Minute) // past SettleGrace (1 minute)
	rep, _ = l.Merge(ctx, "a")
	fmt.Println("sum written:", rep.Sum != nil, "settled:", len(rep.Settled), "deleted:", len(rep.Deleted), rep.Deleted[0].Kind)
	b, _ := l.Balance(ctx, "a")
	fmt.Println("balance:", b)
	// Output:
	// tombstones: 2 sum: 15 covers: 2 deleted: 0
	// sum written: false settled: 1 deleted: 2 N
	// balance: 15
}

// A View explains a snapshot. Here a merge crashed after writing its
// tombstones but before its sum row: the tombstones are invalid, the
// normal rows stay live, and the balance is unchanged.
func ExampleView() {
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	version := timeid.FromParts(t.Add(time.Minute), 1, 9)
	var rows []balance.Row
	for i, amount := range []int64{10, -4} {
		id := timeid.FromParts(t.Add(time.Duration(i)*time.Second), 1, 1)
		rows = append(rows,
			balance.Row{UpdateID: id, Kind: balance.KindNormal, Amount: amount},
			balance.Row{UpdateID: id, Kind: balance.KindTombstone, Version: version, Amount: amount, Target: balance.KindNormal})
	}
	v, err := balance.Evaluate(rows)
	fmt.Println("value:", v.Value, "live:", len(v.Live), "valid sums:", len(v.Valid), "invalid tombstones:", len(v.InvalidTombstones), err)
	// Output: value: 6 live: 2 valid sums: 0 invalid tombstones: 2 <nil>
}

// A Batch lands all its updates or none: a transfer whose id is reused
// with a different amount for the same account is refused before anything
// is written.
func ExampleBatch() {
	ctx := context.Background()
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	st := memory.NewPartitions()
	l, _ := balance.New(st, balance.Options{Clock: func() time.Time { return now }})
	id := timeid.FromParts(now, 1, 1)
	var b balance.Batch
	b.Add("alice", id, -50)
	b.Add("bob", id, +50)
	b.Add("alice", id, -60) // same (account, id), another amount
	err := l.Apply(ctx, &b)
	fmt.Println(b.Len(), errors.Is(err, crdt.ErrConflictingTransaction), len(storedRows(st, "alice")))
	// Output: 3 true 0
}

// An ID is a client-chosen version 1 UUID whose time must fall inside the
// write window, so that exactly-once holds: an id older than Window is
// refused rather than risk counting a retry twice after a merge.
func ExampleID() {
	ctx := context.Background()
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	l, _ := balance.New(memory.NewPartitions(), balance.Options{Clock: func() time.Time { return now }})
	fresh := timeid.FromParts(now.Add(-time.Minute), 1, 1)
	stale := timeid.FromParts(now.Add(-time.Hour), 1, 1)
	fmt.Println(fresh.Time().Format(time.TimeOnly), l.Add(ctx, "a", fresh, 1))
	err := l.Add(ctx, "a", stale, 1)
	fmt.Println(stale.Time().Format(time.TimeOnly), errors.Is(err, crdt.ErrOutsideWindow))
	// Output:
	// 11:59:00 <nil>
	// 11:00:00 true
}

// A Key is a row's primary key, and EncodeKey its row key in a
// store.Partitions: in byte order, newest update id first, then N, S, T.
// A retried increment has the same key, so it is stored once.
func ExampleKey() {
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	id := timeid.FromParts(t, 1, 1)
	n := balance.NormalRow(id, 7)
	retry := balance.NormalRow(id, 7)
	tomb := balance.Row{UpdateID: id, Kind: balance.KindTombstone, Version: timeid.FromParts(t.Add(time.Second), 1, 1), Amount: 7, Target: balance.KindNormal}
	newer := balance.NormalRow(timeid.FromParts(t.Add(time.Second), 1, 1), 1)
	fmt.Println(n.Key() == retry.Key(), len(balance.EncodeKey(n.Key())))
	fmt.Println(bytes.Compare(balance.EncodeKey(newer.Key()), balance.EncodeKey(n.Key())),
		bytes.Compare(balance.EncodeKey(n.Key()), balance.EncodeKey(tomb.Key())))
	k, err := balance.DecodeKey(balance.EncodeKey(tomb.Key()))
	fmt.Println(k == tomb.Key(), err)
	// Output:
	// true 33
	// -1 -1
	// true <nil>
}

// Kind is a row's type: N for updates, S for a merge's sum, T for a
// tombstone. For one update id, rows cluster N, then S, then T.
func ExampleKind() {
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	id := timeid.FromParts(t, 1, 1)
	n := balance.Row{UpdateID: id, Kind: balance.KindNormal, Amount: 1}
	ts := balance.Row{UpdateID: id, Kind: balance.KindTombstone, Version: timeid.FromParts(t.Add(time.Second), 1, 1), Amount: 1, Target: balance.KindNormal}
	fmt.Println(balance.KindNormal, balance.KindSum, balance.KindTombstone, balance.CompareRows(n, ts))
	// Output: N S T -1
}

// The zero Options select the defaults; New refuses timings that would
// break the settling and collection rules.
func ExampleOptions() {
	l, _ := balance.New(memory.NewPartitions(), balance.Options{})
	o := l.Options()
	fmt.Println(o.Window, o.FutureSkew, o.SafetyMargin, o.MaxMerge, o.SettleGrace, o.GCGrace)
	_, err := balance.New(memory.NewPartitions(), balance.Options{SettleGrace: time.Second})
	fmt.Println(errors.Is(err, crdt.ErrInvalidConfig))
	// Output:
	// 5m0s 5s 30s 10s 1m0s 10m0s
	// true
}

// loggingStore wraps a store.Partitions and prints the rows each Apply
// writes (a leading "-" for a delete).
type loggingStore struct{ store.Partitions }

func (s loggingStore) Apply(ctx context.Context, muts []store.Mutation) error {
	var kinds []string
	for _, m := range muts {
		k, _ := balance.DecodeKey(m.Key)
		name := k.Kind.String()
		if m.Op == store.OpDelete {
			name = "-" + name
		}
		kinds = append(kinds, name)
	}
	fmt.Println("write", kinds)
	return s.Partitions.Apply(ctx, muts)
}

// Wrapping the store shows the batches Accounts sends: one row per Add,
// then a merge's tombstones and its sum row in separate writes (step 5,
// then step 6).
func Example_batches() {
	ctx := context.Background()
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	l, _ := balance.New(loggingStore{memory.NewPartitions()}, balance.Options{Clock: func() time.Time { return now }})
	_ = l.Add(ctx, "a", timeid.FromParts(now, 1, 1), 10)
	_ = l.Add(ctx, "a", timeid.FromParts(now, 2, 1), 5)
	_, _ = l.Merge(ctx, "a")
	// Output:
	// write [N]
	// write [N]
	// write [T T]
	// write [S]
}

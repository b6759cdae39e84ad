package balance_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

// labeller prints ids as small integers: update ids and versions are
// numbered separately, in time order of first appearance (versions from 1,
// update ids from 0).
type labeller struct {
	ids, versions map[balance.ID]int
}

func (l *labeller) row(r balance.Row) string {
	if _, ok := l.ids[r.UpdateID]; !ok {
		l.ids[r.UpdateID] = len(l.ids)
	}
	v := ""
	if r.Kind != balance.KindNormal {
		if _, ok := l.versions[r.Version]; !ok {
			l.versions[r.Version] = len(l.versions) + 1
		}
		v = fmt.Sprint(l.versions[r.Version])
	}
	return fmt.Sprintf("(%d,%s,%s,%d)", l.ids[r.UpdateID], r.Kind, v, r.Amount)
}

// rows prints in ascending update id order (the clustering order is
// descending).
func (l *labeller) rows(rs []balance.Row) string {
	rs = append([]balance.Row(nil), rs...)
	sort.SliceStable(rs, func(i, j int) bool { return balance.CompareRows(rs[i], rs[j]) > 0 })
	sort.SliceStable(rs, func(i, j int) bool {
		if c := rs[i].UpdateID.Compare(rs[j].UpdateID); c != 0 {
			return c < 0
		}
		return rs[i].Kind < rs[j].Kind
	})
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = l.row(r)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Example_mergeTrace follows a two-row account through four merges and
// prints the rows after every write. Rows print as (updateid, type,
// version, amount), ids numbered in order of appearance. A sum row's update
// id is its merge's fresh version, which is what lets the age of a merge
// be judged by its update id. Merge 2's step 8 collects the tombstone of
// row 0, since step 7 of the same merge deleted its target and it is
// GCGrace old (see the package documentation, Compaction bound).
//
// Ages are judged by update id time with GCGrace = 10 minutes and
// SettleGrace = 1 minute: row 0 is written at t0 and row 1 at t0+9m, so in
// merge 2 the tombstone of row 0 is old enough to collect and that of row
// 1 is not (merge 4 collects it).
func Example_mergeTrace() {
	ctx := context.Background()
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	mem := memory.NewPartitions()
	var after [][]balance.Row
	// A faulty.Partitions with no faults, for its hook: the rows after
	// every write.
	watched := faulty.NewPartitions(mem, faulty.Options{Hook: func(_ context.Context, call faulty.Call, done bool) error {
		if call.Method == faulty.MethodApply && done {
			after = append(after, storedRows(mem, "seller"))
		}
		return nil
	}})
	accounts, err := balance.New(watched, balance.Options{Clock: func() time.Time { return now }})
	if err != nil {
		panic(err)
	}
	lab := &labeller{ids: map[balance.ID]int{}, versions: map[balance.ID]int{}}

	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	id0 := timeid.FromParts(t0, 1, 0xA)
	must(accounts.Add(ctx, "seller", id0, 1))
	now = t0.Add(9 * time.Minute)
	id1 := timeid.FromParts(now, 1, 0xB)
	must(accounts.Add(ctx, "seller", id1, 5))
	lab.row(balance.Row{UpdateID: id0, Kind: balance.KindNormal})
	lab.row(balance.Row{UpdateID: id1, Kind: balance.KindNormal})
	b, _ := accounts.Balance(ctx, "seller")
	fmt.Println("sum is", b, "for", lab.rows(storedRows(mem, "seller")))

	merge := func(n int, at time.Time) {
		now = at
		after = after[:0]
		fmt.Printf("Start Merge %d\n", n)
		fmt.Println("  mem:", lab.rows(storedRows(mem, "seller")))
		rep, err := accounts.Merge(ctx, "seller")
		must(err)
		w := 0
		next := func() string { w++; return lab.rows(after[w-1]) }
		if rep.Sum == nil {
			fmt.Println("  Skip insert tombstone because no new record inserted")
		} else {
			fmt.Println("  After insert tombstone")
			fmt.Println("  cas:", next())
			terms := ""
			for i := len(rep.Tombstones) - 1; i >= 0; i-- { // ascending update id
				terms += fmt.Sprintf(" + %d", rep.Tombstones[i].Amount)
			}
			fmt.Printf("  %d =%s\n", rep.Sum.Amount, terms)
			fmt.Println("  After insert merge", lab.rows([]balance.Row{*rep.Sum}))
			fmt.Println("  cas:", next())
		}
		if len(rep.Deleted) == 0 {
			fmt.Println("  Skip delete normal, merge with valid tombstone")
		} else {
			fmt.Println("  After delete normal, merge with valid tombstone", lab.rows(rep.Deleted))
			fmt.Println("  cas:", next())
		}
		switch {
		case len(rep.Collected) == 0 && len(rep.TooYoung) == 0:
			fmt.Println("  Skip delete invalid, nothing to delete")
		case len(rep.Collected) > 0:
			fmt.Println("  After delete invalid tombstone", lab.rows(rep.Collected))
			if len(rep.TooYoung) > 0 {
				fmt.Println("  Some invalid tombstone", lab.rows(rep.TooYoung), "are skipped because they are not old enough")
			}
			fmt.Println("  cas:", next())
		default:
			fmt.Println("  Invalid rows", lab.rows(rep.TooYoung), "are not old enough")
		}
		b, err := accounts.Balance(ctx, "seller")
		must(err)
		fmt.Printf("Complete Merge %d (balance %d)\n", n, b)
	}
	m1 := t0.Add(9*time.Minute + time.Second)
	merge(1, m1)
	merge(2, m1.Add(61*time.Second)) // merge 1 is now SettleGrace old
	merge(3, m1.Add(62*time.Second)) // row 0 is over 10 minutes old, row 1 is not
	merge(4, m1.Add(11*time.Minute)) // now row 1 is too

	// Output:
	// sum is 6 for [(0,N,,1) (1,N,,5)]
	// Start Merge 1
	//   mem: [(0,N,,1) (1,N,,5)]
	//   After insert tombstone
	//   cas: [(0,N,,1) (0,T,1,1) (1,N,,5) (1,T,1,5)]
	//   6 = + 1 + 5
	//   After insert merge [(2,S,1,6)]
	//   cas: [(0,N,,1) (0,T,1,1) (1,N,,5) (1,T,1,5) (2,S,1,6)]
	//   Skip delete normal, merge with valid tombstone
	//   Skip delete invalid, nothing to delete
	// Complete Merge 1 (balance 6)
	// Start Merge 2
	//   mem: [(0,N,,1) (0,T,1,1) (1,N,,5) (1,T,1,5) (2,S,1,6)]
	//   Skip insert tombstone because no new record inserted
	//   After delete normal, merge with valid tombstone [(0,N,,1) (1,N,,5)]
	//   cas: [(0,T,1,1) (1,T,1,5) (2,S,1,6)]
	//   After delete invalid tombstone [(0,T,1,1)]
	//   cas: [(1,T,1,5) (2,S,1,6)]
	// Complete Merge 2 (balance 6)
	// Start Merge 3
	//   mem: [(1,T,1,5) (2,S,1,6)]
	//   Skip insert tombstone because no new record inserted
	//   Skip delete normal, merge with valid tombstone
	//   Invalid rows [(1,T,1,5)] are not old enough
	// Complete Merge 3 (balance 6)
	// Start Merge 4
	//   mem: [(1,T,1,5) (2,S,1,6)]
	//   Skip insert tombstone because no new record inserted
	//   Skip delete normal, merge with valid tombstone
	//   After delete invalid tombstone [(1,T,1,5)]
	//   cas: [(2,S,1,6)]
	// Complete Merge 4 (balance 6)
}

// ExampleAccounts_Apply moves money between two accounts in one atomic batch
// and shows that a retried batch (same ids) counts once.
func ExampleAccounts_Apply() {
	ctx := context.Background()
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	accounts, _ := balance.New(memory.NewPartitions(), balance.Options{Clock: func() time.Time { return now }})
	_ = accounts.Add(ctx, "alice", timeid.FromParts(now, 1, 1), 100)

	transfer := timeid.FromParts(now, 2, 1) // one id per transfer
	var b balance.Batch
	b.Add("alice", transfer, -30)
	b.Add("bob", transfer, +30)
	for range 2 { // the second Apply is a retry after a lost acknowledgement
		if err := accounts.Apply(ctx, &b); err != nil {
			panic(err)
		}
	}
	a, _ := accounts.Balance(ctx, "alice")
	c, _ := accounts.Balance(ctx, "bob")
	fmt.Println("alice", a, "bob", c)
	// Output: alice 70 bob 30
}

// ExampleEvaluate interprets a partition where two merges raced over the
// same rows: exactly one sum row is valid, and the balance is unchanged.
func ExampleEvaluate() {
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	n1 := balance.Row{UpdateID: timeid.FromParts(t, 1, 1), Kind: balance.KindNormal, Amount: 1}
	n2 := balance.Row{UpdateID: timeid.FromParts(t.Add(time.Second), 1, 1), Kind: balance.KindNormal, Amount: 5}
	rows := []balance.Row{n1, n2}
	for _, v := range []balance.ID{timeid.FromParts(t.Add(time.Minute), 1, 2), timeid.FromParts(t.Add(time.Minute), 1, 3)} {
		for _, n := range []balance.Row{n1, n2} {
			rows = append(rows, balance.Row{UpdateID: n.UpdateID, Kind: balance.KindTombstone, Version: v, Amount: n.Amount, Target: balance.KindNormal})
		}
		rows = append(rows, balance.Row{UpdateID: v, Kind: balance.KindSum, Version: v, Amount: 6, Covers: 2})
	}
	view, err := balance.Evaluate(rows)
	fmt.Println(view.Value, err, len(view.Valid), len(view.InvalidSums), len(view.InvalidTombstones), view.Valid[0].Key().Version == rows[4].Version)
	// Output: 6 <nil> 1 1 2 true
}

// ExampleRow_MarshalBinary encodes a tombstone in the crdt envelope.
func ExampleRow_MarshalBinary() {
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	r := balance.Row{UpdateID: timeid.FromParts(t, 1, 1), Kind: balance.KindTombstone,
		Version: timeid.FromParts(t.Add(time.Minute), 1, 2), Amount: 5, Target: balance.KindNormal}
	b, _ := r.MarshalBinary()
	var d balance.Row
	fmt.Println(len(b), d.UnmarshalBinary(b), d == r, d.Kind, d.Target)
	// Output: 56 <nil> true T N
}

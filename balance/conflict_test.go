package balance_test

import (
	"context"
	"fmt"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/timeid"
)

// TestConflictsOfAnAccountPastInt64 reuses an id with another amount in an
// account whose balance does not fit int64: Balance and Merge fail
// crdt.ErrOverflow, while Conflicts, which does not depend on the sum,
// still lists the reused id.
func TestConflictsOfAnAccountPastInt64(t *testing.T) {
	l, _, c := newAccounts(t)
	ctx := context.Background()
	reused := timeid.New(c.now)
	require.NoError(t, l.Add(ctx, "a", timeid.New(c.now), math.MaxInt64))
	require.NoError(t, l.Add(ctx, "a", reused, 1))
	require.NoError(t, l.Add(ctx, "a", reused, 2))
	_, err := l.Balance(ctx, "a")
	require.ErrorIs(t, err, crdt.ErrOverflow)
	_, err = l.Merge(ctx, "a")
	require.ErrorIs(t, err, crdt.ErrOverflow)
	cs, err := l.Conflicts(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, []balance.Conflict{{UpdateID: reused, Counted: 1, Refused: []int64{2}}}, cs)
}

// TestReusedIDWithAnotherAmount reuses an update id with another amount
// through the public API, before a merge, after a merge and after the merge
// has settled (the covered row deleted), all inside the write window:
// exactly one amount counts, the conflict is reported by Conflicts and by
// the next merge, retries of either amount change nothing, and the balance
// survives compaction.
func TestReusedIDWithAnotherAmount(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		merges int // merges between the two writes; 2 settles the first
		first  int64
		second int64
		want   int64
	}{
		{"before any merge", 0, 5, 7, 5},
		{"before any merge, smaller second", 0, 7, 5, 5},
		{"after a merge", 1, 5, 7, 5},
		{"after a merge, smaller second", 1, 7, 5, 5},
		{"after the merge settled", 2, 5, 7, 5},
		{"after the merge settled, smaller second", 2, 7, 5, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, s, c := newAccounts(t)
			other := timeid.New(c.now)
			require.NoError(t, l.Add(ctx, "a", other, 100))
			id := timeid.New(c.now)
			require.NoError(t, l.Add(ctx, "a", id, tc.first))
			for range tc.merges {
				_, err := l.Merge(ctx, "a")
				require.NoError(t, err)
				c.now = c.now.Add(61 * time.Second) // the next merge settles it
			}
			if tc.merges == 2 {
				require.Len(t, s.Stored("a"), 3, "settled: covered rows deleted, only tombstones and the sum row left")
			}
			require.NoError(t, l.Add(ctx, "a", id, tc.second), "Add cannot see the first write")
			check := func() {
				t.Helper()
				b, err := l.Balance(ctx, "a")
				require.NoError(t, err)
				require.Equal(t, 100+tc.want, b)
			}
			check()
			refused := tc.first + tc.second - tc.want
			conf, err := l.Conflicts(ctx, "a")
			require.NoError(t, err)
			require.Equal(t, []balance.Conflict{{UpdateID: id, Counted: tc.want, Refused: []int64{refused}}}, conf)
			// Retries of either amount are deduplicated.
			require.NoError(t, l.Add(ctx, "a", id, tc.first))
			require.NoError(t, l.Add(ctx, "a", id, tc.second))
			check()
			// Merges keep the counted amount down to one row; the merge
			// that deletes the refused row reports the conflict.
			reported := false
			for i, step := range []time.Duration{0, 61 * time.Second, 11 * time.Minute, 11 * time.Minute} {
				c.now = c.now.Add(step)
				rep, err := l.Merge(ctx, "a")
				require.NoError(t, err)
				if i == 0 {
					require.Equal(t, conf, rep.Conflicts, "the merge reports the conflict it reads")
				}
				for _, r := range rep.Deleted {
					if r.UpdateID == id && r.Kind == balance.KindNormal && r.Amount == refused {
						require.Equal(t, conf, rep.Conflicts)
						reported = true
					}
				}
				check()
			}
			require.True(t, reported, "the refused row was deleted by a merge that reported it")
			require.Len(t, s.Stored("a"), 1)
		})
	}
}

// checkOnce checks that a snapshot's balance counts each update id at most
// once, with one amount: it must equal the sum, over the ids that landed,
// of one of the amounts landed for each id (one for an id never reused
// with another amount). It also checks that every id whose rows show two
// amounts is reported as a conflict, with amounts that landed.
func checkOnce(rows []balance.Row, landed map[balance.ID]map[int64]bool) error {
	v, err := balance.Evaluate(rows)
	if err != nil {
		return err
	}
	var fixed int64
	var choices [][]int64
	for _, amts := range landed {
		if len(amts) == 1 {
			for a := range amts {
				fixed += a
			}
			continue
		}
		var c []int64
		for a := range amts {
			c = append(c, a)
		}
		sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
		choices = append(choices, c)
	}
	if len(choices) > 12 {
		return fmt.Errorf("%d reused ids: too many to enumerate", len(choices))
	}
	var possible func(i int, rest int64) bool
	possible = func(i int, rest int64) bool {
		if i == len(choices) {
			return rest == 0
		}
		for _, a := range choices[i] {
			if possible(i+1, rest-a) {
				return true
			}
		}
		return false
	}
	if !possible(0, v.Value-fixed) {
		return fmt.Errorf("balance %d is not a sum of one landed amount per update id (%d from ids with one amount, choices %v)", v.Value, fixed, choices)
	}
	amounts := map[balance.ID]map[int64]bool{}
	for _, r := range rows {
		if r.Kind == balance.KindNormal {
			if amounts[r.UpdateID] == nil {
				amounts[r.UpdateID] = map[int64]bool{}
			}
			amounts[r.UpdateID][r.Amount] = true
		}
	}
	reported := map[balance.ID]bool{}
	for _, c := range v.Conflicts {
		reported[c.UpdateID] = true
		for _, a := range append([]int64{c.Counted}, c.Refused...) {
			if !landed[c.UpdateID][a] {
				return fmt.Errorf("conflict %+v names an amount that never landed", c)
			}
		}
	}
	for u, amts := range amounts {
		if len(amts) > 1 && !reported[u] {
			return fmt.Errorf("update id %s has rows of amounts %v but no conflict is reported", u, amts)
		}
	}
	return nil
}

// TestEvaluateReusedIDs checks the rule for an update id present with two
// amounts on hand-built partitions.
func TestEvaluateReusedIDs(t *testing.T) {
	u := id(0, 1)
	n5, n7 := balance.NormalRow(u, 5), balance.NormalRow(u, 7)
	legacy5 := balance.Row{UpdateID: u, Kind: balance.KindNormal, Amount: 5} // format version 1: no amount key
	other := nRow(time.Second, 2, 100)
	vA, vB := id(time.Minute, 100), id(2*time.Minute, 101)
	settled := func(s balance.Row) balance.Row { s.Settled = true; return s }
	conflict := func(counted, refused int64) []balance.Conflict {
		return []balance.Conflict{{UpdateID: u, Counted: counted, Refused: []int64{refused}}}
	}
	for _, tc := range []struct {
		name      string
		rows      []balance.Row
		value     int64
		conflicts []balance.Conflict
	}{
		{"the smaller amount counts before a merge", []balance.Row{n7, n5, other}, 105, conflict(5, 7)},
		{"copies of one amount count once", []balance.Row{legacy5, n5, other}, 105, nil},
		{"a merge of the smaller amount stays valid", []balance.Row{n7, n5, other, tomb(n5, vA), tomb(other, vA), sumRow(vA, 105, 2)}, 105, conflict(5, 7)},
		{"an unsettled merge of the larger amount is void", []balance.Row{n7, n5, other, tomb(n7, vA), tomb(other, vA), sumRow(vA, 107, 2)}, 105, conflict(5, 7)},
		{"a settled merge fixes its amount", []balance.Row{n5, tomb(n7, vA), tomb(other, vA), settled(sumRow(vA, 107, 2))}, 107, conflict(7, 5)},
		{"a settled merge cancels a retry of its amount", []balance.Row{n5, tomb(n5, vA), tomb(other, vA), settled(sumRow(vA, 105, 2))}, 105, nil},
		{"a chain keeps the first merge's amount", []balance.Row{n7, tomb(n5, vA), tomb(other, vA), settled(sumRow(vA, 105, 2)), tomb(sumRow(vA, 105, 2), vB), sumRow(vB, 105, 1)}, 105, conflict(5, 7)},
		{"a legacy row overwritten after the merge read it", []balance.Row{{UpdateID: u, Kind: balance.KindNormal, Amount: 2}, tomb(legacy5, vA), sumRow(vA, 5, 1)}, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := balance.Evaluate(tc.rows)
			require.NoError(t, err)
			require.Equal(t, tc.value, v.Value)
			require.Equal(t, tc.conflicts, v.Conflicts)
		})
	}
}

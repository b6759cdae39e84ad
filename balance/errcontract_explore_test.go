package balance_test

import (
	"context"
	"fmt"
	"github.com/counterkit/counterkit/store/faulty"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/timeid"
)

type ecStep struct {
	op     string // add, merge, wait
	on     int
	amount int64
	wait   time.Duration
}

var ecSteps = []ecStep{
	{op: "add", on: 0, amount: 1},
	{op: "wait", wait: 2 * time.Second},
	{op: "merge", on: 1},
	{op: "wait", wait: 70 * time.Second},
	{op: "add", on: 1, amount: 10},
	{op: "merge", on: 0},
	{op: "wait", wait: 11 * time.Minute},
	{op: "merge", on: 1},
	{op: "add", on: 0, amount: -100},
	{op: "merge", on: 0},
}

// decode returns the counts of 1, 10 and -100 in v (each 0..3), or nil.
func ecDecode(v int64) map[int64]int64 {
	var found map[int64]int64
	n := 0
	for a := int64(0); a <= 3; a++ {
		for b := int64(0); b <= 3; b++ {
			for c := int64(0); c <= 3; c++ {
				if a+10*b-100*c == v {
					n++
					found = map[int64]int64{1: a, 10: b, -100: c}
				}
			}
		}
	}
	if n != 1 {
		return nil
	}
	return found
}

// ecCheck returns what went wrong in a run that ended with prob (a
// failure of the final merges or read) or the balance v: an acknowledged
// update not counted once, one counted twice, or one whose every attempt
// was answered "nothing written" (told) counted. classes names each
// problem: "error", "counted N", "told not written, counted N".
func ecCheck(acked, told map[int64]bool, v int64, prob string) (probs, classes []string) {
	if prob != "" {
		return []string{prob}, []string{"error"}
	}
	counts := ecDecode(v)
	if counts == nil {
		return []string{fmt.Sprintf("value %d is no sum of the updates", v)}, []string{"no sum"}
	}
	return faulty.Judge(counts, acked, told)
}

// TestErrorContractExploreBalance: Accounts adds and merges, and
// Transactions applies and merges, each store write possibly landed or
// not and answered with each error kind (and crdt.ErrUnavailable, not
// landed); a failed add or apply is retried with the same id (same
// instance or another), or, with "fresh", under a new id after an error
// saying nothing was written (isNotWritten) and with the same id after
// any other; with "late" every transaction is applied again at the end,
// after the merges (it must be a duplicate). Failed merges are left to the
// next. Every acknowledged update counts once, none twice, and one whose
// every attempt was answered "nothing written" not at all.
func TestErrorContractExploreBalance(t *testing.T) {
	testsize.SkipSequential(t)
	for k, g := range exploreBalanceErrors(t, false) {
		t.Errorf("%s: %d runs, %v", k, g.Runs, g.Classes)
	}
}

// TestErrorContractCatchesLandedRefusals: the explorer's checks fail on a
// store that breaks the contract, answering a write that landed with an
// error saying nothing was written (a refusal, or crdt.ErrUnavailable).
// Add and Apply pass it on, so a caller that gives up has an update it was
// told is not written counted, and one that adds again under a new id has
// it counted twice; a retry with the same id rewrites the same row and
// counts once, and a merge step that landed is as good as one answered
// nil, so nothing else is found.
func TestErrorContractCatchesLandedRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	bad := exploreBalanceErrors(t, true)
	var want []string
	for _, name := range []string{"accounts", "transactions"} {
		for _, retry := range []string{"none", "fresh"} {
			for _, kind := range []string{"too-large", "corrupt", "invalid-key", "unavailable"} {
				want = append(want, fmt.Sprintf("%s/%s/%s/apply=true", name, retry, kind))
			}
		}
	}
	if got := slices.Sorted(maps.Keys(bad)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("groups counting wrong: %q, want %q", got, want)
	}
	for _, k := range slices.Sorted(maps.Keys(bad)) {
		g := bad[k]
		t.Logf("%s: %d runs, %v", k, g.Runs, g.Classes)
		p := "told not written, counted 1"
		if strings.Contains(k, "/fresh/") {
			p = "counted 2"
		}
		if g.Classes[p] == 0 {
			t.Errorf("%s: no run with %q: %v", k, p, g.Classes)
		}
	}
}

// exploreBalanceErrors runs both scenarios under every faulty.Trials plan
// (broken: with landed refusals) and caller policy, and returns the groups
// of runs that went wrong.
func exploreBalanceErrors(t *testing.T, broken bool) faulty.Groups {
	// told: every attempt of the update was answered with an error saying
	// nothing was written.
	runAccounts := func(st *errPartitions, retry string) (acked, told map[int64]bool, v int64, problem string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := newTestClock()
		as := make([]*balance.Accounts, 2)
		for i := range as {
			a, err := balance.New(st, balance.Options{Clock: c.Now})
			if err != nil {
				return nil, nil, 0, err.Error()
			}
			as[i] = a
		}
		acked, told = map[int64]bool{}, map[int64]bool{}
		for _, s := range ecSteps {
			c.Add(time.Millisecond)
			switch s.op {
			case "wait":
				c.Add(s.wait)
			case "merge":
				_, _ = as[s.on].Merge(ctx, "a")
			case "add":
				id := timeid.New(c.Now())
				err := as[s.on].Add(ctx, "a", id, s.amount)
				notWritten := isNotWritten(err)
				for try := 0; err != nil && try < 3 && retry != "none"; try++ {
					on := s.on
					if retry == "other" {
						on = 1 - on
					}
					if retry == "fresh" && isNotWritten(err) {
						id = timeid.New(c.Now()) // nothing was written: a new update
					}
					err = as[on].Add(ctx, "a", id, s.amount)
					notWritten = notWritten && isNotWritten(err)
				}
				acked[s.amount] = err == nil
				told[s.amount] = notWritten
			}
		}
		st.Set(nil)
		for range 3 {
			c.Add(11 * time.Minute)
			if _, err := as[0].Merge(ctx, "a"); err != nil {
				return acked, told, 0, "merge: " + err.Error()
			}
		}
		v, err := as[1].Balance(ctx, "a")
		if err != nil {
			return acked, told, 0, "balance: " + err.Error()
		}
		return acked, told, v, ""
	}
	runTxns := func(st *errPartitions, retry string) (acked, told map[int64]bool, v int64, problem string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := newTestClock()
		txs := make([]*balance.Transactions, 2)
		for i := range txs {
			tx, err := balance.NewTransactions(st, txnOpts(c))
			if err != nil {
				return nil, nil, 0, err.Error()
			}
			txs[i] = tx
		}
		acked, told = map[int64]bool{}, map[int64]bool{}
		var applied []ecStep
		apply := func(s ecStep, on int, txn crdt.TxnID) error {
			_, err := txs[on].Apply(ctx, acct, txn, s.amount)
			return err
		}
		for _, s := range ecSteps {
			c.Add(time.Millisecond)
			switch s.op {
			case "wait":
				c.Add(s.wait)
			case "merge":
				_, _ = txs[s.on].Merge(ctx, acct)
			case "add":
				txn := crdt.TxnID(fmt.Sprint("t", s.amount))
				err := apply(s, s.on, txn)
				notWritten := isNotWritten(err)
				for try := 0; err != nil && try < 3 && retry != "none" && retry != "late"; try++ {
					on := s.on
					if retry == "other" {
						on = 1 - on
					}
					if retry == "fresh" && isNotWritten(err) {
						txn = crdt.TxnID(fmt.Sprint("t", s.amount, ".", try)) // nothing was written: a new transaction
					}
					err = apply(s, on, txn)
					notWritten = notWritten && isNotWritten(err)
				}
				acked[s.amount] = err == nil
				told[s.amount] = notWritten
				applied = append(applied, s)
			}
		}
		st.Set(nil)
		if retry == "late" { // every transaction again, after the merges
			for _, s := range applied {
				if err := apply(s, 1-s.on, crdt.TxnID(fmt.Sprint("t", s.amount))); err != nil {
					return acked, told, 0, "late retry: " + err.Error()
				}
				acked[s.amount], told[s.amount] = true, false
			}
		}
		for range 3 {
			c.Add(time.Minute)
			if _, err := txs[0].Merge(ctx, acct); err != nil {
				return acked, told, 0, "merge: " + err.Error()
			}
		}
		v, err := txs[1].Balance(ctx, acct)
		if err != nil {
			return acked, told, 0, "balance: " + err.Error()
		}
		return acked, told, v, ""
	}
	runs := 0
	bad := faulty.Groups{}
	for _, d := range []struct {
		name string
		run  func(*errPartitions, string) (acked, told map[int64]bool, v int64, problem string)
	}{{"accounts", runAccounts}, {"transactions", runTxns}} {
		name, run := d.name, d.run
		st0 := newErrPartitions(memory.NewPartitions())
		if _, _, v, prob := run(st0, "none"); v != -89 || prob != "" {
			t.Fatalf("%s fault-free: %d %s", name, v, prob)
		}
		n := st0.Writes()
		groups := 0
		for _, retry := range []string{"none", "same", "other", "late", "fresh"} {
			for _, tr := range faulty.Trials(n, broken) {
				st := newErrPartitions(memory.NewPartitions())
				st.Set(tr.Answers())
				runs++
				acked, told, v, prob := run(st, retry)
				if probs, classes := ecCheck(acked, told, v, prob); len(probs) > 0 {
					key := fmt.Sprintf("%s/%s/%s/apply=%v", name, retry, tr.Kind.Name, tr.Apply)
					if bad.Add(key, classes) {
						groups++
						t.Logf("%s %v v=%d: %s\n  %s", key, tr, v, strings.Join(probs, "; "), strings.Join(st.Log(), "\n  "))
					}
				}
			}
		}
		t.Logf("%s: %d writes fault-free, bad groups %d", name, n, groups)
	}
	t.Logf("runs %d", runs)
	return bad
}

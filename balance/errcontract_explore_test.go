package balance_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
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

func ecCheck(acked map[int64]bool, v int64, prob string) []string {
	var probs []string
	if prob != "" {
		return []string{prob}
	}
	counts := ecDecode(v)
	if counts == nil {
		return []string{fmt.Sprintf("value %d is no sum of the updates", v)}
	}
	for _, a := range []int64{1, 10, -100} {
		if acked[a] && counts[a] != 1 || counts[a] > 1 {
			probs = append(probs, fmt.Sprintf("update %d (acked %v) counted %d", a, acked[a], counts[a]))
		}
	}
	return probs
}

// TestErrorContractExploreBalance: Accounts adds and merges, and
// Transactions applies and merges, each store write possibly landed or
// not and answered with each error kind; a failed add or apply is retried
// with the same id (same instance or another), and with "late" every
// transaction is applied again at the end, after the merges (it must be a
// duplicate). Failed merges are left to the next.
func TestErrorContractExploreBalance(t *testing.T) {
	runAccounts := func(st *errPartitions, retry string) (map[int64]bool, int64, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := newTestClock()
		as := make([]*balance.Accounts, 2)
		for i := range as {
			a, err := balance.New(st, balance.Options{Clock: c.Now})
			if err != nil {
				return nil, 0, err.Error()
			}
			as[i] = a
		}
		acked := map[int64]bool{}
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
				for try := 0; err != nil && try < 3 && retry != "none"; try++ {
					on := s.on
					if retry == "other" {
						on = 1 - on
					}
					err = as[on].Add(ctx, "a", id, s.amount)
				}
				acked[s.amount] = err == nil
			}
		}
		st.Set(nil)
		for range 3 {
			c.Add(11 * time.Minute)
			if _, err := as[0].Merge(ctx, "a"); err != nil {
				return acked, 0, "merge: " + err.Error()
			}
		}
		v, err := as[1].Balance(ctx, "a")
		if err != nil {
			return acked, 0, "balance: " + err.Error()
		}
		return acked, v, ""
	}
	runTxns := func(st *errPartitions, retry string) (map[int64]bool, int64, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := newTestClock()
		txs := make([]*balance.Transactions, 2)
		for i := range txs {
			tx, err := balance.NewTransactions(st, txnOpts(c))
			if err != nil {
				return nil, 0, err.Error()
			}
			txs[i] = tx
		}
		acked := map[int64]bool{}
		var applied []ecStep
		apply := func(s ecStep, on int) error {
			_, err := txs[on].Apply(ctx, acct, crdt.TxnID(fmt.Sprint("t", s.amount)), s.amount)
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
				err := apply(s, s.on)
				for try := 0; err != nil && try < 3 && retry != "none" && retry != "late"; try++ {
					on := s.on
					if retry == "other" {
						on = 1 - on
					}
					err = apply(s, on)
				}
				acked[s.amount] = err == nil
				applied = append(applied, s)
			}
		}
		st.Set(nil)
		if retry == "late" { // every transaction again, after the merges
			for _, s := range applied {
				if err := apply(s, 1-s.on); err != nil {
					return acked, 0, "late retry: " + err.Error()
				}
				acked[s.amount] = true
			}
		}
		for range 3 {
			c.Add(time.Minute)
			if _, err := txs[0].Merge(ctx, acct); err != nil {
				return acked, 0, "merge: " + err.Error()
			}
		}
		v, err := txs[1].Balance(ctx, acct)
		if err != nil {
			return acked, 0, "balance: " + err.Error()
		}
		return acked, v, ""
	}
	runs := 0
	for name, run := range map[string]func(*errPartitions, string) (map[int64]bool, int64, string){"accounts": runAccounts, "transactions": runTxns} {
		st0 := newErrPartitions(memory.NewPartitions())
		if _, v, prob := run(st0, "none"); v != -89 || prob != "" {
			t.Fatalf("%s fault-free: %d %s", name, v, prob)
		}
		n := st0.Writes()
		bad := map[string]int{}
		for _, retry := range []string{"none", "same", "other", "late"} {
			for _, tr := range faulty.Trials(n, false) {
				st := newErrPartitions(memory.NewPartitions())
				st.Set(tr.Answers())
				runs++
				acked, v, prob := run(st, retry)
				if probs := ecCheck(acked, v, prob); len(probs) > 0 {
					key := fmt.Sprintf("%s/%s/%s/apply=%v", name, retry, tr.Kind.Name, tr.Apply)
					bad[key]++
					if bad[key] == 1 {
						t.Errorf("%s %v v=%d: %s\n  %s", key, tr, v, strings.Join(probs, "; "), strings.Join(st.Log(), "\n  "))
					}
				}
			}
		}
		t.Logf("%s: %d writes fault-free, bad groups %d", name, n, len(bad))
	}
	t.Logf("runs %d", runs)
}

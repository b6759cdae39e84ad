package bounded_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
)

type ecCall struct {
	on     string
	txn    crdt.TxnID
	amount int64
}

type ecOutcome struct {
	acked    bool
	errs     []string
	definite bool
}

// decodeCounts finds counts c_i in 0..3 with Σ c_i·amount_i = v, if unique.
func decodeCounts(calls []ecCall, v int64) map[crdt.TxnID]int64 {
	var found map[crdt.TxnID]int64
	n := 0
	cur := make([]int64, len(calls))
	var rec func(i int, sum int64)
	rec = func(i int, sum int64) {
		if i == len(calls) {
			if sum == v {
				n++
				found = map[crdt.TxnID]int64{}
				for j, c := range calls {
					found[c.txn] = cur[j]
				}
			}
			return
		}
		for k := int64(0); k <= 3; k++ {
			cur[i] = k
			rec(i+1, sum+k*calls[i].amount)
		}
	}
	rec(0, 0)
	if n != 1 {
		return nil
	}
	return found
}

func runBoundedScenario(t *testing.T, st *errSiblings, calls []ecCall, retry string, window int) (map[crdt.TxnID]*ecOutcome, map[crdt.TxnID]int64, int64, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	opts := func(actor crdt.ActorID) bounded.AccountOptions {
		return bounded.AccountOptions{Actor: actor, RetryCount: 2, Backoff: bounded.Backoff{Initial: -1}, Counter: bounded.Options{Window: window}}
	}
	as := map[string]*bounded.Account{}
	for _, n := range []string{"a", "b"} {
		a, err := bounded.Open(st, "acct", opts(crdt.ActorID(n)))
		if err != nil {
			t.Fatal(err)
		}
		as[n] = a
	}
	do := func(a *bounded.Account, c ecCall) error {
		var err error
		if c.amount > 0 {
			_, err = a.Credit(ctx, c.txn, c.amount)
		} else {
			_, err = a.Debit(ctx, c.txn, -c.amount)
		}
		return err
	}
	out := map[crdt.TxnID]*ecOutcome{}
	note := func(txn crdt.TxnID, err error) bool {
		o := out[txn]
		if err == nil {
			o.acked = true
			return true
		}
		o.errs = append(o.errs, err.Error())
		if !errors.Is(err, crdt.ErrAmbiguousWrite) {
			o.definite = true
		}
		return false
	}
	other := map[string]string{"a": "b", "b": "a"}
	var late []ecCall
	for _, c := range calls {
		out[c.txn] = &ecOutcome{}
		if note(c.txn, do(as[c.on], c)) {
			continue
		}
		if retry == "late" { // retried on the other account after the rest
			late = append(late, c)
			continue
		}
		for i := 0; i < 4; i++ {
			var a *bounded.Account
			switch retry {
			case "same":
				a = as[c.on]
			case "other":
				a = as[other[c.on]]
			case "restart":
				na, err := bounded.Open(st, "acct", opts(crdt.ActorID(c.on)))
				if err != nil {
					t.Fatal(err)
				}
				as[c.on] = na
				a = na
			}
			if a == nil {
				break
			}
			if note(c.txn, do(a, c)) {
				break
			}
		}
	}
	st.Set(nil)
	for _, c := range late {
		for i := 0; i < 3; i++ {
			if note(c.txn, do(as[other[c.on]], c)) {
				break
			}
		}
	}
	for _, n := range []string{"a", "b"} {
		for i := 0; i < 3; i++ {
			if _, err := as[n].Sync(ctx); err == nil {
				break
			} else if i == 2 {
				return out, nil, 0, fmt.Sprintf("account %s stuck: %v", n, err)
			}
		}
	}
	z, err := bounded.Open(st, "acct", opts("z"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := z.Value(ctx)
	if err != nil {
		return out, nil, 0, fmt.Sprintf("value: %v", err)
	}
	counts := decodeCounts(calls, v)
	if counts == nil {
		return out, nil, v, fmt.Sprintf("value %d not a sum of counted amounts", v)
	}
	return out, counts, v, ""
}

func TestErrorContractExploreBounded(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	for k, v := range exploreBoundedErrors(t, false) {
		t.Errorf("%s: %d runs", k, v)
	}
}

// TestErrorContractCatchesLandedRefusals: the explorer's checks fail on a
// store that breaks the contract, answering a write that landed with a
// refusal for what it is (crdt.ErrTooLarge): the driver takes it as not
// written, and it counts twice.
func TestErrorContractCatchesLandedRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	if len(exploreBoundedErrors(t, true)) == 0 {
		t.Fatal("no run found a count wrong with refusals answering landed writes")
	}
}

// exploreBoundedErrors runs every scenario under every faulty.Trials plan (landed
// refusals only with landedRefusals) and returns the groups of runs that
// counted wrong.
func exploreBoundedErrors(t *testing.T, landedRefusals bool) map[string]int {
	scenarios := map[string][]ecCall{
		"cr a,cr a,cr b": {{"a", "t1", 1}, {"a", "t2", 10}, {"b", "t3", 100}},
		"cr a,db a,cr b": {{"a", "t1", 100}, {"a", "t2", -10}, {"b", "t3", 1000}},
		"cr a,cr b,db a": {{"a", "t1", 100}, {"b", "t2", 1000}, {"a", "t3", -10}},
		"cr a x4":        {{"a", "t1", 1}, {"a", "t2", 10}, {"a", "t3", 100}, {"a", "t4", 1000}},
	}
	bad := map[string]int{}
	runs := 0
	for sname, calls := range scenarios {
		for _, window := range []int{1, 0} {
			st0 := newErrSiblings(memory.NewSiblings())
			runBoundedScenario(t, st0, calls, "none", window)
			n := st0.Writes()
			for _, retry := range []string{"none", "same", "other", "restart", "late"} {
				for _, tr := range faulty.Trials(n, landedRefusals) {
					st := newErrSiblings(memory.NewSiblings())
					st.Set(tr.Answers())
					runs++
					out, counts, v, stuck := runBoundedScenario(t, st, calls, retry, window)
					var probs []string
					if stuck != "" {
						probs = append(probs, stuck)
					}
					for _, c := range calls {
						o, cnt := out[c.txn], counts[c.txn]
						switch {
						case counts == nil:
						case o.acked && cnt != 1:
							probs = append(probs, fmt.Sprintf("%s acked, counted %d", c.txn, cnt))
						case cnt > 1:
							probs = append(probs, fmt.Sprintf("%s counted %d", c.txn, cnt))
						case !o.acked && cnt == 1 && o.definite && retry == "none":
							probs = append(probs, "info: "+fmt.Sprintf("%s told definite (%s), counted 1", c.txn, o.errs[len(o.errs)-1]))
						}
					}
					severe := false
					for _, p := range probs {
						severe = severe || !strings.HasPrefix(p, "info: ")
					}
					if len(probs) > 0 {
						key := fmt.Sprintf("%s%s/window=%d/%s/%s/apply=%v", map[bool]string{true: "SEVERE ", false: "info "}[severe], sname, window, retry, tr.Kind.Name, tr.Apply)
						bad[key]++
						if bad[key] == 1 {
							t.Logf("%s %v v=%d: %s\n  %s", key, tr, v, strings.Join(probs, "; "), strings.Join(st.Log(), "\n  "))
						}
					}
				}
			}
		}
	}
	t.Logf("runs %d, bad groups %d", runs, len(bad))
	severe := map[string]int{}
	for k, v := range bad {
		if strings.HasPrefix(k, "SEVERE") {
			severe[k] = v
		} else {
			t.Logf("%s: %d runs", k, v)
		}
	}
	return severe
}

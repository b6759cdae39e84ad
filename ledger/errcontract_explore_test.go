package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
)

type ecCall struct {
	on     string // "a" or "b"
	txn    crdt.TxnID
	amount int64
}

type ecOutcome struct {
	acked    bool
	errs     []string
	definite bool // some attempt's error did not wrap ErrAmbiguousWrite
}

// runLedgerScenario runs calls on ledgers a and b over st, with the
// caller's retry policy after an error, and returns per-txn outcomes and
// the final counts (decoded from the value's digits).
func runLedgerScenario(t *testing.T, st *errSiblings, calls []ecCall, retry string) (map[crdt.TxnID]*ecOutcome, map[crdt.TxnID]int64, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	opts := func(actor crdt.ActorID) ledger.Options {
		return ledger.Options{Actor: actor, RetryCount: 2, Backoff: ledger.Backoff{Initial: -1}}
	}
	ls := map[string]*ledger.Ledger{}
	for _, n := range []string{"a", "b"} {
		l, err := ledger.New(st, "acct", opts(crdt.ActorID(n)))
		if err != nil {
			t.Fatal(err)
		}
		ls[n] = l
	}
	out := map[crdt.TxnID]*ecOutcome{}
	note := func(txn crdt.TxnID, res ledger.Result, err error) bool {
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
	for _, c := range calls {
		out[c.txn] = &ecOutcome{}
		res, err := ls[c.on].Update(ctx, c.txn, c.amount)
		if note(c.txn, res, err) {
			continue
		}
		for i := 0; i < 4; i++ {
			var l *ledger.Ledger
			switch retry {
			case "none":
			case "same":
				l = ls[c.on]
			case "other":
				l = ls[other[c.on]]
			case "restart":
				nl, err := ledger.New(st, "acct", opts(crdt.ActorID(c.on)))
				if err != nil {
					t.Fatal(err)
				}
				ls[c.on] = nl
				l = nl
			}
			if l == nil {
				break
			}
			res, err := l.Update(ctx, c.txn, c.amount)
			if note(c.txn, res, err) {
				break
			}
		}
	}
	st.Set(nil)
	// Settle: every live ledger writes once more (Find compacts and puts).
	for _, n := range []string{"a", "b"} {
		for i := 0; i < 3; i++ {
			if _, err := ls[n].Find(ctx); err == nil {
				break
			} else if i == 2 {
				return out, nil, fmt.Sprintf("ledger %s stuck: %v", n, err)
			}
		}
	}
	z, err := ledger.New(st, "acct", opts("z"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := z.Value(ctx)
	if err != nil {
		return out, nil, fmt.Sprintf("value: %v", err)
	}
	counts := map[crdt.TxnID]int64{}
	for _, c := range calls {
		counts[c.txn] = (v / c.amount) % 10
	}
	return out, counts, ""
}

func TestErrorContractExploreLedger(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	for k, v := range exploreLedgerErrors(t, false) {
		t.Errorf("%s: %d runs", k, v)
	}
}

// TestErrorContractCatchesLandedRefusals: the explorer's checks fail on a
// store that breaks the contract, answering a write that landed with a
// refusal for what it is (crdt.ErrTooLarge): the ledger takes the
// transaction back out though it was stored.
func TestErrorContractCatchesLandedRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	if len(exploreLedgerErrors(t, true)) == 0 {
		t.Fatal("no run found a count wrong with refusals answering landed writes")
	}
}

// exploreLedgerErrors runs every scenario with every error kind at every
// write position (one, or two in a row), landed or not (landed refusals
// only with landedRefusals), and returns the groups of runs that counted
// wrong.
func exploreLedgerErrors(t *testing.T, landedRefusals bool) map[string]int {
	scenarios := map[string][]ecCall{
		"a,a,b": {{"a", "t1", 1}, {"a", "t2", 10}, {"b", "t3", 100}},
		"a,b,a": {{"a", "t1", 1}, {"b", "t2", 10}, {"a", "t3", 100}},
	}
	bad := map[string]int{}
	runs := 0
	for sname, calls := range scenarios {
		// fault-free count of writes
		st0 := newErrSiblings(memory.NewSiblings())
		runLedgerScenario(t, st0, calls, "none")
		n := st0.Writes()
		for _, retry := range []string{"none", "same", "other", "restart"} {
			for _, tr := range faulty.Trials(n, landedRefusals) {
				st := newErrSiblings(memory.NewSiblings())
				st.Set(tr.Answers())
				runs++
				out, counts, stuck := runLedgerScenario(t, st, calls, retry)
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
					key := fmt.Sprintf("%s%s/%s/%s/apply=%v", map[bool]string{true: "SEVERE ", false: "info "}[severe], sname, retry, tr.Kind.Name, tr.Apply)
					bad[key]++
					if bad[key] == 1 {
						t.Logf("%s %v: %s\n  %s", key, tr, strings.Join(probs, "; "), strings.Join(st.Log(), "\n  "))
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

package bounded_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store/faulty"
)

// enumOp is one step of an enumerated script: a credit on account acc
// (0, 1 or 2), "deliver" (every held write lands), or "sync" on acc.
type enumOp struct {
	acc  int
	kind string // "credit", "sync", "deliver"
	txn  crdt.TxnID
}

// enumAmounts: credits only, powers of 4, so that the final value says how
// many times each txn counts (0..3).
var enumAmounts = map[crdt.TxnID]int64{"x": 1, "y": 4, "z": 16, "w": 64}

type enumResult struct {
	violation string // a broken promise (acknowledged retry applied, acknowledged lost, hang)
	doubled   []crdt.TxnID
	log       []string
}

// runEnum runs script on a fresh store whose calls get tape's faults in
// order (call i: tape[i], Pass beyond), recordFaults says whether record-key
// calls take tape faults too (else they pass and do not consume the tape).
func runEnum(script []enumOp, tape []faulty.Fault, recordFaults, dropHeld bool, accounts, window int) enumResult {
	return runEnumAt(script, tape, recordFaults, dropHeld, accounts, window, nil, 0)
}

// runEnumAt is runEnum with inject run (on its own account) just before the
// injectAt-th store call of the script (counting every call), inside the
// call in progress.
func runEnumAt(script []enumOp, tape []faulty.Fault, recordFaults, dropHeld bool, accounts, window int, inject *enumOp, injectAt int) enumResult {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var res enumResult
	logf := func(f string, args ...any) { res.log = append(res.log, fmt.Sprintf(f, args...)) }
	i := 0
	policy := func(c faulty.Call) faulty.Fault {
		rec := bounded.IsRecordKey(c.Key)
		if rec && !recordFaults {
			return faulty.Pass
		}
		f := faulty.Pass
		if i < len(tape) {
			f = tape[i]
			i++
		}
		if rec && faulty.IsRead(c.Method) && f.Kind() == faulty.Stale {
			return faulty.Pass // record reads reflect every acknowledged record put
		}
		return f
	}
	inner := memory.NewSiblings()
	st := faulty.NewSiblings(inner, faulty.Options{History: 4, RecordWrites: true, Policy: policy})
	now := time.Unix(1_800_000_000, 0)
	var accs []*bounded.Account
	for k := range accounts {
		a, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: crdt.ActorID(fmt.Sprint("r", k)), RetryCount: 1,
			Backoff: bounded.Backoff{Initial: -1}, Counter: bounded.Options{Window: window}, Clock: func() time.Time { return now }})
		if err != nil {
			panic(err)
		}
		accs = append(accs, a)
	}
	acked := map[crdt.TxnID]bool{}
	doubt := map[crdt.TxnID]int{} // txn -> account that answered ambiguous
	credit := func(k int, txn crdt.TxnID) {
		wasAcked := acked[txn] // a call made after the acknowledgement (concurrent ones are a stated limit)
		r, err := accs[k].Credit(ctx, txn, enumAmounts[txn])
		logf("%d credit %s: %v %v", k, txn, r.Outcome, err)
		if wasAcked && r.Outcome == bounded.Applied && res.violation == "" {
			res.violation = fmt.Sprintf("acknowledged %s applied again by account %d", txn, k)
		}
		switch {
		case err == nil:
			acked[txn] = true
			delete(doubt, txn)
		case errors.Is(err, crdt.ErrAmbiguousWrite):
			doubt[txn] = k
		}
		if ctx.Err() != nil && res.violation == "" {
			res.violation = "hang"
		}
	}
	// recorded: once a txn answered ambiguous_write has a record in the
	// store, a later call of it anywhere must be a duplicate (13.5).
	recorded := func() {
		for txn := range enumAmounts {
			if acked[txn] {
				continue
			}
			sibs, _, _ := inner.Fetch(context.Background(), ledger.RecordKey("k", txn))
			for _, b := range sibs {
				var rec ledger.Record
				if rec.UnmarshalBinary(b) == nil && rec.Txn == txn {
					acked[txn] = true
					logf("%s recorded (writer %s)", txn, rec.Writer)
				}
			}
		}
	}
	calls, fired := 0, false
	if inject != nil {
		st.SetHook(func(ctx context.Context, c faulty.Call, after bool) error {
			if after || fired {
				return nil
			}
			calls++
			if calls == injectAt {
				fired = true
				recorded()
				logf("-- injected before %v:", c)
				credit(inject.acc, inject.txn)
			}
			return nil
		})
	}
	for _, op := range script {
		recorded()
		switch op.kind {
		case "credit":
			credit(op.acc, op.txn)
		case "sync":
			_, err := accs[op.acc].Sync(ctx)
			logf("%d sync: %v", op.acc, err)
		case "deliver":
			err := st.DeliverAll()
			logf("deliver: %v", err)
		case "drop":
			logf("dropped %d held writes", st.DropHeld())
		}
	}
	// heal: everything lands, callers in doubt retry where they were
	// answered until they know, every account syncs.
	st.SetPolicy(nil)
	st.SetHook(nil)
	if inject != nil && !fired {
		res.violation = "skip" // the script made fewer calls
		return res
	}
	if dropHeld {
		logf("dropped %d held writes", st.DropHeld())
	} else if err := st.DeliverAll(); err != nil {
		logf("deliver: %v", err)
	}
	for round := 0; len(doubt) > 0 && round < 5; round++ {
		for _, txn := range slices.Sorted(func(yield func(crdt.TxnID) bool) {
			for t := range doubt {
				if !yield(t) {
					return
				}
			}
		}) {
			credit(doubt[txn], txn)
		}
	}
	if len(doubt) > 0 && res.violation == "" {
		res.violation = fmt.Sprintf("still in doubt after healing: %v", doubt)
	}
	var c *bounded.Counter
	for range 3 {
		for _, a := range accs {
			var err error
			if c, err = a.Sync(ctx); err != nil && res.violation == "" {
				res.violation = fmt.Sprintf("sync after healing: %v", err)
			}
		}
	}
	if c == nil {
		return res
	}
	v := c.Value()
	logf("final value %d, Doubled %v", v, c.Doubled())
	for _, txn := range []crdt.TxnID{"x", "y", "z", "w"} {
		n := (v / enumAmounts[txn]) % 4
		if acked[txn] && n == 0 && res.violation == "" {
			res.violation = fmt.Sprintf("acknowledged %s lost", txn)
		}
		if n > 1 {
			res.doubled = append(res.doubled, txn)
			if !slices.Contains(c.Doubled(), txn) {
				logf("%s counted %d times, not in Doubled", txn, n)
			}
		}
	}
	return res
}

// tapesUnion returns the tapes of faultTapes for each (depth, maxFaults)
// of sizes, each tape once.
func tapesUnion(faults []faulty.Fault, sizes [][2]int) [][]faulty.Fault {
	var tapes [][]faulty.Fault
	seen := map[string]bool{}
	for _, sz := range sizes {
		for _, tape := range faultTapes(faults, sz[0], sz[1]) {
			if k := fmt.Sprint(tape); !seen[k] {
				seen[k] = true
				tapes = append(tapes, tape)
			}
		}
	}
	return tapes
}

// faultTapes returns every placement of up to maxFaults of faults over
// the first depth calls (a tape: the fault of each call in order, Pass
// beyond it), the empty tape first.
func faultTapes(faults []faulty.Fault, depth, maxFaults int) [][]faulty.Fault {
	var tapes [][]faulty.Fault
	var gen func(tape []faulty.Fault, from, left int)
	gen = func(tape []faulty.Fault, from, left int) {
		tapes = append(tapes, slices.Clone(tape))
		if left == 0 {
			return
		}
		for p := from; p < depth; p++ {
			for _, f := range faults {
				t2 := slices.Clone(tape)
				for len(t2) <= p {
					t2 = append(t2, faulty.Pass)
				}
				t2[p] = f
				gen(t2, p+1, left-1)
			}
		}
	}
	gen(nil, 0, maxFaults)
	return tapes
}

// TestRecordsEnumerated enumerates every placement of a fault (Refuse,
// LoseAck, Lose, Hold, Stale; record reads never stale) over the first 16
// calls, and of two over the first 8, of small scripts of two or three
// accounts with window 1, and checks that no acknowledged txn's retry is
// applied again and none is lost. Counted-twice outcomes are tallied (they
// may be stated limits). COUNTERKIT_CASES above 1: two faults over the
// first 16 calls and three over the first 13, with Unclassified and
// StaleBy(2) too (minutes). COUNTERKIT_ENUM_DEPTH and
// COUNTERKIT_ENUM_FAULTS run one size instead (16 calls, two faults, for
// the one not set); COUNTERKIT_ENUM_SHOW logs the first two schedules of
// each script that count a transaction twice.
func TestRecordsEnumerated(t *testing.T) {
	if testing.Short() {
		t.Skip("enumeration")
	}
	faults := []faulty.Fault{faulty.Refuse, faulty.LoseAck, faulty.Lose, faulty.Hold, faulty.StaleBy(1)}
	more := proptest.Scale(1) > 1 // COUNTERKIT_CASES above 1
	if more {
		faults = append(faults, faulty.Unclassified, faulty.StaleBy(2))
	}
	c := func(acc int, txn crdt.TxnID) enumOp { return enumOp{acc, "credit", txn} }
	scripts := map[string][]enumOp{
		"retry elsewhere after slide": {c(0, "x"), c(0, "y"), c(1, "x"), c(0, "z"), c(1, "x")},
		"retry elsewhere, deliver":    {c(0, "x"), c(1, "x"), {kind: "deliver"}, c(0, "y"), c(1, "x"), c(0, "x")},
		"two writers interleaved":     {c(0, "x"), c(1, "y"), c(1, "x"), c(0, "z"), c(0, "y"), c(1, "w"), c(0, "x")},
		"three accounts":              {c(0, "x"), c(1, "x"), c(0, "y"), c(2, "x"), c(1, "z"), c(2, "y")},
		"sync between":                {c(0, "x"), {0, "sync", ""}, c(0, "y"), c(1, "x"), {kind: "deliver"}, c(1, "z"), c(1, "x")},
		"drop then slide":             {c(0, "x"), c(0, "y"), {kind: "drop"}, c(0, "z"), c(1, "x"), c(1, "y"), c(0, "w"), c(0, "x")},
		"three slide":                 {c(0, "x"), c(1, "y"), c(2, "x"), c(0, "z"), c(1, "x"), c(2, "w"), c(2, "y")},
	}
	// (depth, faults): every placement of up to faults over the first depth calls
	sizes := [][2]int{{16, 1}, {8, 2}}
	if more {
		sizes = [][2]int{{16, 2}, {13, 3}} // 13, 3: 1,428,168 schedules, about 3 minutes
	}
	if os.Getenv("COUNTERKIT_ENUM_FAULTS") != "" || os.Getenv("COUNTERKIT_ENUM_DEPTH") != "" {
		depth, maxFaults := 16, 2
		if s := os.Getenv("COUNTERKIT_ENUM_FAULTS"); s != "" {
			fmt.Sscan(s, &maxFaults)
		}
		if s := os.Getenv("COUNTERKIT_ENUM_DEPTH"); s != "" {
			fmt.Sscan(s, &depth)
		}
		sizes = [][2]int{{depth, maxFaults}}
	}
	tapes := tapesUnion(faults, sizes)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range scripts {
			if !yield(k) {
				return
			}
		}
	}) {
		script := scripts[name]
		accounts := 2
		for _, op := range script {
			accounts = max(accounts, op.acc+1)
		}
		for _, recordFaults := range []bool{false, true} {
			n, doubles := 0, 0
			seen := map[string]bool{}
			for _, tape := range tapes {
				n++
				r := runEnum(script, tape, recordFaults, n%2 == 0, accounts, 1)
				if len(r.doubled) > 0 {
					doubles++
					if os.Getenv("COUNTERKIT_ENUM_SHOW") != "" && doubles <= 2 {
						t.Logf("DOUBLE %s tape %v:\n%s", name, tape, strings.Join(r.log, "\n"))
					}
				}
				if r.violation != "" && !seen[r.violation] {
					seen[r.violation] = true
					t.Errorf("%s (record faults %v), tape %v: %s\n%s", name, recordFaults, tape, r.violation, strings.Join(r.log, "\n"))
				}
			}
			t.Logf("%s (record faults %v): %d schedules, %d end with a txn counted twice", name, recordFaults, n, doubles)
		}
	}
}

// TestRecordsInterleavingsEnumerated runs, for each script of account 0 and
// each retry on account 1, the retry inside account 0's call just before
// each of its store calls, with up to one fault (or
// COUNTERKIT_ENUM_FAULTS) on the first 10 calls, and checks what TestRecordsEnumerated checks.
// COUNTERKIT_CASES above 1: up to two faults on the first 14 calls.
func TestRecordsInterleavingsEnumerated(t *testing.T) {
	if testing.Short() {
		t.Skip("enumeration")
	}
	faults := []faulty.Fault{faulty.Refuse, faulty.LoseAck, faulty.Lose, faulty.Hold, faulty.StaleBy(1)}
	c := func(acc int, txn crdt.TxnID) enumOp { return enumOp{acc, "credit", txn} }
	scripts := map[string][]enumOp{
		"x y z":         {c(0, "x"), c(0, "y"), c(0, "z"), c(0, "x")},
		"x sync y":      {c(0, "x"), {0, "sync", ""}, c(0, "y"), c(0, "x")},
		"x y deliver z": {c(0, "x"), c(0, "y"), {kind: "deliver"}, c(0, "z"), c(0, "y")},
		"x y drop z":    {c(0, "x"), c(0, "y"), {kind: "drop"}, c(0, "z"), c(0, "x")},
	}
	maxFaults, depth := 1, 10
	if proptest.Scale(1) > 1 { // COUNTERKIT_CASES above 1
		maxFaults, depth = 2, 14
	}
	if s := os.Getenv("COUNTERKIT_ENUM_FAULTS"); s != "" {
		fmt.Sscan(s, &maxFaults)
	}
	tapes := faultTapes(faults, depth, maxFaults)
	for _, name := range slices.Sorted(maps.Keys(scripts)) {
		for _, txn := range []crdt.TxnID{"x", "y"} {
			inject := c(1, txn)
			n, doubles := 0, 0
			seen := map[string]bool{}
			for _, recordFaults := range []bool{false, true} {
				for _, tape := range tapes {
					for at := 1; at <= 30; at++ {
						r := runEnumAt(scripts[name], tape, recordFaults, at%2 == 0, 2, 1, &inject, at)
						if r.violation == "skip" {
							break
						}
						n++
						if len(r.doubled) > 0 {
							doubles++
						}
						if r.violation != "" && !seen[r.violation] {
							seen[r.violation] = true
							t.Errorf("%s, retry of %s before call %d (record faults %v), tape %v: %s\n%s", name, txn, at, recordFaults, tape, r.violation, strings.Join(r.log, "\n"))
						}
					}
				}
			}
			t.Logf("%s, retry of %s on another account: %d schedules, %d end with a txn counted twice", name, txn, n, doubles)
		}
	}
}

package modelcheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

var bg = context.Background()

// large reports whether COUNTERKIT_CASES asks for the larger scopes.
func large() bool { return os.Getenv("COUNTERKIT_CASES") != "" }

// shortSchedules is how many schedules of a scope the race pass (-short,
// README "Run the tests") explores: the explorer's code runs sequentially,
// so the detector needs a sample of each scope, and the full pass without
// it explores every schedule.
const shortSchedules = 100

// holesOn reports whether COUNTERKIT_HOLES asks to run the scopes of known
// holes instead of skipping them.
func holesOn() bool { return os.Getenv("COUNTERKIT_HOLES") != "" }

// ledgerOptions are the options of every ledger of a scope: no backoff
// (the explorer is the only clock), one retry, no grouping unless asked,
// the world's fake clock for records, the retry window and retirement,
// and the world's stated retry window.
func ledgerOptions(w *World, actor string, c tpncounter.Options) ledger.Options {
	return ledger.Options{Actor: crdt.ActorID(actor), RetryCount: 1, Backoff: ledger.Backoff{Initial: -1},
		MaxGroup: 1, Counter: c, Clock: w.Clock.Now, RetryWindow: w.RetryWindow}
}

// timed makes c's transactions timed at their first call (World.TxnTime)
// and tells the world so.
func timed(w *World, c tpncounter.Options) tpncounter.Options {
	w.Timed = true
	c.TxnTime = w.TxnTime
	return c
}

// nameRecords makes traces show the record keys of account's transactions
// as record(<txn>).
func nameRecords(w *World, account string, txns []Txn) {
	for _, t := range txns {
		w.Store.Name(ledger.RecordKey(account, t.ID), "record("+string(t.ID)+")")
	}
}

// countersOnly gives fates to the calls of counter keys alone, none to
// transaction records' (to spare a scope's budget).
func countersOnly(fates Fates) func(key string) Fates {
	return func(key string) Fates {
		if ledger.IsRecordKey(key) {
			return 0
		}
		return fates
	}
}

func mustLedger(st store.Siblings, key string, o ledger.Options) *ledger.Ledger {
	l, err := ledger.New(st, key, o)
	if err != nil {
		panic(err)
	}
	return l
}

func ledgerResult(l interface {
	Writer() crdt.ActorID
	Key() string
}, res ledger.Result, err error) Result {
	r := Result{Writer: l.Writer(), Key: l.Key(), Err: err}
	if err == nil {
		r.Outcome = res.Outcome.String()
		r.Applied = res.Outcome == tpncounter.Applied
	}
	return r
}

// credit runs l.Credit as operation label.
func credit(r *Runner, label string, l *ledger.Ledger, txn crdt.TxnID, amount int64) *Op {
	return r.Do(label, txn, amount, func(ctx context.Context) Result {
		res, err := l.Credit(ctx, txn, amount)
		return ledgerResult(l, res, err)
	})
}

// find runs l.Find as operation label.
func find(r *Runner, label string, l *ledger.Ledger) *Op {
	return r.Do(label, "", 0, func(ctx context.Context) Result {
		_, err := l.Find(ctx)
		return Result{Writer: l.Writer(), Key: l.Key(), Err: err}
	})
}

// shardedCredit runs s.Credit as operation label.
func shardedCredit(r *Runner, label string, s *ledger.Sharded, txn crdt.TxnID, amount int64) *Op {
	return r.Do(label, txn, amount, func(ctx context.Context) Result {
		res, err := s.Credit(ctx, txn, amount)
		out := Result{Writer: s.Writer(txn), Key: s.Key(s.Shard(txn)), Err: err}
		if err == nil {
			out.Outcome = res.Outcome.String()
			out.Applied = res.Outcome == tpncounter.Applied
		}
		return out
	})
}

// accountOp runs a bounded Account's Credit (amount > 0) or Debit.
func accountOp(r *Runner, label string, a *bounded.Account, txn crdt.TxnID, amount int64) *Op {
	return r.Do(label, txn, amount, func(ctx context.Context) Result {
		var res bounded.Result
		var err error
		if amount > 0 {
			res, err = a.Credit(ctx, txn, amount)
		} else {
			res, err = a.Debit(ctx, txn, -amount)
		}
		out := Result{Writer: a.Writer(), Key: a.Key(), Err: err}
		if err == nil {
			out.Outcome = res.Outcome.String()
			out.Applied = res.Outcome == bounded.Applied
		}
		return out
	})
}

// failed reports whether op returned an error (its transaction is then to
// be retried, as a client does after any error but a rule's refusal).
func failed(op *Op) bool { return op.Result.Err != nil }

// checkLedgers adds the promise as an invariant: the keys, read by a fresh
// ledger over the store with no faults, are readable, and their values
// together count every transaction as the promise says.
func checkLedgers(w *World, c tpncounter.Options, txns []Txn, keys ...string) {
	for _, k := range keys {
		nameRecords(w, k, txns)
	}
	w.Check("promise", promise(w, c, txns, keys...))
	checkDefiniteCalls(w, c, keys...)
}

// checkLedgersSettled is checkLedgers for key with the promise checked
// only at the end, once each of ls has run Find three times without
// faults: a copy whose Put lands after the other copy left its writer's
// history counts twice until its ledger reads again (SPEC.md 6.11,
// Concurrent copies).
func checkLedgersSettled(w *World, c tpncounter.Options, txns []Txn, key string, ls ...*ledger.Ledger) {
	nameRecords(w, key, txns)
	w.Settle(func() {
		for _, l := range ls {
			for range 3 {
				if _, err := l.Find(bg); err != nil {
					w.Logf("end: %s Find: %v", l.Writer(), err)
				}
			}
		}
	})
	w.CheckEnd("promise", promise(w, c, txns, key))
	checkDefiniteCalls(w, c, key)
}

// promise reads the keys with a fresh ledger over the store, with no
// faults, and checks that they are readable and that their values
// together count every transaction as the promise says.
func promise(w *World, c tpncounter.Options, txns []Txn, keys ...string) func() error {
	return func() error {
		var sum int64
		for _, k := range keys {
			l := mustLedger(w.Inner, k, ledgerOptions(w, "checker", c))
			v, err := l.Value(bg)
			if err != nil {
				return fmt.Errorf("key %q unreadable: %w", k, err)
			}
			sum += v
		}
		counts, err := Counts(sum, txns)
		if err != nil {
			return err
		}
		return w.CheckCounts(counts, txns, false)
	}
}

// checkDefiniteCalls adds, for the ledger keys, that no call answered a
// definite failure (a refusal, a context's error: nothing of it written)
// while the entry it writes holds its transaction in the store; another
// call of the same transaction by the same writer (or one still running,
// whose writer is not known yet) may put it there.
func checkDefiniteCalls(w *World, c tpncounter.Options, keys ...string) {
	w.Check("definite answers", func() error {
		ops := w.Ops()
		for _, k := range keys {
			state, err := storedState(w, k, c)
			if err != nil {
				return nil // the promise check reports unreadable keys
			}
			for i, op := range ops {
				if !op.Finished || op.Txn == "" || op.Result.Key != k || !Definite(op.Result.Err) {
					continue
				}
				again := false
				for j, other := range ops {
					if j != i && other.Txn == op.Txn && (!other.Finished || other.Result.Writer == op.Result.Writer) {
						again = true
					}
				}
				if !again && entryHolds(state, op.Result.Writer, op.Txn) {
					return fmt.Errorf("%s answered %q, a definite failure, yet %s's entry holds %q in the store", op.Label, op.Result.Err, op.Result.Writer, op.Txn)
				}
			}
		}
		return nil
	})
}

// storedState merges the siblings of key as stored.
func storedState(w *World, key string, c tpncounter.Options) (*tpncounter.Counter, error) {
	sibs, _, err := w.Inner.Fetch(bg, key)
	if err != nil {
		return nil, err
	}
	state, err := tpncounter.New(c)
	if err != nil {
		return nil, err
	}
	for _, b := range sibs {
		if err := state.MergeBinary(b); err != nil {
			return nil, err
		}
	}
	return state, nil
}

// entryHolds reports whether actor's entry in state holds txn in its
// history or folded record.
func entryHolds(state *tpncounter.Counter, actor crdt.ActorID, txn crdt.TxnID) bool {
	for _, g := range []*tpncounter.GCounter{state.Positive(), state.Negative()} {
		e, ok := g.Entry(actor)
		if !ok {
			continue
		}
		for _, list := range [][]tpncounter.Txn{e.History, e.Folded} {
			for _, t := range list {
				if t.ID == txn {
					return true
				}
			}
		}
	}
	return false
}

// checkSharded adds, besides the promise on the sub-keys, that once the
// account key is written the account reads through a fresh Sharded of one
// of the n used (its own; the others are rightly refused).
func checkSharded(w *World, account string, c tpncounter.Options, txns []Txn, ns ...int) {
	w.Check("sharded readable", func() error {
		if w.Inner.Count(account) == 0 {
			return nil
		}
		var errs []error
		for _, n := range ns {
			s, err := ledger.NewSharded(w.Inner, account, n, ledgerOptions(w, "checker", c))
			if err != nil {
				return err
			}
			if _, err := s.Value(bg); err != nil {
				errs = append(errs, fmt.Errorf("n=%d: %w", n, err))
				continue
			}
			return nil
		}
		return fmt.Errorf("account %q unreadable: %w", account, errors.Join(errs...))
	})
	nameRecords(w, account, txns)
	maxN := 0
	for _, n := range ns {
		maxN = max(maxN, n)
	}
	keys := make([]string, maxN)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s/%d", account, i)
	}
	checkLedgers(w, c, txns, keys...)
}

// checkAccount adds the promise for a bounded account's key: readable, its
// value never below the bound (0), every transaction counted as promised,
// where a transaction two accounts hold may count twice until the larger
// holder writes again; at the end every account Syncs, and then each counts
// exactly as promised.
func checkAccount(w *World, key string, c bounded.Options, txns []Txn, accounts ...*bounded.Account) {
	settled := false
	w.Settle(func() {
		for _, a := range accounts {
			if _, err := a.Sync(bg); err != nil {
				w.Logf("end: %s Sync: %v", a.Writer(), err)
			}
		}
		settled = true
	})
	w.Check("bounded promise", func() error {
		a, err := bounded.Open(w.Inner, key, bounded.AccountOptions{Actor: "checker", Counter: c})
		if err != nil {
			return err
		}
		v, err := a.Value(bg)
		if err != nil {
			return fmt.Errorf("key %q unreadable: %w", key, err)
		}
		if v < 0 {
			return fmt.Errorf("key %q: value %d below its bound 0", key, v)
		}
		counts, err := Counts(v, txns)
		if err != nil {
			return err
		}
		return w.CheckCounts(counts, txns, !settled)
	})
	w.Check("definite answers", func() error {
		state, err := storedAccount(w, key, c)
		if err != nil {
			return nil // the promise check reports unreadable keys
		}
		ops := w.Ops()
		for i, op := range ops {
			if !op.Finished || op.Txn == "" || op.Result.Key != key || !Definite(op.Result.Err) {
				continue
			}
			again := false
			for j, other := range ops {
				if j != i && other.Txn == op.Txn && (!other.Finished || other.Result.Writer == op.Result.Writer) {
					again = true
				}
			}
			e, ok := state.Entry(op.Result.Writer)
			if again || !ok {
				continue
			}
			for _, t := range e.Recent {
				if t.ID == op.Txn {
					return fmt.Errorf("%s answered %q, a definite failure, yet %s's entry holds %q in the store", op.Label, op.Result.Err, op.Result.Writer, op.Txn)
				}
			}
		}
		return nil
	})
}

// storedAccount merges the siblings of a bounded key as stored.
func storedAccount(w *World, key string, c bounded.Options) (*bounded.Counter, error) {
	sibs, _, err := w.Inner.Fetch(bg, key)
	if err != nil {
		return nil, err
	}
	state, err := bounded.New(c)
	if err != nil {
		return nil, err
	}
	for _, b := range sibs {
		var s bounded.Counter
		if err := s.UnmarshalBinary(b); err != nil {
			return nil, err
		}
		if err := state.Merge(&s); err != nil {
			return nil, err
		}
	}
	return state, nil
}

// checkRetired adds, at the end, that every incarnation of key that stopped
// writing is retired once another incarnation has made three fault-free
// writes after its last one, the last two at least retireAfter apart. A
// fault-free write is one whose operation had no call faulted: a fault on
// the calls a retirement makes (a record refused, say) delays the
// retirement to a later write, and a write held in flight counts for
// nothing. Incarnations whose entries hold one transaction retire
// together, all or none (SPEC.md 6.10, RetireAll), so each is dated by
// the last write of any of them: a write of one that lands late keeps
// the others live too.
func checkRetired(w *World, key string, c tpncounter.Options, retireAfter time.Duration) {
	w.CheckEnd("idle incarnations retired", func() error {
		state, err := storedState(w, key, c)
		if err != nil {
			return err
		}
		lands := w.Store.Landings(key)
		group := retireGroups(state)
		for a := range state.LiveActors() {
			last := -1
			for i, l := range lands {
				if group[l.Actor] == group[a] && group[a] != "" {
					last = i
				}
			}
			if last < 0 {
				continue // written before the run
			}
			later := map[crdt.ActorID][]Landing{}
			for _, l := range lands[last+1:] {
				if l.Op != nil && l.Op.Faults == 0 {
					later[l.Actor] = append(later[l.Actor], l)
				}
			}
			for other, ls := range later {
				n := len(ls)
				if n >= 3 && ls[n-1].At.Sub(ls[n-2].At) >= retireAfter {
					return fmt.Errorf("%s is still live: %s made %d fault-free writes after its last (%s, %s), with RetireAfter %v (%d live actors)",
						a, other, n, ls[n-2].Op.Label, ls[n-1].Op.Label, retireAfter, state.Stats().Actors)
				}
			}
		}
		return nil
	})
}

// retireGroups names, for each live actor of state, the group it retires
// with: the actors linked to it by transactions their live entries both
// hold (the first actor of the group to be seen names it).
func retireGroups(state *tpncounter.Counter) map[crdt.ActorID]crdt.ActorID {
	group := map[crdt.ActorID]crdt.ActorID{}
	var find func(crdt.ActorID) crdt.ActorID
	find = func(a crdt.ActorID) crdt.ActorID {
		if g := group[a]; g != a {
			group[a] = find(g)
		}
		return group[a]
	}
	holder := map[crdt.TxnID]crdt.ActorID{}
	for a := range state.LiveActors() {
		if _, ok := group[a]; !ok {
			group[a] = a
		}
		for x := range state.Transactions(a) {
			if h, ok := holder[x]; ok {
				group[find(a)] = find(h)
			} else {
				holder[x] = a
			}
		}
	}
	for a := range group {
		group[a] = find(a)
	}
	return group
}

// run explores s, logs its counts, and fails with the first violation's
// trace and a replay command. COUNTERKIT_MC_REPLAY=<scope>=<schedule>
// replays one schedule of the scope instead, logging its trace.
func run(t *testing.T, s Scope) Report {
	t.Helper()
	s = reseeded(t, s)
	if spec, ok := strings.CutPrefix(os.Getenv("COUNTERKIT_MC_REPLAY"), s.Name+"="); ok {
		choices, err := ParseChoices(spec)
		if err != nil {
			t.Fatal(err)
		}
		v, trace := Replay(s, choices)
		if v != nil {
			t.Fatalf("scope %s, replayed:\n%v", s.Name, v)
		}
		t.Logf("scope %s, replayed schedule %s: no violation\n%s", s.Name, spec, strings.Join(trace, "\n"))
		return Report{}
	}
	if testing.Short() && (s.MaxSchedules == 0 || s.MaxSchedules > shortSchedules) {
		s.MaxSchedules = shortSchedules // the race pass samples; the full pass explores all
	}
	rep := Explore(s)
	t.Logf("scope %s: %d schedules, %d states, %d reruns, %v%s", s.Name, rep.Schedules, rep.States, rep.Reruns, rep.CPU.Round(time.Millisecond),
		map[bool]string{true: " (cut short by MaxSchedules)", false: ""}[rep.Truncated])
	if v := rep.Violation; v != nil {
		cases := ""
		if large() {
			cases = "COUNTERKIT_CASES=" + os.Getenv("COUNTERKIT_CASES") + " "
		}
		t.Fatalf("scope %s: after %d schedules:\n%v\nreplay: %sCOUNTERKIT_HOLES=1 COUNTERKIT_MC_REPLAY='%s=%s' go test -race -run 'Test.*/%s$' -v ./modelcheck",
			s.Name, rep.Schedules, v, cases, s.Name, v.Schedule(), s.Name)
	}
	return rep
}

// reseeded returns s with crypto/rand restarted from one seed before each
// execution (reseed), so that every execution draws the same incarnations.
func reseeded(t *testing.T, s Scope) Scope {
	build := s.Build
	s.Build = func(w *World) {
		reseed(t)
		build(w)
	}
	return s
}

// find runs s and returns its first violation: for the tests showing that
// the checker catches a broken variant.
func findViolation(t *testing.T, s Scope) *Violation {
	t.Helper()
	if testing.Short() {
		t.Skip("-short (the race pass): the full pass, without the race detector, runs it")
	}
	s = reseeded(t, s)
	rep := Explore(s)
	t.Logf("scope %s: %d schedules, %d states, %v", s.Name, rep.Schedules, rep.States, rep.CPU.Round(time.Millisecond))
	if rep.Violation != nil {
		t.Logf("found:\n%v", rep.Violation)
	}
	return rep.Violation
}

// advanceIfNoneHeld moves the fake clock on by d unless a write is held in
// flight: RetireAfter's assumption that no write stays in flight that long
// (the package documentation) holds by construction.
func advanceIfNoneHeld(w *World, d time.Duration) {
	if w.Store.Held() == 0 {
		w.Clock.Advance(d)
	}
}

// TestRetireGroups: actors whose live entries hold one transaction (two
// replicas applied it before they met), or are linked through others
// that do, are one group.
func TestRetireGroups(t *testing.T) {
	replica := func(applies ...string) *tpncounter.Counter {
		c, err := tpncounter.New(small)
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range applies {
			actor, txn, _ := strings.Cut(at, ":")
			if out, err := c.Apply(crdt.ActorID(actor), crdt.TxnID(txn), 1); err != nil || out != tpncounter.Applied {
				t.Fatalf("%s: %v %v", at, out, err)
			}
		}
		return c
	}
	state := replica("a:x", "c:y", "d:z", "d:w")
	if err := state.Merge(replica("b:x", "e:w", "e:v")); err != nil {
		t.Fatal(err)
	}
	g := retireGroups(state)
	if g["a"] != g["b"] || g["d"] != g["e"] || g["a"] == g["c"] || g["a"] == g["d"] || g["c"] == g["d"] || len(g) != 5 {
		t.Fatalf("groups %v; want {a b} {c} {d e}", g)
	}
}

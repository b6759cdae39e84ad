package modelcheck

import (
	"context"
	"testing"
	"time"

	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/modelcheck/internal/mc"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// The scopes that hold on the current code, run by CI. Each explores every
// schedule within its bounds; COUNTERKIT_CASES raises the bounds.

var small = tpncounter.Options{HistoryLength: 2, FoldedLength: 2}

// bounds returns the CI bounds, or the larger ones under COUNTERKIT_CASES.
func bounds(faults, preempts, largeFaults, largePreempts int) (int, int) {
	if large() {
		return largeFaults, largePreempts
	}
	return faults, preempts
}

// retryScope: two ledgers credit, a transaction whose call fails is
// retried on the other ledger, and a third ledger retries late and
// compacts.
func retryScope() mc.Scope { return retryScopeOn("ledger-retry", nil) }

// retryScopeOn is retryScope with the ledgers' store wrapped by wrap (nil:
// none), for the broken variants.
func retryScopeOn(name string, wrap func(w *mc.World) store.Siblings) mc.Scope {
	faults, pre := bounds(2, 0, 2, 2)
	txns := []mc.Txn{{ID: "x", Amount: 1}, {ID: "y", Amount: 10}, {ID: "z", Amount: 100}}
	return mc.Scope{
		Name:      name,
		Fates:     afterFixes(mc.Of(mc.Refuse, mc.LoseAck, mc.Hold, mc.Stale)),
		MaxFaults: faults, MaxPreemptions: pre,
		Build: func(w *mc.World) {
			w.Window = mc.CountWindow(small.HistoryLength + small.FoldedLength)
			var st store.Siblings = w.Store
			if wrap != nil {
				st = wrap(w)
			}
			a := mustLedger(st, "k", ledgerOptions("a", small))
			b := mustLedger(st, "k", ledgerOptions("b", small))
			c := mustLedger(st, "k", ledgerOptions("c", small))
			w.Go("A", func(r *mc.Runner) {
				credit(r, "A1", a, "x", 1)
				credit(r, "A2", a, "y", 10)
			})
			w.Go("B", func(r *mc.Runner) {
				credit(r, "B1", b, "z", 100)
				if failed(r.Wait("A1")) {
					credit(r, "B2", b, "x", 1)
				}
			})
			w.Go("C", func(r *mc.Runner) {
				a2, b1 := r.Wait("A2"), r.Wait("B1")
				if failed(a2) {
					credit(r, "C1", c, "y", 10)
				}
				if failed(b1) {
					credit(r, "C2", c, "z", 100)
				}
				find(r, "C3", c)
			})
			checkLedgers(w, small, txns, "k")
		},
	}
}

// groupScope: two concurrent Credits on one Ledger with MaxGroup 2 share a
// write; a failed one is retried on a second ledger.
func groupScope() mc.Scope {
	faults, pre := bounds(2, 2, 2, 3)
	txns := []mc.Txn{{ID: "x", Amount: 1}, {ID: "y", Amount: 10}, {ID: "z", Amount: 100}}
	return mc.Scope{
		Name:      "ledger-group",
		Fates:     afterFixes(mc.Of(mc.Refuse, mc.LoseAck, mc.Hold)),
		MaxFaults: faults, MaxPreemptions: pre,
		Build: func(w *mc.World) {
			w.Window = mc.CountWindow(small.HistoryLength + small.FoldedLength)
			o := ledgerOptions("a", small)
			o.MaxGroup = 2
			a := mustLedger(w.Store, "k", o)
			b := mustLedger(w.Store, "k", ledgerOptions("b", small))
			w.Go("G1", func(r *mc.Runner) { credit(r, "G1", a, "x", 1) })
			w.Go("G2", func(r *mc.Runner) { credit(r, "G2", a, "y", 10) })
			w.Go("G3", func(r *mc.Runner) { credit(r, "G3", a, "z", 100) })
			w.Go("B", func(r *mc.Runner) {
				for _, l := range []string{"G1", "G2", "G3"} {
					if op := r.Wait(l); failed(op) {
						credit(r, "B"+l, b, op.Txn, op.Amount)
					}
				}
			})
			checkLedgers(w, small, txns, "k")
		},
	}
}

// retireScope: retirement on, with a fake clock; two incarnations credit
// (retrying on themselves after an error) and go idle while a third writes
// on for hours. The third starts once the others' retries are done:
// RetireAfter's documented assumption that no client retries later.
func retireScope() mc.Scope { return retireScopeOf("ledger-retire", true) }

// retireScopeOf is retireScope; unless patient, the third ledger starts
// after the first calls, so a retry may come hours later.
func retireScopeOf(name string, patient bool) mc.Scope {
	faults, pre := bounds(1, 1, 2, 2)
	fates := afterFixes(mc.Of(mc.Refuse, mc.LoseAck, mc.Hold))
	if !patient {
		faults, fates = 2, mc.Of(mc.Refuse, mc.LoseAck, mc.Hold)
	}
	txns := []mc.Txn{{ID: "x", Amount: 1}, {ID: "y", Amount: 10}, {ID: "c1", Amount: 100}, {ID: "c2", Amount: 1000}, {ID: "c3", Amount: 10000}}
	return mc.Scope{
		Name:      name,
		Fates:     fates,
		MaxFaults: faults, MaxPreemptions: pre,
		Build: func(w *mc.World) {
			w.Window = mc.CountWindow(small.HistoryLength + small.FoldedLength)
			opts := func(actor string) ledger.Options {
				o := ledgerOptions(actor, small)
				o.RetireAfter, o.Clock = time.Hour, w.Clock.Now
				return o
			}
			a := mustLedger(w.Store, "k", opts("a"))
			b := mustLedger(w.Store, "k", opts("b"))
			c := mustLedger(w.Store, "k", opts("c"))
			w.Go("A", func(r *mc.Runner) {
				if failed(credit(r, "A1", a, "x", 1)) {
					credit(r, "A2", a, "x", 1)
				}
				r.Do("A-done", "", 0, func(context.Context) mc.Result { return mc.Result{} })
			})
			w.Go("B", func(r *mc.Runner) {
				if failed(credit(r, "B1", b, "y", 10)) {
					credit(r, "B2", b, "y", 10)
				}
				r.Do("B-done", "", 0, func(context.Context) mc.Result { return mc.Result{} })
			})
			w.Go("C", func(r *mc.Runner) {
				if patient {
					r.Wait("A-done")
					r.Wait("B-done")
				} else {
					r.Wait("A1")
					r.Wait("B1")
				}
				for i, x := range []crdt.TxnID{"c1", "c2", "c3"} {
					advanceIfNoneHeld(w, time.Hour)
					credit(r, "C"+string(rune('1'+i)), c, x, txns[2+i].Amount)
				}
				advanceIfNoneHeld(w, time.Hour)
				find(r, "C4", c)
			})
			checkLedgers(w, small, txns, "k")
			checkRetired(w, "k", small, time.Hour)
		},
	}
}

// shardedScope: two Sharded values of one n make their first use of a new
// account at once, one of them possibly from a stale read.
func shardedScope(n int) mc.Scope {
	faults, pre := bounds(1, 2, 2, 3)
	txns := []mc.Txn{{ID: "x", Amount: 1}, {ID: "y", Amount: 10}}
	return mc.Scope{
		Name:      "sharded-first-use-n" + string(rune('0'+n)),
		Fates:     afterFixes(mc.Of(mc.Refuse, mc.LoseAck, mc.Stale)),
		MaxFaults: faults, MaxPreemptions: pre,
		Build: func(w *mc.World) {
			w.Window = mc.CountWindow(small.HistoryLength + small.FoldedLength)
			s1, _ := ledger.NewSharded(w.Store, "acct", n, ledgerOptions("a", small))
			s2, _ := ledger.NewSharded(w.Store, "acct", n, ledgerOptions("b", small))
			w.Go("S1", func(r *mc.Runner) { shardedCredit(r, "S1", s1, "x", 1) })
			w.Go("S2", func(r *mc.Runner) {
				shardedCredit(r, "S2", s2, "y", 10)
				if failed(r.Wait("S1")) {
					shardedCredit(r, "S2x", s2, "x", 1)
				}
			})
			checkSharded(w, "acct", small, txns, n)
		},
	}
}

// boundedScope: two Accounts credit and debit one bounded counter; a
// failed call is retried on the other account.
func boundedScope() mc.Scope { return boundedScopeOn("bounded-retry", nil) }

// boundedScopeOn is boundedScope with the accounts' store wrapped by wrap
// (nil: none), for the broken variants.
func boundedScopeOn(name string, wrap func(w *mc.World) store.Siblings) mc.Scope {
	faults, pre := bounds(2, 1, 2, 2)
	txns := []mc.Txn{{ID: "x", Amount: 10}, {ID: "y", Amount: 100}, {ID: "d", Amount: -1}}
	c := bounded.Options{Window: 4}
	return mc.Scope{
		Name:      name,
		Fates:     afterFixes(mc.Of(mc.Refuse, mc.LoseAck, mc.Hold, mc.Stale)),
		MaxFaults: faults, MaxPreemptions: pre,
		Build: func(w *mc.World) {
			w.Window = mc.CountWindow(c.Window)
			var st store.Siblings = w.Store
			if wrap != nil {
				st = wrap(w)
			}
			a := mustAccount(st, "a", c)
			b := mustAccount(st, "b", c)
			w.Go("A", func(r *mc.Runner) {
				accountOp(r, "A1", a, "x", 10)
				accountOp(r, "A2", a, "d", -1)
			})
			w.Go("B", func(r *mc.Runner) {
				accountOp(r, "B1", b, "y", 100)
				if op := r.Wait("A1"); failed(op) {
					accountOp(r, "B2", b, "x", 10)
				}
			})
			checkAccount(w, "acct", c, txns, a, b)
		},
	}
}

func mustAccount(st store.Siblings, actor string, c bounded.Options) *bounded.Account {
	a, err := bounded.Open(st, "acct", bounded.AccountOptions{Actor: crdt.ActorID(actor), Counter: c,
		RetryCount: 1, Backoff: bounded.Backoff{Initial: -1}})
	if err != nil {
		panic(err)
	}
	return a
}

// bookScope: a Book that keeps one Ledger open writes two keys in turn,
// so its Ledgers are dropped and reopened (a pending one must stay); a
// failed call is retried on a second Book.
func bookScope() mc.Scope {
	faults, pre := bounds(2, 1, 2, 2)
	txns1 := []mc.Txn{{ID: "x", Amount: 1}, {ID: "z", Amount: 10}}
	txns2 := []mc.Txn{{ID: "y", Amount: 1}}
	return mc.Scope{
		Name:      "book-drop",
		Fates:     afterFixes(mc.Of(mc.Refuse, mc.LoseAck, mc.Hold, mc.Stale)),
		MaxFaults: faults, MaxPreemptions: pre,
		Build: func(w *mc.World) {
			w.Window = mc.CountWindow(small.HistoryLength + small.FoldedLength)
			book := func(actor string) *ledger.Book {
				b, err := ledger.NewBook(w.Store, ledger.BookOptions{Options: ledgerOptions(actor, small), MaxOpen: 1})
				if err != nil {
					panic(err)
				}
				return b
			}
			a, b := book("a"), book("b")
			bookCredit := func(r *mc.Runner, label string, bk *ledger.Book, key string, txn crdt.TxnID, amount int64) *mc.Op {
				return r.Do(label, txn, amount, func(ctx context.Context) mc.Result {
					res, err := bk.Credit(ctx, key, txn, amount)
					out := mc.Result{Writer: res.Writer, Key: key, Err: err}
					if err == nil {
						out.Outcome = res.Outcome.String()
						out.Applied = res.Outcome == tpncounter.Applied
					}
					return out
				})
			}
			w.Go("A", func(r *mc.Runner) {
				bookCredit(r, "A1", a, "k1", "x", 1)
				bookCredit(r, "A2", a, "k2", "y", 1)
				bookCredit(r, "A3", a, "k1", "z", 10)
			})
			w.Go("B", func(r *mc.Runner) {
				for _, l := range []string{"A1", "A2", "A3"} {
					if op := r.Wait(l); failed(op) {
						key := "k1"
						if op.Txn == "y" {
							key = "k2"
						}
						bookCredit(r, "B"+l, b, key, op.Txn, op.Amount)
					}
				}
			})
			checkLedgers(w, small, txns1, "k1")
			checkLedgers(w, small, txns2, "k2")
		},
	}
}

func TestScopes(t *testing.T) {
	for _, s := range []mc.Scope{retryScope(), groupScope(), retireScope(), shardedScope(1), shardedScope(2), boundedScope(), bookScope()} {
		t.Run(s.Name, func(t *testing.T) { run(t, s) })
	}
}

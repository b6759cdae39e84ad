package embedded_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// ledgerWorkload: ledger credits and debits (package ledger over the
// embedded Siblings store), a quarter of them re-deliveries of a
// transaction id this child already used, often to another goroutine
// while the first is still on it. A record is account|txn|amount. After a
// kill, each account's balance must be the last balance plus every
// acknowledged transaction of the round once, plus some subset of the
// round's unacknowledged ones (each counted once or not at all).
type ledgerWorkload struct {
	balance map[string]int64 // per account, as of the last check

	mu      sync.Mutex
	ledgers map[string]*ledger.Ledger // child: per goroutine and account
	used    []string                  // child: transaction ids for re-delivery
}

var ledgerAccounts = []string{"acct/l0", "acct/l1"}

func newLedgerWorkload() *ledgerWorkload {
	return &ledgerWorkload{balance: map[string]int64{}, ledgers: map[string]*ledger.Ledger{}}
}

func (*ledgerWorkload) name() string { return "ledger" }

// txnAmount derives a transaction's signed amount from its id, so that
// re-deliveries carry the same amount.
func txnAmount(id string) int64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	x := h.Sum64()
	a := int64(1 + x%1000)
	if x>>32%3 == 0 {
		a = -a
	}
	return a
}

func (w *ledgerWorkload) step(ctx context.Context, env *childEnv, rng *rand.Rand, try, ack func(string)) error {
	w.mu.Lock()
	var id string
	if len(w.used) > 0 && rng.IntN(4) == 0 {
		id = w.used[rng.IntN(len(w.used))]
	} else {
		// The account's index, then an id unique to this child.
		id = fmt.Sprintf("%d/%s-t%d", rng.IntN(len(ledgerAccounts)), env.tag, env.seq())
		// Re-deliveries come from the last 8 ids: fewer later writes than
		// the ledger's history length (10), so inside its retry window.
		w.used = append(w.used, id)
		if len(w.used) > 8 {
			w.used = w.used[1:]
		}
	}
	acct := ledgerAccounts[id[0]-'0']
	key := fmt.Sprintf("%p/%s", rng, acct) // one Ledger per goroutine and account
	l := w.ledgers[key]
	if l == nil {
		var err error
		l, err = ledger.New(env.db.Siblings(), acct, ledger.Options{Actor: crdt.ActorID(fmt.Sprintf("w%d", len(w.ledgers)))})
		if err != nil {
			w.mu.Unlock()
			return err
		}
		w.ledgers[key] = l
	}
	w.mu.Unlock()
	rec := fmt.Sprintf("%s|%s|%d", acct, id, txnAmount(id))
	try(rec)
	if _, err := l.Update(ctx, crdt.TxnID(id), txnAmount(id)); err != nil {
		return err
	}
	ack(rec)
	return nil
}

func (w *ledgerWorkload) check(ctx context.Context, db *embedded.DB, round int, tries, acks []string) error {
	return checkSums(tries, acks, ledgerAccounts, w.balance, func(acct string) (int64, error) {
		reader, err := ledger.New(db.Siblings(), acct, ledger.Options{Actor: "auditor"})
		if err != nil {
			return 0, err
		}
		return reader.Value(ctx)
	})
}

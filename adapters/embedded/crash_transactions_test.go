package embedded_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
)

// transactionsWorkload: balance.Transactions credits and debits by
// transaction id (the hot-account type, over the embedded Partitions
// store), a quarter of them resends of an id this child already used, and
// now and then a merge, which records, sums, settles and removes rows. A
// record is account|txn|amount. After a kill, each account's balance must
// be the last balance plus every acknowledged transaction of the round
// once, plus some subset of the round's unacknowledged ones. Then the
// parent resends every unacknowledged one, as a caller whose process died
// retries through another, and some acknowledged in earlier rounds (11
// minutes of clock apart, so merges have settled and removed their rows:
// only their records recognise them), and merges: the balance must then
// count every transaction ever tried exactly once.
type transactionsWorkload struct {
	balance map[string]int64 // per account, as of the last check
	old     []oldTxn         // transactions acknowledged in earlier rounds
	// oldResent counts the resends of old transactions, oldDuplicates
	// those answered from their records.
	oldResent, oldDuplicates int

	mu   sync.Mutex
	tx   *balance.Transactions // child
	used []string              // child: transaction ids for resending
}

var transactionsAccounts = []string{"hot/t0", "hot/t1"}

// oldTxn is a transaction record acknowledged in round round.
type oldTxn struct {
	rec   string
	round int
}

// oldResends is how many transactions of earlier rounds the parent resends
// after each kill, from rounds within oldRounds of it: inside RetryWindow
// (24 hours of 11-minute rounds is 130).
const (
	oldResends = 8
	oldRounds  = 100
)

func newTransactionsWorkload() *transactionsWorkload {
	return &transactionsWorkload{balance: map[string]int64{}}
}

func (*transactionsWorkload) name() string { return "transactions" }

func (w *transactionsWorkload) summary() string {
	return fmt.Sprintf("transactions: %d resends of earlier rounds' transactions, %d answered duplicate", w.oldResent, w.oldDuplicates)
}

func (w *transactionsWorkload) step(ctx context.Context, env *childEnv, rng *rand.Rand, try, ack func(string)) error {
	w.mu.Lock()
	if w.tx == nil {
		tx, err := balance.NewTransactions(env.db.Partitions(), balance.TxnOptions{Options: balance.Options{Clock: env.clock}})
		if err != nil {
			w.mu.Unlock()
			return err
		}
		w.tx = tx
	}
	tx := w.tx
	if rng.IntN(8) == 0 {
		w.mu.Unlock()
		reps, err := tx.Merge(ctx, transactionsAccounts[rng.IntN(len(transactionsAccounts))])
		if err != nil {
			return err
		}
		env.note("transactions-merges")
		for _, r := range reps {
			if len(r.Deleted) > 0 {
				env.note("transactions-merges-removed-rows")
				break
			}
		}
		return nil
	}
	var id string
	if len(w.used) > 0 && rng.IntN(4) == 0 {
		id = w.used[rng.IntN(len(w.used))]
	} else {
		id = fmt.Sprintf("%d/%s-x%d", rng.IntN(len(transactionsAccounts)), env.tag, env.seq())
		w.used = append(w.used, id)
		if len(w.used) > 64 {
			w.used = w.used[1:]
		}
	}
	w.mu.Unlock()
	acct := transactionsAccounts[id[0]-'0']
	rec := fmt.Sprintf("%s|%s|%d", acct, id, txnAmount(id))
	try(rec)
	out, err := tx.Apply(ctx, acct, crdt.TxnID(id), txnAmount(id))
	if err != nil {
		return err
	}
	if out == balance.Duplicate {
		env.note("transactions-duplicates")
	}
	ack(rec)
	return nil
}

func (w *transactionsWorkload) check(ctx context.Context, db *embedded.DB, round int, tries, acks []string) error {
	// The clock of the round just killed, as its child read it.
	clock := func() time.Time { return time.Now().Add(time.Duration(round) * crashRoundSkew) }
	tx, err := balance.NewTransactions(db.Partitions(), balance.TxnOptions{Options: balance.Options{Clock: clock}})
	if err != nil {
		return err
	}
	before := maps.Clone(w.balance)
	if err := checkSums(tries, acks, transactionsAccounts, w.balance, func(acct string) (int64, error) {
		return tx.Balance(ctx, acct)
	}); err != nil {
		return err
	}
	acked := map[string]bool{}
	for _, a := range acks {
		acked[a] = true
	}
	want := before
	seen := map[string]bool{}
	for _, r := range tries {
		if seen[r] {
			continue
		}
		seen[r] = true
		f := strings.Split(r, "|")
		amount, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if len(f) != 3 || err != nil {
			return fmt.Errorf("bad record %q", r)
		}
		want[f[0]] += amount
		if acked[r] {
			continue
		}
		if _, err := tx.Apply(ctx, f[0], crdt.TxnID(f[1]), amount); err != nil {
			return fmt.Errorf("resending %s after the kill: %w", r, err)
		}
	}
	// Transactions acknowledged two or more rounds ago, resent: they count
	// nothing more (want is unchanged).
	w.old = slices.DeleteFunc(w.old, func(o oldTxn) bool { return o.round < round-oldRounds })
	rng := rand.New(rand.NewPCG(uint64(round), 7))
	for range min(oldResends, len(w.old)) {
		o := w.old[rng.IntN(len(w.old))]
		if o.round > round-2 {
			continue
		}
		f := strings.Split(o.rec, "|")
		amount, _ := strconv.ParseInt(f[2], 10, 64)
		out, err := tx.Apply(ctx, f[0], crdt.TxnID(f[1]), amount)
		if err != nil {
			return fmt.Errorf("resending %s of round %d: %w", o.rec, o.round, err)
		}
		w.oldResent++
		if out == balance.Duplicate {
			w.oldDuplicates++
		}
	}
	for _, r := range acks {
		w.old = append(w.old, oldTxn{rec: r, round: round})
	}
	for _, acct := range transactionsAccounts {
		if _, err := tx.Merge(ctx, acct); err != nil {
			return fmt.Errorf("%s: merge after the resends: %w", acct, err)
		}
		got, err := tx.Balance(ctx, acct)
		if err != nil {
			return fmt.Errorf("%s: %w", acct, err)
		}
		if got != want[acct] {
			return fmt.Errorf("%s: %d after resending every unacknowledged transaction and merging, want %d: each tried transaction once", acct, got, want[acct])
		}
		w.balance[acct] = got
	}
	return nil
}

package embedded_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/timeid"
)

// balanceWorkload: balance adds (package balance over the embedded
// Partitions store), a quarter of them re-sends of a recent add, and now
// and then a merge. A record is account|id|amount. After a kill, each
// balance must be the last balance plus every acknowledged add once, plus
// some subset of the round's unacknowledged ones. Each child's clock runs
// crashRoundSkew (11 minutes) ahead of the last one's, past the write
// window and the graces, so merges fold, settle and collect the rows of
// earlier rounds; a merge interrupted by the kill must change no balance.
type balanceWorkload struct {
	balance map[string]int64 // per account, as of the last check

	mu       sync.Mutex
	accounts *balance.Accounts // child
	recent   []string          // child: records for re-sending
}

var balanceAccounts = []string{"seller/b0", "seller/b1"}

func newBalanceWorkload() *balanceWorkload {
	return &balanceWorkload{balance: map[string]int64{}}
}

func (*balanceWorkload) name() string { return "balance" }

func (w *balanceWorkload) step(ctx context.Context, env *childEnv, rng *rand.Rand, try, ack func(string)) error {
	w.mu.Lock()
	if w.accounts == nil {
		a, err := balance.New(env.db.Partitions(), balance.Options{Clock: env.clock})
		if err != nil {
			w.mu.Unlock()
			return err
		}
		w.accounts = a
	}
	ac := w.accounts
	if rng.IntN(8) == 0 {
		w.mu.Unlock()
		r, err := ac.Merge(ctx, balanceAccounts[rng.IntN(len(balanceAccounts))])
		if err != nil {
			return err
		}
		env.note("balance-merges")
		if r.Sum != nil {
			env.note("balance-merges-wrote-a-sum")
		}
		if len(r.Deleted) > 0 {
			env.note("balance-merges-settled")
		}
		if len(r.Collected) > 0 {
			env.note("balance-merges-collected")
		}
		return nil
	}
	var rec string
	if len(w.recent) > 0 && rng.IntN(4) == 0 {
		rec = w.recent[rng.IntN(len(w.recent))]
	} else {
		amount := 1 + rng.Int64N(1000)
		if rng.IntN(3) == 0 {
			amount = -amount
		}
		rec = fmt.Sprintf("%s|%s|%d", balanceAccounts[rng.IntN(len(balanceAccounts))], timeid.New(env.clock()), amount)
		w.recent = append(w.recent, rec)
		if len(w.recent) > 16 {
			w.recent = w.recent[1:]
		}
	}
	w.mu.Unlock()
	f := strings.Split(rec, "|")
	id, err := timeid.Parse(f[1])
	if err != nil {
		return err
	}
	amount, _ := strconv.ParseInt(f[2], 10, 64)
	try(rec)
	if err := ac.Add(ctx, f[0], id, amount); err != nil {
		return err
	}
	ack(rec)
	return nil
}

func (w *balanceWorkload) check(ctx context.Context, db *embedded.DB, round int, tries, acks []string) error {
	clock := func() time.Time { return time.Now().Add(time.Duration(round) * crashRoundSkew) }
	ac, err := balance.New(db.Partitions(), balance.Options{Clock: clock})
	if err != nil {
		return err
	}
	return checkSums(tries, acks, balanceAccounts, w.balance, func(acct string) (int64, error) {
		return ac.Balance(ctx, acct)
	})
}

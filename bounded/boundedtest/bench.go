package boundedtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// shortfallSeq tells apart the keys of calls in one nanosecond.
var shortfallSeq atomic.Int64

// shortfallKey returns the key BenchmarkShortfall uses: a new one at each
// call ("bounded/Shortfall/<unix nanoseconds>-<sequence>"), so that repeated
// runs, and the benchmark framework's repeated calls with growing b.N, never
// find one another's accounts on a shared database.
func shortfallKey() string {
	return fmt.Sprintf("bounded/Shortfall/%d-%d", time.Now().UnixNano(), shortfallSeq.Add(1))
}

// BenchmarkShortfall runs a workload where actors run short on st: 8
// accounts on one fresh key (shortfallKey), each seeded with a credit of
// 16, then credits of 4 spread evenly over them and debits of 4 spread
// unevenly (account i takes a share proportional to 2^-i, so account 0
// takes about half; the choice is seeded, so every backend sees the same
// sequence). Each iteration is one credit and one debit, from one
// goroutine. A refused debit is retried with the same id at its account's
// next turn; meanwhile the credits of other accounts are the writes that
// grant its request.
//
// Reported:
//
//   - needed-transfer/debit: the share of debits that needed a transfer
//     (refused at least once);
//   - ns/debit-within: the time of a debit within the account's rights;
//   - attempts/needy-debit and ns/needy-debit: the attempts, and the time
//     spent in them, per debit that needed a transfer;
//   - ops-waited/needy-debit: how many other operations ran before it
//     succeeded.
//
// st must be usable by 8 accounts at once; the caller makes a fresh store
// or shares one (the key is fresh either way).
func BenchmarkShortfall(b *testing.B, st store.Siblings) {
	ctx := context.Background()
	key := shortfallKey()
	const n = 8
	accounts := make([]*bounded.Account, n)
	for i := range accounts {
		a, err := bounded.Open(st, key, bounded.AccountOptions{Actor: crdt.ActorID(fmt.Sprintf("w%d", i))})
		if err != nil {
			b.Fatal(err)
		}
		accounts[i] = a
		if _, err := a.Credit(ctx, crdt.TxnID(fmt.Sprintf("seed-%d", i)), 16); err != nil {
			b.Fatal(err)
		}
	}
	type waiting struct {
		txn      crdt.TxnID
		attempts int
		spent    time.Duration
		since    int
	}
	pending := make([]*waiting, n)
	var (
		debits, needy, needyAttempts, waited int
		within, needySpent                   time.Duration
	)
	rng := rand.New(rand.NewSource(1))
	pick := func() int { // P(i) ∝ 2^-i
		x := rng.Float64() * (2 - 2/float64(int(1)<<n))
		for i := range n {
			w := 1 / float64(int(1)<<i)
			if x < w {
				return i
			}
			x -= w
		}
		return n - 1
	}
	b.ReportAllocs()
	b.ResetTimer()
	for k := range b.N {
		if _, err := accounts[k%n].Credit(ctx, crdt.TxnID(fmt.Sprintf("c%d", k)), 4); err != nil {
			b.Fatal(err)
		}
		i := pick()
		w := pending[i]
		if w == nil {
			w = &waiting{txn: crdt.TxnID(fmt.Sprintf("d%d", k)), since: k}
		}
		start := time.Now()
		_, err := accounts[i].Debit(ctx, w.txn, 4)
		d := time.Since(start)
		w.attempts++
		w.spent += d
		switch {
		case err == nil && w.attempts == 1:
			debits++
			within += d
			pending[i] = nil
		case err == nil:
			debits++
			needy++
			needyAttempts += w.attempts
			needySpent += w.spent
			waited += 2 * (k - w.since) // credits and debits run meanwhile
			pending[i] = nil
		case errors.Is(err, crdt.ErrInsufficientRights):
			pending[i] = w
		default:
			b.Fatal(err)
		}
	}
	if debits > 0 {
		b.ReportMetric(float64(needy)/float64(debits), "needed-transfer/debit")
	}
	if within > 0 && debits > needy {
		b.ReportMetric(float64(within.Nanoseconds())/float64(debits-needy), "ns/debit-within")
	}
	if needy > 0 {
		b.ReportMetric(float64(needyAttempts)/float64(needy), "attempts/needy-debit")
		b.ReportMetric(float64(needySpent.Nanoseconds())/float64(needy), "ns/needy-debit")
		b.ReportMetric(float64(waited)/float64(needy), "ops-waited/needy-debit")
	}
}

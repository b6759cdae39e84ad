package bounded_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store/faulty"
)

// TestConcurrentWithFaults runs accounts in goroutines over a store that
// refuses, loses and unacknowledges writes, several goroutines per
// account: every stored sibling stays at or above the bound after every
// operation, and once the faults stop every acknowledged transaction is
// held. Interleavings are the scheduler's, so this complements the
// simulation (which replays) with real concurrency under -race.
func TestConcurrentWithFaults(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d (faults and amounts; the interleaving is not replayed)", seed)
	ctx := context.Background()
	inner := memory.NewSiblings()
	st := faulty.NewSiblings(inner, faulty.Options{Policy: faulty.Seeded(seed, faulty.Rates{Refuse: 0.05, LoseAck: 0.08, Lose: 0.05})})
	const accounts, perAccount, ops = 4, 3, 25
	// A holder keeps its last Window transactions: one above what an
	// account can apply keeps every acknowledged transaction held (with
	// the default 64, an account applying 65 forgot its first: a failed
	// CI run, seed 1796136750670669681).
	window := perAccount*ops + 1
	var all []*bounded.Account
	for i := range accounts {
		a, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: crdt.ActorID(fmt.Sprintf("w%d", i)), RetryCount: 2, Backoff: bounded.Backoff{Initial: -1},
			Counter: bounded.Options{Window: window}})
		require.NoError(t, err)
		all = append(all, a)
	}
	var mu sync.Mutex
	acked := map[crdt.TxnID]bool{}
	check := func() error {
		sibs, _, err := inner.Fetch(ctx, "k")
		if err != nil {
			return err
		}
		for _, b := range sibs {
			c, err := bounded.Decode(b, 0)
			if err != nil {
				return err
			}
			if c.Value() < 0 {
				return fmt.Errorf("a stored sibling has value %d", c.Value())
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	for i, a := range all {
		for g := range perAccount {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewSource(seed + int64(i*perAccount+g)))
				for k := range ops {
					txn := crdt.TxnID(fmt.Sprintf("w%d-g%d-%d", i, g, k))
					var err error
					switch rng.Intn(5) {
					case 0, 1:
						_, err = a.Credit(ctx, txn, int64(1+rng.Intn(5)))
					case 2, 3:
						_, err = a.Debit(ctx, txn, int64(1+rng.Intn(8)))
					default:
						_, err = a.Sync(ctx)
						txn = ""
					}
					if err == nil && txn != "" {
						mu.Lock()
						acked[txn] = true
						mu.Unlock()
					} else if err != nil && !errors.Is(err, crdt.ErrInsufficientRights) && !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, crdt.ErrUnavailable) {
						t.Error(err)
					}
					if err := check(); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	st.SetPolicy(func(faulty.Call) faulty.Fault { return faulty.Pass })
	var final *bounded.Counter
	for range 3 {
		for _, a := range all {
			c, err := a.Sync(ctx)
			require.NoError(t, err)
			final = c
		}
	}
	require.NoError(t, check())
	require.GreaterOrEqual(t, final.Value(), int64(0))
	for txn := range acked {
		require.NotEmpty(t, final.Holders(txn), "acknowledged %s is lost", txn)
	}
}

// Package boundedtest is the conformance suite of bounded.Account over a
// store.Siblings: the memory store runs it in package bounded's tests, and
// any other backend runs it with one call to Run.
//
// Each behaviour is its own subtest with a fresh store and key. Ambiguous
// writes are simulated by wrapping the store (store/faulty), never by
// asking the backend to fail.
package boundedtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/kitrun"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

// Run runs every behaviour. newStore returns a fresh store for one subtest
// (it may register cleanup, or call t.Skip when its backend is not
// configured).
func Run(t *testing.T, newStore func(t *testing.T) store.Siblings) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s store.Siblings, key string)
	}{
		{"AbsentKey", testAbsentKey},
		{"CreditDebitWithinRights", testBasics},
		{"RefusedDebitBecomesRequest", testRequest},
		{"HopelessDebitAsksNothing", testHopeless},
		{"ConcurrentAccountsNeverOverdraw", testConcurrent},
		{"AmbiguousWriteRetry", testAmbiguous},
		{"RestartKeepsValue", testRestart},
		{"CorruptSiblingStops", testCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newStore(t), fmt.Sprintf("bounded/%s/%d", tc.name, time.Now().UnixNano()))
		})
	}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func open(t *testing.T, s store.Siblings, key string, actor crdt.ActorID) *bounded.Account {
	t.Helper()
	a, err := bounded.Open(s, key, bounded.AccountOptions{Actor: actor, Backoff: bounded.Backoff{Initial: -1}})
	require.NoError(t, err)
	return a
}

func testAbsentKey(t *testing.T, s store.Siblings, key string) {
	v, err := open(t, s, key, "a").Value(ctxFor(t))
	require.NoError(t, err)
	require.Zero(t, v)
}

func testBasics(t *testing.T, s store.Siblings, key string) {
	ctx := ctxFor(t)
	a := open(t, s, key, "a")
	res, err := a.Credit(ctx, "c1", 10)
	require.NoError(t, err)
	require.Equal(t, bounded.Applied, res.Outcome)
	res, err = a.Debit(ctx, "d1", 7)
	require.NoError(t, err)
	require.Equal(t, int64(3), res.Value)
	require.Equal(t, int64(3), res.Rights)
	res, err = a.Debit(ctx, "d1", 7)
	require.NoError(t, err)
	require.Equal(t, bounded.Duplicate, res.Outcome)
	b := open(t, s, key, "b")
	res, err = b.Credit(ctx, "c1", 10) // a retry on another account
	require.NoError(t, err)
	require.Equal(t, bounded.Duplicate, res.Outcome)
	v, err := b.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(3), v)
}

func testRequest(t *testing.T, s store.Siblings, key string) {
	ctx := ctxFor(t)
	holder, needy := open(t, s, key, "holder"), open(t, s, key, "needy")
	_, err := holder.Credit(ctx, "c1", 100)
	require.NoError(t, err)
	res, err := needy.Debit(ctx, "d1", 40)
	var short *bounded.InsufficientRightsError
	require.ErrorAs(t, err, &short)
	require.ErrorIs(t, err, crdt.ErrInsufficientRights)
	require.Zero(t, short.Available)
	require.Equal(t, int64(40), res.Requested)
	c, err := holder.Sync(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(40), c.Rights(needy.Writer()))
	require.Equal(t, int64(60), c.Rights(holder.Writer()))
	res, err = needy.Debit(ctx, "d1", 40)
	require.NoError(t, err)
	require.Equal(t, bounded.Applied, res.Outcome)
	require.Equal(t, int64(60), res.Value)
	c, err = holder.Sync(ctx)
	require.NoError(t, err)
	require.Empty(t, c.Requests(), "a debit that went through withdraws the request")
}

// testHopeless: a debit beyond the whole balance asks for nothing, so it
// cannot hold back rights another account's debit could use.
func testHopeless(t *testing.T, s store.Siblings, key string) {
	ctx := ctxFor(t)
	holder, greedy, modest := open(t, s, key, "h"), open(t, s, key, "a-greedy"), open(t, s, key, "b-modest")
	_, err := holder.Credit(ctx, "c1", 100)
	require.NoError(t, err)
	res, err := greedy.Debit(ctx, "d1", 1000)
	require.ErrorIs(t, err, crdt.ErrInsufficientRights)
	require.Zero(t, res.Requested)
	res, err = modest.Debit(ctx, "d2", 30)
	require.ErrorIs(t, err, crdt.ErrInsufficientRights)
	require.Equal(t, int64(30), res.Requested)
	c, err := holder.Sync(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(30), c.Rights(modest.Writer()))
	require.Zero(t, c.Rights(greedy.Writer()))
	_, err = modest.Debit(ctx, "d2", 30)
	require.NoError(t, err)
}

// testConcurrent: accounts credit and debit at once, each within its own
// rights; the value is never below zero and equals the acknowledged
// credits minus the acknowledged debits.
func testConcurrent(t *testing.T, s store.Siblings, key string) {
	ctx := ctxFor(t)
	const n, ops = 4, 12
	var mu sync.Mutex
	var want int64
	accounts := make([]*bounded.Account, n)
	for i := range accounts {
		accounts[i] = open(t, s, key, crdt.ActorID(fmt.Sprintf("w%d", i)))
	}
	require.NoError(t, kitrun.Parallel(n, func(i int) error {
		for j := range ops {
			amt := int64(1 + (i+j)%5)
			var err error
			if j%3 == 0 {
				_, err = accounts[i].Credit(ctx, crdt.TxnID(fmt.Sprintf("c%d-%d", i, j)), amt)
			} else {
				_, err = accounts[i].Debit(ctx, crdt.TxnID(fmt.Sprintf("d%d-%d", i, j)), amt)
				amt = -amt
			}
			if err == nil {
				mu.Lock()
				want += amt
				mu.Unlock()
			} else if !errors.Is(err, crdt.ErrInsufficientRights) {
				return err
			}
		}
		return nil
	}))
	c, err := accounts[0].Sync(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, c.Value(), int64(0))
	require.Equal(t, want, c.Value())
}

// testAmbiguous: a write whose acknowledgement is lost, retried on the same
// account, and one lost outright, retried on another: each counts once.
func testAmbiguous(t *testing.T, s store.Siblings, key string) {
	ctx := ctxFor(t)
	f := faulty.NewSiblings(s, faulty.Options{Policy: faulty.Keys(faulty.Only(faulty.Script(faulty.LoseAck, faulty.Lose, faulty.Lose), faulty.MethodPut),
		func(k string) bool { return !bounded.IsRecordKey(k) })}) // the account's key alone
	a, err := bounded.Open(f, key, bounded.AccountOptions{Actor: "a", RetryCount: 1, Backoff: bounded.Backoff{Initial: -1}})
	require.NoError(t, err)
	res, err := a.Credit(ctx, "c1", 10) // the second attempt finds the first landed
	require.NoError(t, err)
	require.Equal(t, bounded.Applied, res.Outcome)
	require.Equal(t, 2, res.Attempts)
	require.False(t, a.Pending())
	_, err = a.Credit(ctx, "c2", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.True(t, a.Pending())
	b := open(t, s, key, "b")
	res, err = b.Credit(ctx, "c2", 5)
	require.NoError(t, err)
	require.Equal(t, bounded.Applied, res.Outcome, "c2 never landed")
	_, err = a.Sync(ctx) // lands a's pending copy, sees b's: takes it back unless it is the smaller holder
	require.NoError(t, err)
	c, err := b.Sync(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(15), c.Value())
	require.Len(t, c.Holders("c2"), 1)
}

// testRestart: a new Account for the same actor (a restart) reads what the
// old one wrote; the old incarnation's rights stay with it unless it gave
// them away with Close.
func testRestart(t *testing.T, s store.Siblings, key string) {
	ctx := ctxFor(t)
	old := open(t, s, key, "svc")
	_, err := old.Credit(ctx, "c1", 30)
	require.NoError(t, err)
	next := open(t, s, key, "svc")
	_, err = next.Debit(ctx, "d1", 10)
	require.ErrorIs(t, err, crdt.ErrInsufficientRights, "the rights are the old incarnation's")
	_, err = old.Close(ctx, next.Writer())
	require.NoError(t, err)
	_, err = old.Value(ctx)
	require.ErrorIs(t, err, bounded.ErrClosed)
	res, err := next.Debit(ctx, "d1", 10)
	require.NoError(t, err)
	require.Equal(t, int64(20), res.Value)
	require.Equal(t, int64(20), res.Rights)
}

func testCorrupt(t *testing.T, s store.Siblings, key string) {
	ctx := ctxFor(t)
	require.NoError(t, s.Put(ctx, key, "x", []byte{0x93, 0xa7, 'b', 'o', 'u', 'n', 'd', 'e', 'd', 0x01, 0xc0}, nil))
	a := open(t, s, key, "a")
	_, err := a.Credit(ctx, "c1", 1)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
}

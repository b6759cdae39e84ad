package ledger_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// holdingStore is a Store whose Puts can be held in flight: a held Put
// answers crdt.ErrAmbiguousWrite at once and lands later, when deliver is
// called, with the token it was sent with, as a request stuck in the
// network does.
type holdingStore struct {
	store.Siblings
	mu   sync.Mutex
	hold bool
	held []func() error
}

func (s *holdingStore) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold {
		s.held = append(s.held, func() error { return s.Siblings.Put(context.Background(), key, actor, value, token) })
		return fmt.Errorf("held in flight: %w", crdt.ErrAmbiguousWrite)
	}
	return s.Siblings.Put(ctx, key, actor, value, token)
}

func (s *holdingStore) deliver(t *testing.T) {
	s.mu.Lock()
	held := s.held
	s.held, s.hold = nil, false
	s.mu.Unlock()
	for _, put := range held {
		require.NoError(t, put())
	}
}

// A process's Put of x is in flight when it dies; the restarted process,
// with the same actor id, credits y and is acknowledged; then the old Put
// lands. y must still count (it was acknowledged), x at most once, in
// every order of ids and amounts. Writing the restarted process's entry
// as a continuation of the old one forks it, and the merge then loses y
// in about half of the orders.
func TestRestartWithLateWriteLosesNothing(t *testing.T) {
	ctx := context.Background()
	for i, tc := range []struct{ x, y crdt.TxnID }{{"x", "y"}, {"y", "x"}, {"a", "b"}, {"b", "a"}, {"m1", "m0"}, {"m0", "m1"}} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			store := &holdingStore{Siblings: memory.NewSiblings()}
			opts := ledger.Options{Actor: "A", Backoff: ledger.Backoff{Initial: -1}}
			life1, err := ledger.New(store, "k", opts)
			require.NoError(t, err)
			_, err = life1.Credit(ctx, "base", 1)
			require.NoError(t, err)
			store.hold = true
			_, err = life1.Credit(ctx, tc.x, 10)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			store.mu.Lock()
			store.hold = false // the process dies; its Puts are still in flight
			store.mu.Unlock()

			life2, err := ledger.New(store, "k", opts)
			require.NoError(t, err)
			r, err := life2.Credit(ctx, tc.y, 100)
			require.NoError(t, err)
			require.True(t, r.Landed)

			store.deliver(t)
			reader, _ := ledger.New(store, "k", ledger.Options{Actor: "reader"})
			c, err := reader.Find(ctx)
			require.NoError(t, err)
			require.Contains(t, []int64{101, 111}, c.Value(), "base and the acknowledged y, and x at most once")
			require.NotEqual(t, 0, int(c.Status(tc.y)), "the acknowledged %s is known", tc.y)
			// The ambiguous x, retried, counts once.
			_, err = life2.Credit(ctx, tc.x, 10)
			require.NoError(t, err)
			v, err := reader.Value(ctx)
			require.NoError(t, err)
			require.Equal(t, int64(111), v)
		})
	}
}

// A ledger's Put of x never reaches the store (ambiguous); the client
// retries x on another ledger, which lands it and, after more than its
// history's writes, folds it into its total. When the first ledger writes
// again its pending state still holds x: the transaction records show that
// another writer counted x, so the ledger takes it back out of its pending
// entry (a newer version of the entry, which also wins over the lost Put
// should it land late) instead of counting it a second time. Timed or not.
func TestPendingWriteAfterTheWindowIsNotCountedTwice(t *testing.T) {
	for _, timed := range []bool{false, true} {
		t.Run(fmt.Sprint("timed=", timed), func(t *testing.T) {
			ctx := context.Background()
			store := &holdingStore{Siblings: memory.NewSiblings()}
			opts := ledger.Options{Backoff: ledger.Backoff{Initial: -1}, RetryCount: 1,
				Counter: tpncounter.Options{HistoryLength: 1, FoldedLength: 1},
				Clock:   func() time.Time { return time.Unix(100, 0) }}
			if timed {
				opts.Counter.TxnTime = stepTime
			}
			a, b := opts, opts
			a.Actor, b.Actor = "a", "b"
			la, err := ledger.New(store, "k", a)
			require.NoError(t, err)
			lb, err := ledger.New(store, "k", b)
			require.NoError(t, err)
			_, err = la.Credit(ctx, "base@1", 1)
			require.NoError(t, err)

			store.mu.Lock()
			store.hold = true
			store.mu.Unlock()
			_, err = la.Credit(ctx, "x@2", 10)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			require.True(t, la.Pending())
			store.mu.Lock()
			store.hold = false
			store.mu.Unlock()

			_, err = lb.Credit(ctx, "x@2", 10) // the client's retry, on b
			require.NoError(t, err)
			for i := 3; i < 8; i++ { // b folds x into its total and forgets it
				_, err = lb.Credit(ctx, crdt.TxnID(fmt.Sprintf("y%d@%d", i, i)), 100)
				require.NoError(t, err)
			}
			c, err := lb.Find(ctx)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Unknown, c.Status("x@2"), "the test needs x forgotten by the counter")
			want := int64(1 + 10 + 500)

			r, err := la.Credit(ctx, "z@9", 1000) // a writes again, pending x and all
			require.NoError(t, err)
			require.Equal(t, want+1000, r.Value)
			v, err := lb.Value(ctx)
			require.NoError(t, err)
			require.Equal(t, want+1000, v, "x counted once")

			store.deliver(t) // a's lost Puts land after all, late
			v, err = lb.Value(ctx)
			require.NoError(t, err)
			require.Equal(t, want+1000, v, "x still counted once")
			r, err = la.Credit(ctx, "x@2", 10)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Duplicate, r.Outcome, "a late retry of x is recognised, not counted")
			require.Equal(t, want+1000, r.Value)
		})
	}
}

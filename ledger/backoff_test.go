package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
)

func TestBackoffLimits(t *testing.T) {
	b := ledger.Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond}
	var got []time.Duration
	for a := 1; a <= 5; a++ {
		got = append(got, ledger.BackoffLimit(b, a))
	}
	ms := time.Millisecond
	require.Equal(t, []time.Duration{10 * ms, 20 * ms, 40 * ms, 50 * ms, 50 * ms}, got, "doubling, capped at Max")
	require.Zero(t, ledger.BackoffLimit(ledger.Backoff{Initial: -1, Max: time.Second}, 3), "negative Initial: no wait")
}

// refusing refuses every Put and cancels the caller's context on the
// first, so the ledger must give up while waiting to retry.
type refusing struct {
	store.Siblings
	cancel context.CancelFunc
	puts   int
}

func (s *refusing) Put(context.Context, string, crdt.ActorID, []byte, store.Token) error {
	s.puts++
	s.cancel()
	return fmt.Errorf("refused: %w", crdt.ErrUnavailable)
}

// The wait between attempts ends when the context does: with an hour of
// backoff, a canceled Update returns at once, after one attempt, with the
// context's error and the store's.
func TestBackoffEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := &refusing{Siblings: memory.NewSiblings(), cancel: cancel}
	l, err := ledger.New(s, "k", ledger.Options{Actor: "a", Backoff: ledger.Backoff{Initial: time.Hour, Max: time.Hour}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { _, err := l.Credit(ctx, "t", 1); done <- err }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, crdt.ErrUnavailable)
		require.Equal(t, 1, s.puts)
	case <-time.After(time.Minute): // a liveness guard, not a measurement
		t.Fatal("the backoff did not end with the context")
	}
	_, err = ledger.New(s, "k", ledger.Options{Actor: "a", Backoff: ledger.Backoff{Max: -1}})
	require.True(t, errors.Is(err, crdt.ErrInvalidConfig))
}

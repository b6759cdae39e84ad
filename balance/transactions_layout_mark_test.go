package balance_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
)

// A layout race (SPEC.md 9.4 "Layout", Limit) whose loser has a smaller
// RetryWindow leaves an expiry mark in the loser's window numbering, ahead
// of the winner's clock: the winner's merges read it as no mark and
// replace it, and go on expiring. Found by a review: reporting such a
// mark as corrupt made every merge of the winner fail for good.
func TestTransactionsLayoutRaceForeignExpiryMark(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	c.Set(time.Date(2024, 3, 1, 12, 59, 50, 0, time.UTC))
	mem := memory.NewPartitions()
	hold := make(chan struct{})
	held := &holdFirstApply{Partitions: mem, partition: acct + "#txn.layout", release: hold, reached: make(chan struct{})}
	wHeld := layoutTxns(t, held, c, 16, 16, 24*time.Hour)
	w := layoutTxns(t, mem, c, 16, 16, 24*time.Hour)
	l := layoutTxns(t, mem, c, 16, 16, time.Hour)

	done := make(chan error, 1)
	go func() { _, err := wHeld.Apply(ctx, acct, "w-1", 1); done <- err }()
	<-held.reached // W read an empty marker; its marker write is in flight

	mustApplyTo(t, l, "l-1", 10, 1)
	c.Add(2 * time.Second)
	_, err := l.Merge(ctx, acct)
	require.NoError(t, err)
	c.Add(10 * time.Second) // 13:00:02: L's next window
	_, err = l.Merge(ctx, acct)
	require.NoError(t, err, "L's merge expires and writes the mark")
	require.NotEmpty(t, storedRows(mem, acct+"#txn.expired"))

	close(hold)
	require.NoError(t, <-done)
	c.Add(2 * time.Second)
	_, err = l.Apply(ctx, acct, "l-2", 1)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig, "L is refused once it sees W's marker")

	for i := range 3 {
		c.Add(24 * time.Hour)
		mustApplyTo(t, w, crdt.TxnID("w-next-"+string(rune('a'+i))), 1, 1)
		c.Add(time.Second)
		_, err = w.Merge(ctx, acct)
		require.NoError(t, err, "W's merge %d, a day later", i)
	}
}

package balance

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// A marker amount naming a RetryWindow no Transactions takes (0, or past
// MaxRetryWindow) is damage: AccountLayout reports crdt.ErrCorruptEncoding
// rather than a layout. A review found both returned as layouts.
func TestAccountLayoutDamagedAmount(t *testing.T) {
	ctx := context.Background()
	for _, amount := range []int64{
		1,                // Partitions 1, RecordShards 2, RetryWindow 0
		(1<<49 - 1) << 8, // RetryWindow 2^49-1 µs, past MaxRetryWindow
	} {
		t.Run(layoutString(amount), func(t *testing.T) {
			st := memory.NewPartitions()
			var buf []byte
			m := appendPut(&buf, layoutPartition("a"), NormalRow(layoutMarkID, amount))
			m.Timestamp = 1
			require.NoError(t, st.Apply(ctx, []store.Mutation{m}))
			_, ok, err := AccountLayout(ctx, st, "a")
			require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
			require.False(t, ok)
		})
	}
}

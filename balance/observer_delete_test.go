package balance_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/internal/obstest"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

// Accounts.Delete reports one "delete" event with its outcome, its store
// call nested in it, as Transactions.Delete does; a refused one names the
// refusal, an invalid key is Invalid.
func TestAccountsDeleteIsObserved(t *testing.T) {
	ctx := context.Background()
	now := obsT0
	tr := &obstest.Tracker{}
	fs := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
	ac, err := balance.New(observe.Partitions(fs, tr), balance.Options{Clock: func() time.Time { return now }, Observer: tr})
	require.NoError(t, err)
	require.NoError(t, ac.Add(ctx, "seller-1", timeid.New(now), 5))
	obstest.CheckDelete(t, tr, fs, "balance", "seller-1", ac.Delete)
}

package deltalog_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/internal/obstest"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

// Delete reports one "delete" event with its outcome, its store call
// nested in it, as Transactions.Delete does; a refused one names the
// refusal, an invalid key is Invalid.
func TestDeltalogDeleteIsObserved(t *testing.T) {
	ctx := context.Background()
	now := obsT0
	tr := &obstest.Tracker{}
	fs := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
	c := obsCounters(t, observe.Partitions(fs, tr), tr, &now)
	require.NoError(t, c.Add(ctx, "v", timeid.New(now), 2))
	obstest.CheckDelete(t, tr, fs, "deltalog", "v", c.Delete)
}

package kitrun_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/internal/kitrun"
)

func TestParallelRunsEveryIndexAndJoinsErrors(t *testing.T) {
	var seen [5]atomic.Int32
	boom := errors.New("boom")
	err := kitrun.Parallel(len(seen), func(i int) error {
		seen[i].Add(1)
		if i%2 == 1 {
			return fmt.Errorf("goroutine %d: %w", i, boom)
		}
		return nil
	})
	for i := range seen {
		require.EqualValues(t, 1, seen[i].Load(), "fn(%d) calls", i)
	}
	require.ErrorIs(t, err, boom)
	require.ErrorContains(t, err, "goroutine 1")
	require.ErrorContains(t, err, "goroutine 3")
	require.NoError(t, kitrun.Parallel(3, func(int) error { return nil }))
}

func ExampleParallel() {
	var sum atomic.Int64
	err := kitrun.Parallel(4, func(i int) error {
		sum.Add(int64(i))
		return nil
	})
	fmt.Println(sum.Load(), err)
	// Output: 6 <nil>
}

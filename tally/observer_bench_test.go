package tally_test

import (
	"context"
	"testing"

	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/tally"
)

// BenchmarkObserver runs the hot path of BenchmarkHotPath with no Observer
// and with one that does nothing, in the same run: the cost of observing,
// and (nil) that of the observation code when nothing observes.
func BenchmarkObserver(b *testing.B) {
	b.Run("nil", func(b *testing.B) { benchFlush(b, tally.Options{}) })
	b.Run("noop", func(b *testing.B) { benchFlush(b, tally.Options{Observer: noop}) })
}

var noop = observe.Func(func(context.Context, observe.Event) {})

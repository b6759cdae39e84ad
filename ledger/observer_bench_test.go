package ledger_test

import (
	"context"
	"testing"

	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
)

// BenchmarkObserver runs the hot path of BenchmarkHotPath with no Observer
// and with one that does nothing, in the same run.
func BenchmarkObserver(b *testing.B) {
	b.Run("nil", func(b *testing.B) { benchCredit(b, ledger.Options{}) })
	b.Run("noop", func(b *testing.B) {
		benchCredit(b, ledger.Options{Observer: observe.Func(func(context.Context, observe.Event) {})})
	})
}

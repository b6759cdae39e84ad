package counterkit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/statestore"
	"github.com/counterkit/counterkit/tally"
)

// A store declared and left unset (a nil interface, or one holding a nil
// pointer) is refused where it is given, with crdt.ErrInvalidConfig, not
// a panic at the first call (review of stop 99 found the typed nil
// panicking).
func TestNilStoresRefused(t *testing.T) {
	ctx := context.Background()
	var sib *memory.Siblings
	var parts *memory.Partitions
	calls := map[string]func() error{
		"ledger.New": func() error { _, err := ledger.New(sib, "k", ledger.Options{Actor: "a"}); return err },
		"ledger.New, Options.Records": func() error {
			_, err := ledger.New(memory.NewSiblings(), "k", ledger.Options{Actor: "a", Records: sib})
			return err
		},
		"ledger.NewSharded": func() error { _, err := ledger.NewSharded(sib, "k", 2, ledger.Options{Actor: "a"}); return err },
		"ledger.NewBook": func() error {
			_, err := ledger.NewBook(sib, ledger.BookOptions{Options: ledger.Options{Actor: "a"}})
			return err
		},
		"bounded.Open":            func() error { _, err := bounded.Open(sib, "k", bounded.AccountOptions{Actor: "a"}); return err },
		"balance.New":             func() error { _, err := balance.New(parts, balance.Options{}); return err },
		"balance.NewTransactions": func() error { _, err := balance.NewTransactions(parts, balance.TxnOptions{}); return err },
		"deltalog.New":            func() error { _, err := deltalog.New(parts, deltalog.Options{}); return err },
		"tally.New":               func() error { _, err := tally.New[*tally.Sum](parts, "k", tally.Options{}); return err },
		"statestore.Load":         func() error { _, err := statestore.Load[gcounter.Counter](ctx, sib, "k"); return err },
		"statestore.Save": func() error {
			return statestore.Save(ctx, sib, "k", "a", &gcounter.Counter{})
		},
		"statestore.Update": func() error {
			_, err := statestore.Update[gcounter.Counter](ctx, sib, "k", "a", func(*gcounter.Counter) error { return nil })
			return err
		},
	}
	for name, call := range calls {
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: panicked: %v", name, p)
				}
			}()
			err = call()
		}()
		if !errors.Is(err, crdt.ErrInvalidConfig) {
			t.Errorf("%s: %v, want crdt.ErrInvalidConfig", name, err)
		}
	}
}

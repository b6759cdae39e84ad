package balance_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/crdt/crdttest"
	"github.com/counterkit/counterkit/timeid"
)

// TestAccountKeys: every Accounts method checks the account key with
// crdt.ValidateKey before touching the store.
func TestAccountKeys(t *testing.T) {
	require.Same(t, crdt.ErrInvalidKey, balance.ErrInvalidKey)
	ctx := context.Background()
	l, s, c := newAccounts(t)
	id := timeid.New(c.now)
	calls := map[string]func(key string) error{
		"Add": func(k string) error { return l.Add(ctx, k, id, 1) },
		"Apply": func(k string) error {
			var b balance.Batch
			b.Add("fine", id, -1)
			b.Add(k, id, 1)
			return l.Apply(ctx, &b)
		},
		"Balance":   func(k string) error { _, err := l.Balance(ctx, k); return err },
		"Conflicts": func(k string) error { _, err := l.Conflicts(ctx, k); return err },
		"Merge":     func(k string) error { _, err := l.Merge(ctx, k); return err },
		"Delete":    func(k string) error { return l.Delete(ctx, k) },
	}
	bad := crdttest.InvalidKeys()
	for name, f := range calls {
		for what, k := range bad {
			err := f(k)
			require.ErrorIs(t, err, balance.ErrInvalidKey, "%s, %s", name, what)
			require.ErrorIs(t, err, crdt.ErrInvalidIdentifier, "%s, %s", name, what)
			require.ErrorContains(t, err, "account key", "%s, %s", name, what)
		}
	}
	require.ErrorContains(t, l.Add(ctx, "a\x00b", id, 1), `account key "a\x00b" contains a control character`)
	require.Equal(t, storeCalls{}, s.Calls(), "bad keys never reach the store")
	for name, f := range calls {
		require.NoError(t, f(strings.Repeat("k", 255)), "%s: 255 bytes is the longest key", name)
		require.NoError(t, f("ключ"), "%s: UTF-8", name)
	}
}

// TestNilValues: a nil *Batch reads as empty and Apply of it writes
// nothing; adding to it, or decoding into a nil *Row, panics. (Row, Key,
// Kind, View and Conflict are plain values with no pointer methods that
// read; balance has no value type with a Merge method.)
func TestNilValues(t *testing.T) {
	var b *balance.Batch
	require.Zero(t, b.Len())
	l, s, c := newAccounts(t)
	require.NoError(t, l.Apply(context.Background(), b))
	require.NoError(t, l.Apply(context.Background(), &balance.Batch{}))
	require.Zero(t, s.Calls().Applies)
	require.Panics(t, func() { b.Add("a", timeid.New(c.now), 1) })
	good, err := balance.NormalRow(timeid.New(c.now), 1).MarshalBinary()
	require.NoError(t, err)
	var r *balance.Row
	require.Panics(t, func() { _ = r.UnmarshalBinary(good) })
}

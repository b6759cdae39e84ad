package tally_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tally"
)

// A send whose attempts go lost, refused, refused and which then stops at
// expires_at fails ambiguous_write (the lost attempt), unavailable (the
// last attempt was refused) and expired (the stop), for Flush, Retry and
// Abandon alike (SPEC.md 7.4, "Checks and sends"); the stop dropped
// unavailable (review of stop 101). Without the stop: ambiguous_write and
// unavailable.
func TestSendStoppedAfterARefusalKeepsItsKind(t *testing.T) {
	ctx := context.Background()
	for _, op := range []string{"flush", "retry", "abandon"} {
		for _, stop := range []bool{false, true} {
			now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
			var script []faulty.Fault // the unresolved write's sends (retry, abandon)
			attempts := 0             // sends of the call under test
			fs := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{Policy: faulty.Only(func(faulty.Call) faulty.Fault {
				if len(script) > 0 {
					f := script[0]
					script = script[1:]
					return f
				}
				attempts++
				if stop {
					now = now.Add(time.Microsecond) // each send moves the clock on
				}
				if attempts == 1 {
					return faulty.Lose
				}
				return faulty.Refuse
			}, faulty.MethodApply)})
			retries := 2
			if stop {
				retries = 5 // more than the clock leaves: the send stops
			}
			c, err := tally.New[*tally.Sum](fs, "k", tally.Options{Clock: func() time.Time { return now },
				Lifetime: 100 * time.Microsecond, Margin: time.Microsecond, MaxSkew: time.Microsecond,
				Grace: 3 * time.Microsecond, Retries: retries})
			require.NoError(t, err)
			m, err := c.NewMutator()
			require.NoError(t, err)
			add := func(s *tally.Sum) error { return s.Add(1) }
			if op != "flush" {
				script = slices.Repeat([]faulty.Fault{faulty.Lose}, retries+1)
				require.ErrorIs(t, m.Update(ctx, add), crdt.ErrAmbiguousWrite)
			}
			if stop {
				now = m.ExpiresAt().Add(-3 * time.Microsecond)
			}
			switch op {
			case "flush":
				err = m.Update(ctx, add)
			case "retry":
				err = m.Retry(ctx)
			case "abandon":
				err = m.Abandon(ctx)
			}
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "%s, stop %v", op, stop)
			require.ErrorIs(t, err, crdt.ErrUnavailable, "%s, stop %v: the last attempt was refused", op, stop)
			require.Equal(t, stop, errors.Is(err, crdt.ErrExpired), "%s, stop %v: %v", op, stop, err)
			require.Equal(t, 3, attempts, "%s, stop %v", op, stop)
		}
	}
}

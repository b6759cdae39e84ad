// Package retry holds what the write drivers (ledger, bounded) share about
// their write cycle (fetch, merge, put, retry): the incarnation a driver
// writes as, its state and pending write (Cycle), what a Put's error says
// (Classify), the retry budget and the backoff between attempts (Again).
package retry

import (
	"context"
	crand "crypto/rand"
	"encoding/base32"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/counterkit/counterkit/crdt"
)

// IncarnationLen is the length of an incarnation: 8 base32 characters, 40
// random bits.
const IncarnationLen = 8

// NewWriter returns actor's id for a new incarnation: actor, "~", and
// IncarnationLen random lowercase base32 characters. A driver writes its
// entry under it, so that a restarted process never continues (and forks)
// an entry whose writes may still be in flight.
func NewWriter(actor crdt.ActorID) crdt.ActorID {
	var b [5]byte
	_, _ = crand.Read(b[:]) // never fails (crypto/rand)
	return actor + "~" + crdt.ActorID(strings.ToLower(base32.StdEncoding.EncodeToString(b[:])))
}

// Limit is the longest wait before the retry that follows attempt
// (1-based): initial·2^(attempt−1), at most max; 0 when initial ≤ 0
// (waiting is off).
func Limit(initial, max time.Duration, attempt int) time.Duration {
	if initial <= 0 {
		return 0
	}
	limit := initial
	for i := 1; i < attempt && limit < max; i++ {
		limit *= 2
	}
	return min(limit, max)
}

// Wait sleeps a random duration in [0, Limit(initial, max, attempt)] ("full
// jitter", so that writers retrying together spread out), or until ctx is
// done, returning its error.
func Wait(ctx context.Context, initial, max time.Duration, attempt int) error {
	limit := Limit(initial, max, attempt)
	if err := ctx.Err(); err != nil || limit <= 0 {
		return err
	}
	t := time.NewTimer(rand.N(limit + 1))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Again ends an attempt of a write cycle whose write failed with err: nil
// when the cycle should run attempt+1, after waiting Wait's backoff; else
// the cycle's final error, naming what ("ledger \"k\": put"): err once
// retryCount more attempts than the first have run, or the context's
// error, with err, when it ends during the wait.
func Again(ctx context.Context, what string, err error, attempt, retryCount int, initial, max time.Duration) error {
	if attempt > retryCount {
		return fmt.Errorf("%s failed after %d attempts: %w", what, attempt, err)
	}
	if werr := Wait(ctx, initial, max, attempt); werr != nil {
		return fmt.Errorf("%s failed after %d attempts (%w): %w", what, attempt, werr, err)
	}
	return nil
}

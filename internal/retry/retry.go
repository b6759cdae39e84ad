// Package retry holds what the write drivers (ledger, bounded) share about
// their write cycle (fetch, merge, put, retry): the incarnation a driver
// writes as, its state and pending write (Cycle), what a Put's error says
// (Classify), the retry budget and the backoff between attempts (Again).
package retry

import (
	"context"
	crand "crypto/rand"
	"encoding/base32"
	"errors"
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

// NextWriter returns the incarnation after prev, a NewWriter id of actor:
// its characters read as a number in their byte order, plus one, so that
// one driver's incarnations sort in the order taken (SPEC.md 6.9). After
// the last one, or for another prev, it returns NewWriter(actor).
func NextWriter(actor, prev crdt.ActorID) crdt.ActorID {
	const digits = "234567abcdefghijklmnopqrstuvwxyz"
	s, ok := strings.CutPrefix(string(prev), string(actor)+"~")
	b := []byte(s)
	for i := len(b) - 1; ok && len(b) == IncarnationLen && strings.Trim(s, digits) == "" && i >= 0; i-- {
		d := strings.IndexByte(digits, b[i]) + 1
		if b[i] = digits[d%len(digits)]; d < len(digits) {
			return actor + "~" + crdt.ActorID(b)
		}
	}
	return NewWriter(actor)
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

// Put is what a write's error says about the write (store.Siblings,
// "Errors"): the rules the ledger and the bounded Account share.
type Put uint8

// The kinds of a write's outcome.
const (
	// Landed: no error.
	Landed Put = iota
	// Refused: crdt.ErrUnavailable, the write did not land; another
	// attempt may succeed.
	Refused
	// Invalid: the write was refused for what it is (too large, an
	// invalid key, a malformed token), and nothing was written (package
	// store, "Errors"); another attempt would fare no better.
	Invalid
	// Ambiguous: crdt.ErrAmbiguousWrite, or any other error (a done
	// context, an error the store did not classify): it may have landed.
	Ambiguous
)

// Classify returns the kind of a write's error.
func Classify(err error) Put {
	switch {
	case err == nil:
		return Landed
	case errors.Is(err, crdt.ErrAmbiguousWrite):
		return Ambiguous
	case errors.Is(err, crdt.ErrUnavailable):
		return Refused
	case errors.Is(err, crdt.ErrTooLarge), errors.Is(err, crdt.ErrInvalidKey), errors.Is(err, crdt.ErrCorruptEncoding):
		return Invalid
	}
	return Ambiguous
}

// AmbiguousErr returns err wrapping crdt.ErrAmbiguousWrite, unchanged if it
// already does.
func AmbiguousErr(err error) error {
	if err == nil || errors.Is(err, crdt.ErrAmbiguousWrite) {
		return err
	}
	return fmt.Errorf("%w: %w", crdt.ErrAmbiguousWrite, err)
}

// InDoubt is the error of a call that ends with err (a refusal, a failed
// read, its context's end) after an earlier attempt's write that may have
// landed: it wraps crdt.ErrAmbiguousWrite as well as err, since that
// earlier write does not become definite.
func InDoubt(err error, what string) error {
	if err == nil || errors.Is(err, crdt.ErrAmbiguousWrite) {
		return err
	}
	return fmt.Errorf("%w (%s may still land): %w", crdt.ErrAmbiguousWrite, what, err)
}

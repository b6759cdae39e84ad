package retry

import (
	"errors"
	"fmt"

	"github.com/counterkit/counterkit/crdt"
)

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
	// invalid key, a malformed token) before anything was sent; another
	// attempt would fare no better.
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

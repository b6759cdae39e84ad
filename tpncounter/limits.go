package tpncounter

import (
	"fmt"

	"github.com/counterkit/counterkit/crdt"
)

// Apply refuses (crdt.ErrTooLarge, state unchanged) a state whose encoding
// would exceed Options.MaxEncodedSize, and Merge one that would exceed
// crdt.DefaultMaxEncodedSize, so that every state can be written and read
// back. Rather than encode on every Apply, each half
// keeps a bound: its body's exact size at the last encoding or decoding
// (sized) plus a bound on what changed since (grown); only past the cap
// are the changed entries encoded (cached) and the bound made exact.

// envelopeRoom is what a cap keeps for the envelope around the bodies.
const envelopeRoom = 64

// bodyLimit is the largest body pair fitting the decoders' cap.
const bodyLimit = crdt.DefaultMaxEncodedSize - envelopeRoom

// applyBound bounds what one transaction adds to an encoding: its item, its
// list header, and a new entry's fields (or their integers growing).
func applyBound(actor crdt.ActorID, txn crdt.TxnID) int {
	return 1 + 3 + len(txn) + 9 + 2 + 8 + 3 + len(actor) + 3*9 + 2*3
}

// changeBound bounds what Compact, Retract or a retirement adds to one
// entry's encoding: its seq, total and forgot growing, and a retirement
// time (a retired entry loses its two lists).
const changeBound = 4 * 9

// entryBound bounds the encoding of e.
func entryBound(e *entry) int {
	if e.enc != nil {
		return len(e.enc)
	}
	return 1 + 3 + len(e.actor) + 3*9 + 2*3 + e.size()*(1+3+9) + len(e.ids)
}

// fitsCap reports whether halves (nil skipped), grown by extra bytes, still
// encode within limit body bytes, measuring them exactly when their bounds
// say no.
func fitsCap(limit, extra int, halves ...*GCounter) bool {
	bound := extra
	for _, g := range halves {
		if g != nil {
			bound += g.sized + g.grown
		}
	}
	if bound <= limit {
		return true
	}
	exact := extra
	for _, g := range halves {
		if g == nil {
			continue // a GCounter's missing debit half
		}
		n := g.encodedSize()
		g.sized, g.grown = n, 0
		exact += n
	}
	return exact <= limit
}

// tooLarge is the error of an Apply or Merge refused by the size cap.
func tooLarge(what string, limit int) error {
	return fmt.Errorf("%w: %s would make the encoding larger than %d bytes", crdt.ErrTooLarge, what, limit)
}

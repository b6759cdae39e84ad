package tpncounter

import (
	"fmt"

	"github.com/counterkit/counterkit/crdt"
)

// The size cap holds for states as they are built, not only when they are
// encoded: Apply and Merge refuse (crdt.ErrTooLarge, state unchanged) a
// state whose encoding would exceed crdt.DefaultMaxEncodedSize, so that
// every state can be written and read back.
//
// Checking an exact size on every Apply would cost an encoding; instead
// each half keeps a bound: the exact size of its body at its last encoding
// or decoding (sized) plus an upper bound on what changed since (grown).
// Only when the bound passes the cap are the changed entries encoded (the
// encodings are cached, see entry.encoded) and the bound made exact again.

// bodyLimit is the largest body, both halves together, that fits the cap
// with the envelope and the Counter's array header.
const bodyLimit = crdt.DefaultMaxEncodedSize - 64

// applyBound bounds how much one applied transaction can grow an encoding:
// the item ([txn, amount]: a header, the id with its header, the amount),
// its list's header growing past a boundary, and the entry's own header,
// actor, seq, total and forgot when the entry is new or their integers
// grow.
func applyBound(actor crdt.ActorID, txn crdt.TxnID) int {
	return 1 + 3 + len(txn) + 9 + 2 + 8 + 3 + len(actor) + 3*9 + 2*3
}

// entryBound bounds the encoding of e.
func entryBound(e *entry) int {
	if e.enc != nil {
		return len(e.enc)
	}
	return 1 + 3 + len(e.actor) + 3*9 + 2*3 + e.size()*(1+3+9) + len(e.ids)
}

// fitsCap reports whether halves (nil ones skipped), grown by at most extra bytes, still encode
// within the cap. When their bounds say they may not, it measures them
// exactly (encoding their changed entries) and decides on that.
func fitsCap(extra int, halves ...*GCounter) bool {
	bound := extra
	for _, g := range halves {
		if g != nil {
			bound += g.sized + g.grown
		}
	}
	if bound <= bodyLimit {
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
	return exact <= bodyLimit
}

// tooLarge is the error of an Apply or Merge refused by the size cap.
func tooLarge(what string) error {
	return fmt.Errorf("%w: %s would make the encoding larger than %d bytes", crdt.ErrTooLarge, what, crdt.DefaultMaxEncodedSize)
}

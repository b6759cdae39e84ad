package retry

import "bytes"

// Cycle is the pending-write bookkeeping of a write driver: Local, the
// state it last wrote (or attempted), and whether that Put was ambiguous.
// The rules, one set for the ledger and the bounded Account:
//
//  1. Read merges a fetch's siblings into Local in place (Ops.Absorb)
//     and returns it; one sibling equal to Seen is not merged again.
//  2. A pending write stays in Local, and so in every later read and
//     write, until a read shows the store holds it as Sent (held):
//     nothing it may have written is lost, and since a retry carries the
//     same entry versions, nothing is counted twice.
//  3. A Put that landed installs its state as Local (Landed); an ambiguous
//     one installs it as pending (Ambiguous); a state known not to have
//     landed (refused, invalid) goes through Undo, whose back function
//     takes the driver's own changes out of Local its own way (the ledger
//     retracts the transactions: newer versions of its entry; the Account
//     reinstalls its entry as last written).
//
// Beyond that the drivers differ in one rule, expressed by their Ops. An
// Ops that is also Apart (the ledger, which answers known transactions
// from the store's view alone) reads apart while a write is pending or
// Local is Ahead: the siblings go into a state of their own, which Read
// returns and Merged joins with Local; it becomes Local once it holds
// Local (Sent, while pending: a Local changed since stays Ahead). Else
// its Seen only says the bytes are merged. Any other Ops (the Account)
// reads in place; its Absorb tells if the store held all Local.
type Cycle[S comparable, O Ops[S]] struct {
	Ops     O
	Local   S      // the last state written, or attempted while Pending
	Sent    S      // while Pending: the state whose Put was ambiguous
	Pending bool   // Sent's Put was ambiguous; Local is Sent or newer
	Ahead   bool   // Local's own entry is newer than the store's
	Seen    []byte // the one sibling last merged or written, or nil
}

// Ops are a driver's operations on its state S.
type Ops[S any] interface {
	New() (S, error) // an empty state
	// Absorb merges encoded siblings into dst, reporting whether they held
	// everything dst held before (an Apart Ops may report false).
	Absorb(dst S, sibs [][]byte) (held bool, err error)
}

// Apart is an Ops that reads apart while a write is pending or Ahead.
type Apart[S any] interface {
	Holds(fetched, local S) bool // fetched holds all of local
	Join(dst, src S) error       // merges src into dst
}

// Read merges sibs, a fetch's siblings (rule 1), and returns the state
// read and whether it shows that the store holds Local (held is also set
// with an error from joining Local to a state that holds it).
func (c *Cycle[S, O]) Read(sibs [][]byte) (fetched S, held bool, err error) {
	var zero S
	if c.Local == zero {
		if c.Local, err = c.Ops.New(); err != nil {
			return zero, false, err
		}
	}
	apart, isApart := any(c.Ops).(Apart[S])
	if (c.Pending || c.Ahead) && isApart {
		if fetched, err = c.Ops.New(); err != nil {
			return zero, false, err
		}
		if _, err := c.Ops.Absorb(fetched, sibs); err != nil {
			return zero, false, err
		}
		sent := c.Local
		if c.Pending {
			sent = c.Sent
		}
		if !apart.Holds(fetched, sent) {
			return fetched, false, nil
		}
		c.Pending, c.Ahead = false, c.Local != sent // changed since: ahead
		if err := apart.Join(fetched, c.Local); err != nil {
			return zero, true, err
		}
		c.Local = fetched
		return fetched, true, nil
	}
	if len(sibs) == 1 && c.Seen != nil && bytes.Equal(sibs[0], c.Seen) {
		return c.Local, !isApart, nil
	}
	c.Seen = nil
	if held, err = c.Ops.Absorb(c.Local, sibs); err != nil {
		return zero, false, err
	}
	if held {
		c.Pending = false
	}
	if len(sibs) == 1 && (held || isApart) {
		c.Seen = sibs[0] // read-only (store.Siblings.Fetch)
	}
	return c.Local, held, nil
}

// Merged returns fetched, a state Read returned, with Local merged into
// it: fetched itself unless Read returned it apart.
func (c *Cycle[S, O]) Merged(fetched S) (S, error) {
	if fetched == c.Local {
		return fetched, nil
	}
	if err := any(c.Ops).(Apart[S]).Join(fetched, c.Local); err != nil {
		var zero S
		return zero, err
	}
	return fetched, nil
}

// Landed installs merged, whose encoding b the store now holds, as Local.
func (c *Cycle[S, O]) Landed(merged S, b []byte) {
	c.Local, c.Sent, c.Pending, c.Ahead, c.Seen = merged, *new(S), false, false, b
}

// Ambiguous installs merged, whose Put was ambiguous (or Local, when the
// driver no longer knows what of it was written), as a pending Local.
func (c *Cycle[S, O]) Ambiguous(merged S) {
	c.Local, c.Sent, c.Pending, c.Seen = merged, merged, true, nil
}

// Undo handles merged, a state known not to have landed. A state apart is
// dropped. When merged is Local, back takes the driver's changes out of it
// and reports whether there were any; if it fails, Local is dropped and
// the next Read starts again from the store.
func (c *Cycle[S, O]) Undo(merged S, back func(S) (changed bool, err error)) {
	if merged != c.Local {
		return
	}
	if changed, err := back(merged); err != nil {
		var zero S
		c.Local, c.Seen, c.Ahead = zero, nil, false
	} else if changed {
		c.Seen, c.Ahead = nil, true
	}
}

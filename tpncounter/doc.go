// Package tpncounter implements transactional counters: GCounter (a
// transactional grow-only counter, TGCounter) and Counter (the TPNCounter,
// a P and an N GCounter). Every update carries a client-chosen transaction
// id, so a retried credit or debit, on the same actor or another one, is
// recognised instead of counted twice. The types do no I/O; package ledger
// stores a Counter per key. SPEC.md section 6 is the specification.
//
// Each actor owns one entry per half (a sequence number, a folded total,
// its recent transactions and the ones it folded most recently); Merge
// keeps, per actor, the entry with the larger sequence number, so it is a
// join (with a Base, among states that keep SPEC.md 6.10's grace period;
// see GCounter.Merge). The value counts every distinct transaction once, by the copy of
// its owner (see Counter.Owner and Counter.Conflicts). A retry is
// recognised while the owner has made fewer than HistoryLength +
// FoldedLength later transactions (SPEC.md 6.8); with Options.TxnTime an
// older one is refused with crdt.ErrOutsideWindow.
//
// Retire, RetireAll and RetireAllAt replace the entries of actors that
// stopped writing by retired ones, and Fold moves entries retired before a
// cutoff into each half's Base (SPEC.md 6.10). Encoding: see
// FormatVersion. Values of GCounter and Counter are not safe for
// concurrent use.
package tpncounter

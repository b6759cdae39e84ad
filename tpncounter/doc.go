// Package tpncounter implements transactional counters: GCounter (a
// transactional grow-only counter, TGCounter) and Counter (the TPNCounter,
// a P and an N GCounter). Every update carries a client-chosen transaction
// id, so a retried credit or debit, on the same actor or another one, is
// recognised instead of counted twice. The types do no I/O; package ledger
// stores a Counter per key.
//
// Each actor owns one entry per half: a sequence number, a folded total,
// its recent transactions (the history) and the transactions it folded
// most recently. Only the owner changes its entry; Merge keeps, per actor,
// the entry with the larger sequence number, so Merge is a join
// (commutative, associative, idempotent). The value is counted when it is
// read: the folded totals plus every distinct transaction held only in
// histories, once, by the copy of its owner (SPEC.md 6.4). When two actors
// hold one transaction (it was delivered to both), the owner's copy counts
// and Owner names it; the others' copies go away as their holders compact.
//
// Apply(actor, txn, amount) answers Applied, Duplicate (held, same
// amount), DuplicateFolded (recognised through a folded record) or, for
// the same id with another amount, crdt.ErrConflictingTransaction with
// nothing changed; Merge accepts such a conflict and counts the owner's
// copy once (Conflicts lists them). Amounts are exact: Apply and Merge
// refuse (crdt.ErrOverflow, state unchanged) a value that would not fit an
// int64, and states larger than the limits (Options, MaxRetired,
// crdt.DefaultMaxEncodedSize) are refused with crdt.ErrTooLarge.
//
// # The window
//
// In SPEC.md 6.8's words: in any state, a retry of x by any actor is
// recognised (duplicate, duplicate_folded or superseded) while the actor
// whose copy counts (the owner) has made fewer than H + F later
// transactions in that state, whatever other actors hold or however long
// they stay idle (H = Options.HistoryLength, F = Options.FoldedLength).
// After that an untimed retry counts again; with Options.TxnTime (TimeUUID
// for version 1 UUID ids) it is refused with crdt.ErrOutsideWindow (the
// horizon, SPEC.md 6.8). The ledger's window is longer, a time kept by
// transaction records (SPEC.md 6.11).
//
// # Retirement
//
// Retire and RetireAll replace the entries of actors that stopped writing
// by retired ones (their sequence number and total), so that a state
// written by short-lived writers follows the actors that still write
// (SPEC.md 6.10). The ledger retires idle actors after recording their
// transactions (ledger.Options.RetireAfter). RetireAllAt also writes the
// retirement time, and Fold moves the entries retired before a cutoff
// (a grace period ago) into each half's Base, so that retired entries do
// not pile up either.
//
// Encoding: see FormatVersion and SPEC.md 6.7 (version 3 adds retired
// entries and UUID ids as 16 bytes, version 4 retirement times and bases;
// each is written only for states that need it; versions 1 and 2 are
// still read). Values of GCounter and
// Counter are not safe for concurrent use.
package tpncounter

// Package tpncounter implements transactional counters: GCounter (the
// TGCounter of seed 002) and Counter (the TPNCounter: a P and an N
// GCounter). Every update carries a client-chosen transaction id, so a
// retried credit or debit, on the same actor or another one, is recognised
// instead of counted twice.
//
// # Basics
//
// Each actor owns one entry per half: a sequence number, a folded total, its
// recent transactions in order (the history) and a record of the
// transactions it folded most recently. Only the owner changes its entry,
// and every change increments the sequence number. Merge keeps, per actor,
// the entry with the larger sequence number, so states form a
// join-semilattice: Merge is commutative, associative and idempotent, and
// it never modifies its argument. Two entries with one sequence number but
// different content can only come from an actor running twice at once (or
// restarting from a stale read); Merge then keeps the larger in a fixed
// total order so that it stays commutative. The ledger package prevents
// such forks by remembering its own last write.
//
// The value is counted when it is read, never when a transaction is applied
// (adding at apply time is how the Ruby gem double counts: merge cannot undo
// it). The value of a half is the sum of the folded totals plus the amount
// of every distinct transaction held only in histories, each once however
// many actors hold it; a transaction some actor has folded is counted by
// that actor's total, and a second fold of it is subtracted. An index from
// transaction id to its amount and holders keeps this exact and makes
// Apply's duplicate check, HasTransaction and Status O(1). The value is kept
// in a 128-bit accumulator: Apply and Merge refuse (crdt.ErrOverflow,
// state unchanged) any state whose value would not fit in an int64; P − N
// then always fits.
//
// Apply(actor, txn, amount) returns Applied, Duplicate (held in a history
// with the same amount, nothing changed) or DuplicateFolded (recognised
// through a folded record: already counted, nothing changed, and the retry
// is late). The same id with another amount or sign is
// crdt.ErrConflictingTransaction, on Apply and on Merge, state unchanged.
//
// # Folding and duplicates
//
// Before appending, Apply lets the actor compact its own entry (Compact does
// only this, and the ledger's Find calls it). With HistoryLength h
// (default 10; seed 002 names history_length without a default) and
// FoldedLength f (default h), the rules are, for a transaction x:
//
//  1. x is in the actor's history and another actor has folded it: drop x
//     without counting (that actor's total counts it).
//  2. x is in the actor's history and in the history of an actor with a
//     smaller id: drop x without counting (the smallest holder owns it; it
//     never drops x by this rule, so x is never dropped by every holder).
//  3. The oldest transactions beyond h are folded: added to the total and
//     moved to the folded record. Folding is safe while other actors still
//     hold x, because a folded x no longer counts through histories.
//  4. x is folded by the actor and by an actor with a smaller id: unfold it
//     (subtract it from the total); the smaller actor's fold counts it.
//  5. Folded ids beyond f are forgotten, oldest first, but only when no
//     other actor visibly holds x in a history or a folded record; until
//     then forgetting is deferred and the record grows.
//
// Every rule leaves the value of the actor's own view unchanged. Because
// states travel whole, any state that contains an actor's entry also
// contains (a successor of) everything that actor saw when it wrote it,
// which is what makes the "visibly" in rules 2 and 5 stick.
//
// This reproduces seed 002's example: with h = 3, after six credits of 10
// the value is 60, txn1 and txn2 have been folded and txn3..txn6 are in the
// history (h+1 entries, because Apply folds before it appends); a Find
// (Compact) folds txn3.
//
// # Caveats: the window
//
// Exactly-once holds for a transaction x under this assumption: every entry
// that holds x, in any state that will ever be merged, is merged into an
// actor's state before that actor forgets x. An actor forgets its x only
// after at least h + f later transactions of its own (and only when it sees
// no other holder). Concretely, with the ledger: a retry or a stale replica
// holding x must reach the store, and a ledger whose write of x was
// ambiguous must write again, before any holder of x has performed h + f
// further writes. The simulation tests check exactly-once under siblings,
// stale reads, lost acknowledgements and retries within this window, and
// show that outside it (a resend after x has left every history and folded
// record) x is counted twice; the library cannot detect that case, since it
// no longer knows x. Inside the window but after x was folded, a retry is
// recognised and reported as DuplicateFolded.
//
// No time window is implemented: the guarantee is stated in writes per
// actor, as the gem does. Choose h and f from the number of writes an
// actor may perform during the longest retry delay you allow.
//
// Sizes: an actor holds at most h+1 history entries after Apply, and its
// folded record exceeds f only by transactions other actors still hold.
// Limits are Options.MaxActors (default 4096) and MaxEntriesPerActor per
// entry; Apply, Merge and the decoder return crdt.ErrTooLarge beyond them,
// and MarshalBinary refuses encodings above crdt.DefaultMaxEncodedSize.
// Actor ids should be stable (one per ledger writer, not per process
// start): an actor's entry is never removed.
//
// Encoding: see FormatVersion. Values of GCounter and Counter are not safe
// for concurrent use.
package tpncounter

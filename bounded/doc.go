// Package bounded implements a bounded ("escrow") counter: a counter of
// credits and debits whose value never goes below a lower bound (zero by
// default), with no coordination on the path of a debit. It follows the
// bounded counter of AntidoteDB (Balegas et al., SRDS 2015).
//
// Every actor holds rights to part of the value: its credits, less its
// debits, plus what others transferred to it, less what it transferred.
// An actor debits within its own rights without asking anyone; Apply,
// Transfer and Retract refuse to go beyond them with an
// *InsufficientRightsError, changing nothing. Counter holds one entry per
// actor, written only by that actor; Merge keeps the newer entry per actor.
// SPEC.md 13.1 and 13.2 define the state and every operation.
//
// # The guarantee
//
// Value ≥ Bound in every state these operations and Merge build, provided
// every actor writes its own entry serially; the counter recognises a retry
// within Options.Window later transactions of a holder, and a transaction
// held by two actors counts twice (SPEC.md 13.3).
//
// Totals are exact. An operation that would take the value, or an actor's
// rights or received total, or its lifetime credits or debits, past int64
// (or further past it) fails with crdt.ErrOverflow. Writers that could not see each other may credit past
// it together: Merge and decoding keep such a state, readable and
// writable; Value then returns math.MaxInt64 and BigValue the exact value,
// and a debit that moves it back applies (SPEC.md 13.1, 13.2).
//
// # Account
//
// An Account stores a counter under one key of a store.Siblings, as
// ledger.Ledger stores a tpncounter: fetch, merge, apply, put with the
// fetch's token, retry. It writes as its own incarnation of its actor
// (Writer), so it never forks an entry. A debit beyond its rights becomes
// a request, which other accounts grant from their spare rights on their
// next write.
//
// A transaction acknowledged by an Account counts, and a retry on any
// account within AccountOptions.RetryWindow (24 hours) is a Duplicate,
// however many transactions came since: the Account records each
// transaction it lands under a key of its own (SPEC.md 13.5, "Records";
// IsRecordKey). crdt.ErrUnavailable means it
// did not land; crdt.ErrAmbiguousWrite means it may have: retry on the same
// Account. When a retry elsewhere made two actors hold a transaction with
// one amount, the larger holder takes its copy back, except a credit whose
// rights it spent or a copy held by an incarnation that is gone
// (Counter.Doubled). Rights of an incarnation that is gone stay in the
// value but no debit can use them; Close withdraws its request and gives
// its rights to the outstanding requests, then to an heir.
//
// SPEC.md 13.5 specifies the Account's rules; README.md has the design
// notes and limits; ExampleAccount shows two accounts moving rights.
// Counter values are not safe for concurrent use; an Account is.
package bounded

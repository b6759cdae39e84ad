// Package bounded implements a bounded ("escrow") counter: a counter of
// credits and debits whose value never goes below a lower bound (zero by
// default), with no coordination on the path of a debit. It follows the
// bounded counter of AntidoteDB (Balegas et al., "Extending Eventually
// Consistent Cloud Databases for Enforcing Numeric Invariants", SRDS 2015).
//
// Every actor holds rights to part of the value: its credits, less its
// debits, plus what others transferred to it, less what it transferred.
// An actor debits within its own rights without asking anyone; Apply,
// Transfer and Retract refuse to go beyond them with an
// *InsufficientRightsError (wrapping crdt.ErrInsufficientRights), changing
// nothing. Counter holds one entry per actor, written only by that actor;
// Merge keeps, per actor, the newer entry, so it is a join. SPEC.md 13.1
// and 13.2 define the state and every operation.
//
// # The guarantee
//
// In SPEC.md 13.3's words: every operation leaves its actor's rights ≥ 0,
// so rights stay ≥ 0 in every state built by these operations and Merge,
// and value ≥ L. This requires every actor to write its own entry serially
// (2.1): two versions of one entry with one seq can each spend the same
// rights, and Merge keeps only one of them. A retry of a transaction is
// recognised while some holder has made fewer than W (Options.Window,
// DefaultWindow) later transactions; a transaction held by two actors
// counts twice.
//
// # Account
//
// An Account stores a counter under one key of a store.Siblings (memory,
// the embedded store, Riak, Cassandra), as ledger.Ledger stores a
// tpncounter: fetch, merge, apply, put with the fetch's token, retry. It
// writes as its own incarnation of its actor (Writer), so it never forks an
// entry. A debit beyond its rights becomes a request, which other accounts
// grant from their spare rights on their next write; retry the debit later
// with the same id.
//
// Exactly-once. A transaction acknowledged by an Account counts; a retry
// on any account within the window is a Duplicate. An error wrapping
// crdt.ErrUnavailable means it did not land and will not; one wrapping
// crdt.ErrAmbiguousWrite means it may have: retry it on the same Account,
// which answers definitely. When a retry elsewhere made two actors hold a
// transaction, the larger holder takes its copy back, so it counts once,
// except a credit whose rights the larger holder already spent and a copy
// held by an incarnation that is gone; Counter.Doubled lists those.
//
// Rights held by an incarnation that is gone (a crash) stay in the value,
// so the bound still holds, but no debit can use them: nothing reclaims
// them safely. Close gives an account's rights to the outstanding
// requests, then to an heir.
//
// SPEC.md 13.5 specifies the Account's rules (requests, grants, taking
// copies back); README.md has the design notes, what a cycle costs and
// the limits. ExampleAccount shows two
// accounts moving rights. Counter values are not safe for concurrent use;
// an Account is.
package bounded

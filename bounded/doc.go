// Package bounded implements a bounded ("escrow") counter: a counter of
// credits and debits whose value never goes below a lower bound (zero by
// default), with no coordination on the path of a debit. It follows the
// bounded counter of AntidoteDB (Balegas et al., "Extending Eventually
// Consistent Cloud Databases for Enforcing Numeric Invariants", SRDS 2015).
//
// # Basics
//
// Every actor holds rights to part of the value. An actor may debit within
// its own rights without asking anyone; when it runs short, it asks, and an
// actor with spare rights transfers some to it. Rights come from credits
// (an actor's credits are its own rights) and from transfers.
//
// The state is one entry per actor, written only by that actor: its
// credits, its debits, the rights it has given each other actor (a total
// per recipient, grow-only), the rights it has asked for, its
// most recent transactions, and a sequence number that every change
// increments. Merge keeps, per actor, the entry with the larger sequence
// number, so it is a join: commutative, associative and idempotent. Two
// versions of one entry with one sequence number come only from an actor
// running twice at once; Merge then keeps the larger in a fixed order of
// their contents, and one version is lost (Account never forks, see below).
//
// With Bound L (≤ 0; Origin holds the −L rights a counter starts with),
// actor i's rights are
//
//	rights(i) = credits(i) − debits(i) + received(i) − given(i)   (+ −L for Origin)
//
// where received(i) sums what every other actor gave i. Summed over all
// actors, transfers cancel out: Σ rights = Value − L. Apply refuses a debit
// beyond the actor's rights, Transfer a transfer beyond them, and Retract
// the retraction of a credit beyond them, each with an
// *InsufficientRightsError wrapping crdt.ErrInsufficientRights that says
// what the actor may debit now; nothing changes. So every entry an actor
// writes leaves its rights ≥ 0 in the state it wrote it in.
//
// Why the value never goes below the bound: in any state, an actor's rights
// depend on its own entry and on what others gave it. States travel whole
// (every write carries everything its writer had seen), so a state holding
// an actor's entry also holds, for each other actor, an entry at least as
// new as the one the writer saw; what others gave only grows with their
// entries. So each actor's rights in any state are at least what they were
// when it wrote its entry, ≥ 0, and Value − L = Σ rights ≥ 0.
//
// This rests on each actor writing its own entry serially, as every
// counterkit type requires. An actor running twice at once (two replicas
// applying as one actor id without seeing each other) can spend its rights
// once in each version of its entry, and Merge keeps only one version: a
// transfer can be lost after its recipient spent it, taking the value
// below the bound. Account never does this: each Account writes as its own
// incarnation.
//
// # Transactions and the window
//
// Credits and debits carry client-chosen transaction ids. Apply of an id
// that some actor in the state holds among its recent transactions changes
// nothing (Duplicate), or is crdt.ErrConflictingTransaction when no copy
// has that amount. An actor keeps its Window most recent transactions
// (default 64): a retry, on any actor, is recognised while some holder has
// applied fewer than Window later transactions in the state the retry
// meets. Beyond that it counts again. Choose the window from the number of
// writes an actor may make during the longest retry delay you allow.
//
// Unlike package tpncounter, a transaction held by two actors counts twice:
// both copies are in the value. A tpncounter counts such a transaction
// once, by its owner's copy (the smallest actor id), and which copy owns it
// can change when a merge brings a copy not seen before. Rights cannot
// follow that change: two actors that each applied one credit without
// seeing the other could each spend it, and the value, counting it once,
// would go below the bound. So this package does not reuse tpncounter's
// entries; it keeps tpncounter's idea of retries recognised through recent
// transactions, and leaves cleaning up duplicates to the holders, under
// the rule below. Two copies arise only when a transaction is
// applied by two actors that did not see each other: a retry on another
// account while the first write is in doubt, or a stale read.
//
// # The driver: Account
//
// An Account stores one counter under a key of a store.Siblings (memory,
// the embedded store, Riak, Cassandra), as ledger.Ledger stores a
// tpncounter: each operation fetches the siblings, merges them with its own
// last write, applies, and puts the result with the fetch's token;
// ambiguous and refused Puts are retried. It writes its entry as an
// incarnation of its actor (Actor~<8 random characters>, Writer), so a
// restarted process never continues, and forks, an entry whose writes may
// still be in flight. Rights belong to the incarnation.
//
// A cycle costs what changed: the account keeps its state, merges each
// sibling into it without decoding the entries whose bytes equal its own
// (every entry keeps its encoding), changes only its own entry, and puts it
// back if the write is known not to have landed. BENCHMARKS.md has figures.
//
// A debit beyond the account's rights becomes a request: the account
// records in its entry that it asks for the shortfall (its asked total
// becomes what it has received plus the shortfall), writes that, and
// returns the *InsufficientRightsError. It asks nothing when the whole
// balance above the bound, as it sees it, is short of the shortfall: no one
// could grant it, and an account that asks holds rights back from others
// (below). Its next debit that goes through withdraws the request (asked
// comes down to what it has received). The grant policy: on every write
// (Credit, Debit, Transfer, Sync), an account gives its spare rights (its
// rights less AccountOptions.Keep) to the outstanding requests, in actor
// order, each up to what it still asks for; an account with an outstanding
// request of its own gives only to requesters with a smaller id, so rights
// gather where a debit can use them instead of going round among
// requesters. Two holders may grant one request at once; the requester then
// holds more than it asked for, which is harmless. The caller retries the debit later with the same id. An
// account that only holds rights should Sync now and then.
//
// Exactly-once. A transaction acknowledged by an Account (no error) is in
// the store and counts; a retry of it on any account within the window is
// a Duplicate. An error wrapping crdt.ErrUnavailable means the transaction
// did not land and will not (the account takes it back out of its state);
// when a refused attempt follows one that may have landed, or the
// account's pending write holds the transaction, the error wraps
// crdt.ErrAmbiguousWrite instead. A Put that ends with crdt.ErrAmbiguousWrite leaves the
// transaction in the account's state (it may have landed). When a retry
// elsewhere met a state without it, two actors hold it: on every write, an
// account takes back (Retract) each transaction of its window that an
// actor with a smaller id also holds, so it ends up counted once, by the
// smallest holder, which never takes its copy back (so some copy always
// survives). An account does not spend the rights of its own credits whose
// outcome it reported unknown until a later call with the same id confirms
// them, so taking one back never takes its rights below zero. What is not
// covered, and counts twice: a credit whose rights the larger holder has
// already spent (taking it back would break the bound), and a copy held by
// an incarnation that is gone before it sees the smaller holder's copy.
// Counter.Doubled lists the transactions two actors hold, so that an
// operator can find and settle these (a Sync returns the state).
// After crdt.ErrAmbiguousWrite, retry the same transaction on the same
// Account: it answers definitely. A retry refused on another account says
// nothing of the copy in doubt, which may still land.
//
// Package boundedtest runs the Account's behaviours over any
// store.Siblings. The memory store runs it here, the embedded store
// through store/storetest.Run, Riak on its test double and on a real Riak
// (RIAK_ADDR), and Cassandra on its model of Cassandra's rules and on a
// real cluster (CASSANDRA_HOSTS).
//
// # Actors that are gone
//
// Rights held by an incarnation stay with it. When its process ends
// without giving them away (a crash), they stay in the value, so the bound
// still holds, but no debit can use them: they are stuck, and no reclaim
// rule is provided, because taking rights from an incarnation safely needs
// to know that none of its writes is still in flight, which no store here
// can say. Close gives an account's rights away before it ends: to the
// outstanding requests, then to an heir (another account's Writer). Keep
// what an account holds small: credits bring rights to the account that
// applies them, and granting moves them to where debits are needed.
//
// # Limits and caveats
//
// Bound must be zero or negative: a counter starts at 0. An Account
// supports Bound 0 only: a negative bound's rights belong to its Origin,
// an actor id no Account writes as (each writes as a new incarnation), so
// they would be stuck from the start. A bound is part of
// the state; Merge refuses a state with another bound or origin
// (crdt.ErrInvalidConfig). Every total is an exact int64: Apply, Transfer,
// Request and Merge refuse (crdt.ErrOverflow, state unchanged) a state whose
// value, or some actor's rights or received total, would not fit. At most
// MaxActors entries (crdt.ErrTooLarge), and every Account adds one, as in
// the ledger. Encodings are at most MaxEncodedSize bytes; see FormatVersion
// and SPEC.md.
//
// Counter values are not safe for concurrent use; an Account is.
package bounded

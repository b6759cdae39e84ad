// Package ledger is the idempotent ledger: balances changed by Credit and
// Debit under client-chosen transaction ids, kept in any store.Siblings
// (memory, the embedded store, Riak, Cassandra) as a tpncounter.Counter per
// key plus one record per transaction.
//
// # The guarantee
//
// In SPEC.md 6.11's words: a call of transaction x, on any ledger of the
// account, made within W of the first time a call of x landed and after a
// call that applied it was acknowledged (or, for one answered
// ambiguous_write, after its record was written), is recognised, whatever
// the number of transactions, writers, restarts and retirements in
// between. W is Options.RetryWindow, 24 hours by default.
// After W, a retry the counter still holds is a duplicate, and so is a
// timed one whose time is still inside the window; else a timed
// transaction (Options.Counter.TxnTime) is refused with
// crdt.ErrOutsideWindow and an untimed one is applied as new. SPEC.md 6.11
// also lists what is not promised (concurrent copies, clocks, storage).
//
// # Basics
//
// A credit fetches and merges the key's siblings, reads the transaction's
// record, applies, puts with the fetch's token, then reads the record
// again and writes it (five store calls; SPEC.md 6.9, 6.11 step 3). Result.Landed is true only when the transaction is
// known to be stored; an error that may hide a landed write wraps
// crdt.ErrAmbiguousWrite (see Pending).
//
// Each Ledger value writes as its own incarnation of Options.Actor (Writer),
// so a write from an earlier process that lands late counts as what it is.
// Create one Ledger per key and actor when the process starts and reuse it.
// Others retire incarnations idle for Options.RetireAfter and fold them
// away Options.RetiredGrace later (SPEC.md 6.10), so occasional restarts
// and evictions leave nothing behind (an incarnation that wrote and left
// is dated by its records, of which ExpireAllRecords keeps those that
// date a live writer, reading the accounts from ExpireOptions.Accounts
// when the records have a store of their own; one whose records a
// records store's TTL deleted, or that stopped before its last record
// was written, is dated from the first sight of any ledger, which the
// ledgers keep in the store: SPEC.md 6.9, "Stored sightings"). In
// SPEC.md 6.9's words, an account
// "takes at most MaxActors (4096) new incarnations per RetireAfter (1
// hour)": one more fails with crdt.ErrTooLarge until the oldest has been
// idle that long; and each retired one stays in every write for
// RetiredGrace (SPEC.md 6.9 gives the sizes). Writers that come and go by
// the thousand a day belong on balance.Transactions.
//
// Book keeps many keys as one actor (at most MaxOpen ledgers open);
// Sharded spreads one account's writes over n sub-keys. Either way a
// key's state holds an entry for every writer of it, which each credit
// reads and writes: a credit's bytes grow with the account's writers
// (BENCHMARKS.md). A hot account, credited by many writers thousands of
// times a second, belongs on balance.Transactions, whose credit is one
// record read and one row write whatever the writers and the window (on
// Riak, which has no Partitions store, on Sharded).
//
// # Side effects
//
// A transaction delivered to two ledgers at once may be answered Applied by
// both, and counts once (but in the rare schedules SPEC.md 6.11 lists
// under "Concurrent copies"). To run a side effect once (a receipt, an
// email), do not choose a runner from Result: upsert it into an outbox
// keyed by the transaction id, leaving the entry's done flag alone, and let
// one consumer run each entry not done and mark it done, keeping done
// entries for as long as a retry can arrive: a retry is a Duplicate for as
// long as the counter holds it, which can outlast its records
// (ExampleResult_outbox).
//
// # Caveats
//
//   - A corrupt sibling stops every operation on the key
//     (crdt.ErrCorruptEncoding), writing nothing over it, and so does
//     another type's value (crdt.ErrTypeMismatch); a record that
//     does not decode (damaged, another type's value, a newer format)
//     stops only its own transaction's calls, with crdt.ErrCorruptEncoding
//     beside the decoder's sentinel. `counterkit find ledger
//     -drop-corrupt` writes the merge of the key's other siblings over a
//     corrupt one (what it held is lost; another type's value it keeps:
//     move that away first), or restore the key from a backup.
//   - An Update that could make the state larger than store.MaxValue
//     (8 MiB), less room for the write's own retirements (SPEC.md 6.9), is
//     refused with crdt.ErrTooLarge and changes nothing stored. Ledgers
//     that could not see each other can each write within that and leave
//     siblings whose union is above it: every Update of the key then
//     fails, and Find (or Land), run once per RetireAfter/8, writes it
//     again once retiring idle writers makes it fit (SPEC.md 6.11,
//     "Size").
//   - A Ledger deletes no record: each transaction keeps its key until
//     ExpireAllRecords, run on a timer over a store that lists its keys
//     (the embedded and memory stores; `counterkit gc records` on a
//     stopped embedded store), or a TTL on a records store of their own
//     (Options.Records: a Cassandra DB with SiblingsTTL, a Riak bucket on
//     an expiring backend, declared by riak.Options.Expiry) deletes it.
//     New refuses a store that expires values (store.Expiring) for the
//     accounts, where idle accounts would vanish. SPEC.md 6.11, "Storage",
//     states how long records must stay, and what a ledger still in doubt
//     after that counts twice.
package ledger

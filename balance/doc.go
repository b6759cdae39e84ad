// Package balance keeps account balances as rows in one wide partition per
// account (the "tombstone balance"), where an increment is one insert and
// a merge folds rows together with tombstones (T) and a sum row (S), never
// blocking increments. Accounts runs it on a store.Partitions.
//
// # Basics
//
// Add inserts one normal row (N) keyed by a client-chosen time-based id
// and its amount: one write, no read, and a retry rewrites the same row.
// Apply writes updates to several accounts in one atomic batch. Merge
// writes a tombstone for every row that counts, then a sum row holding
// their total, which makes those tombstones valid; later merges settle
// valid merges, delete the rows they cover, and collect invalid rows.
// Balance sums the rows that count, which Evaluate decides from the rows
// present. SPEC.md 9.1 defines the rows, 9.2 Evaluate and 9.3 the merge's
// steps. Amounts are exact int64 minor units. Add does not read, so
// updates may take a balance past int64: they are stored, and Balance and
// Accounts.Merge fail with crdt.ErrOverflow until debits bring it back
// (SPEC.md 9.2; Transactions.Merge goes on, 9.3 step 5).
//
// An update id reused with another amount is a second row (the amount is
// part of an N row's key): one amount counts and the others are reported
// as a Conflict. Within one Apply such a reuse is refused
// (crdt.ErrConflictingTransaction).
//
// Transactions credits and debits by transaction id (any caller-chosen
// string): one record read and one row write per call, whatever the
// account's rate, writers and history (and a read of the account's layout
// marker about once a second per Transactions). A retry counts once within
// RetryWindow (24 hours) of the merge that recorded the transaction, and
// copies written by writers that cannot see each other are one row
// (SPEC.md 9.4, with what is not promised). ExampleTransactions.
//
// # The guarantee
//
// Whatever merges ran, raced or crashed, the balance equals the sum of
// every N row ever added, one amount per reused id (SPEC.md 9.2), under
// the timing assumptions Options encodes and New checks (SPEC.md 9.3).
//
// # Caveats
//
//   - Exactly-once holds within the write window (Options.Window;
//     Transactions: RetryWindow, SPEC.md 9.4).
//   - A partition beyond MaxBacklogRows rows is neither read nor merged
//     (crdt.ErrTooLarge; a Transactions row partition: beyond
//     TxnOptions.BacklogRows), so keep merges running (SPEC.md 9.3 step 1).
//     At r updates a second merged every I, an Accounts partition holds
//     about r·(GCGrace + SettleGrace + 2·I) rows, reaching MaxRows at
//     about 150 updates a second with the defaults (SPEC.md 9.3,
//     "Capacity"); a Transactions row partition two per credit of about
//     the last SettleGrace plus two merge intervals (SPEC.md 9.4).
//   - On Cassandra an Accounts account takes about 50,000 settled updates
//     per gc_grace_seconds before its reads fail; Transactions' row
//     partitions have no such limit (SPEC.md 10.2).
//   - A row that does not decode stops the Balance and Conflicts of its
//     account and the merge of its partition (crdt.ErrCorruptEncoding,
//     naming the row; Transactions.Merge goes on with the other
//     partitions), until the partition is restored from a backup or the
//     account deleted (Transactions.Delete works on a damaged account).
//     A Transactions record that does not decode fails only the Apply and
//     Recorded of its own transaction (crdt.ErrCorruptEncoding), while
//     their clock's retry window is one the record was written in.
//   - Accounts.Merge merges an account in the store; Example_mergeTrace
//     shows it step by step.
package balance

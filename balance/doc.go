// Package balance keeps account balances as rows in one wide partition per
// account (the "tombstone balance"), where an increment is one insert and
// a merge folds rows together with tombstones (T) and a sum row (S), never
// blocking increments. Accounts runs it on a store.Partitions.
//
// # Basics
//
// Add inserts one normal row (N) keyed by a client-chosen time-based id
// and its amount: one write, no read, and a retry rewrites the same row.
// Apply writes updates to several accounts in one atomic batch (a
// transfer). Merge reads the partition, writes a tombstone for every row
// that counts, then a sum row holding their total, which makes those
// tombstones valid; later merges settle valid merges, delete the rows they
// cover, and collect invalid rows. Balance reads the partition and sums
// the rows that count, which Evaluate decides as a pure function of the
// rows present. SPEC.md 9.1 defines the rows, 9.2 Evaluate (the validity
// rules) and 9.3 the merge's steps. Amounts are exact int64 minor units: a
// sum that does not fit is an error wrapping crdt.ErrOverflow and nothing
// is written.
//
// An update id reused with another amount is not refused (Add does not
// read): the amount is part of an N row's key, so it is a second row, one
// amount counts (SPEC.md 9.2) and the others are reported as a Conflict
// (View.Conflicts, Accounts.Conflicts, MergeReport.Conflicts). Within one
// Apply such a reuse is refused (crdt.ErrConflictingTransaction).
//
// # The guarantee
//
// SPEC.md 9.2: "Whatever merges ran, raced, crashed between steps or
// settled, the balance equals the sum of every N row ever added", counting
// for an update id reused with other amounts only the amount that counts.
// SPEC.md 9.3: a crash between any two steps leaves the balance unchanged,
// and once an account is idle and every row is GCGrace old, two merges
// (the second at least SettleGrace + FutureSkew after the first) leave one
// row, however many merges raced before (the compaction bound).
//
// Settling and collection (steps 7 and 8) are safe under the timing
// assumptions SPEC.md 9.3 states, which Options encodes and New checks.
//
// # Caveats
//
//   - Update ids are chosen by the client; exactly-once holds within the
//     write window (Options.Window): Add refuses ids older than that.
//   - Rows are read as a snapshot (store.Partitions Snapshot); reads beyond
//     MaxRows rows are refused with crdt.ErrTooLarge.
//   - No type here has a Merge of values: Accounts.Merge merges an account
//     in the store. Row, Key, Kind, View, Conflict and MergeReport are plain
//     values; a nil *Batch reads as empty. Example_mergeTrace shows a merge
//     step by step.
package balance

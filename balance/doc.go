// Package balance keeps account balances as rows in one wide partition per
// account (the "tombstone balance"), where an increment is one insert and
// a merge folds rows together with tombstones (T) and a sum row (S), never
// blocking increments. Accounts runs it on a store.Partitions.
//
// # Basics
//
// Add inserts one normal row (N) keyed by a client-chosen time-based id and
// its amount: one write, no read, and a retry rewrites the same row. Merge reads the
// partition, writes a tombstone for every row that counts, then a sum row
// holding their total, which makes those tombstones valid; later merges
// delete the rows a valid merge covers (step 7) and collect invalid rows
// (step 8). Balance reads the partition and sums the rows that count.
// Apply writes updates to several accounts in one atomic batch (a
// transfer). Amounts are exact int64 minor units: a sum that does not fit
// is an error wrapping crdt.ErrOverflow and nothing is written.
//
// # Validity rules
//
// Evaluate decides what counts, as a pure function of the rows present:
//
//  1. The N rows of one update id are one update. If they carry more than
//     one amount (the id was reused with another amount), the smallest
//     starts live and the others count nothing.
//  2. S rows are taken in ascending (updateid, version) order; a sum row's
//     update id is its merge's version, which the merge picks later than
//     every sum row it covers, so a merge is always taken after the merges
//     it builds on.
//  3. An S row that is not settled is valid iff it has exactly Covers
//     tombstones of its version, each naming (by kind, update id and
//     amount) a row that is live at that moment, and the amounts add up to
//     its own amount. Then those rows stop being live and the S row becomes
//     live. Otherwise it is invalid and counts nothing.
//  4. A settled S row is valid; its tombstones still cancel any live row
//     they name (a retried increment that came back after deletion). A
//     tombstone naming an N row cancels the update id's live row whatever
//     its amount: the merge already counted the id, with the tombstone's
//     amount.
//  5. The balance is the sum of the live rows.
//
// # Reused update ids
//
// Add cannot refuse an update id reused with another amount: it does not
// read. Because the amount is part of an N row's key, the second write is
// a second row, never an overwrite, and rules 1 and 4 decide which amount
// counts: the amount a settled merge counted for the id, else the smallest
// amount present. So each update id counts once, with one of its amounts;
// the others count nothing and are reported as a Conflict, by
// View.Conflicts, Accounts.Conflicts and MergeReport.Conflicts, until a merge
// deletes them (that merge's report lists them). A retry with the same
// amount rewrites its own row and changes nothing. Which amount counts can
// change once while no settled merge has counted the id: a smaller amount
// arriving after a merge read the larger one voids that (unsettled) merge;
// after settling, the amount is fixed. Rows written before format version 2
// have no amount in their key, so a legacy writer reusing an id overwrites
// the row as before (the store keeps the last write).
//
// Consequences. Racing merges that read overlapping rows both write sum
// rows; the one first in (updateid, version) order takes the rows and the
// other finds them gone, so exactly one is valid and only the winner's
// tombstones count. A chain of merges (merge 2 covering merge 1's S row)
// is valid link by link while merge 1's tombstones keep cancelling merge 1's
// rows. Because a valid unsettled S row's amount equals the sum of the rows
// it cancels, whichever merges turn out valid, the balance equals the sum,
// over the update ids, of the amount that counts for each (rules 1 and 4):
// writing tombstones or a sum row, crashing between any two steps, or
// losing a race never changes it. The only step that asserts
// validity without that check is settling.
//
// # Settling and collection, and the timing they assume
//
// Step 7 settles a valid sum row once its update id is SettleGrace old: in
// one atomic batch it deletes the rows the merge covers and rewrites the S
// row with Settled set. A covered sum row that still has tombstones of its
// own is not deleted (it is marked settled instead): those tombstones
// cancel retries of the rows it covered, and deleting the sum row would
// orphan them and let a late retry count twice. Step 8 deletes invalid T and
// S rows whose update id is GCGrace old (10 minutes by default), and the
// GCGrace-old tombstones whose targets step 7 of the same merge deletes.
// Step 7 takes merges in validation order and counts those tombstones as
// gone already, so it deletes a covered sum row whose tombstones all go in
// this merge: a chain of merges, however long (racing merges build one),
// is taken apart in one merge, not one level per merge. Step 8's batch is
// written after step 7's, so a tombstone never goes before its target.
//
// # Compaction bound
//
// Once no operation on an account is running and every row's update id is
// GCGrace old (GCGrace + FutureSkew after the last write), at most two
// merges leave it with one row: the first, which settles every valid merge
// and deletes everything below the sum rows that still count (and, if more
// than one row counts, writes a merge of them), and a second, SettleGrace
// + FutureSkew later, which settles that merge and deletes what it
// covers. An idle account's reads therefore cost one row, whatever burst
// of merges came before.
//
// Both steps are safe under these assumptions, which Options encodes:
//
//   - Clocks agree within FutureSkew, and a write lands within
//     SafetyMargin − 2·FutureSkew of being sent.
//   - A merge that has run longer than MaxMerge stops before writing its
//     sum row (ErrSlowMerge), so a sum row lands within MaxMerge +
//     SafetyMargin of its version's time.
//   - SettleGrace ≥ MaxMerge + SafetyMargin: when a sum row is settled, any
//     racing sum row that would precede it (it has an earlier version) has
//     already landed and was seen by the settling merge's read, so the
//     settled row really is the valid one and cannot later be displaced —
//     a slow loser that arrives after the deletion finds its rows gone and
//     is invalid.
//   - GCGrace ≥ Window + SafetyMargin and ≥ SettleGrace: a tombstone is
//     only collected once no retry of the row it cancels can still be
//     accepted, and an invalid sum row only once it can no longer become
//     valid.
//
// # Caveats
//
//   - Update ids are chosen by the client (an id made by the server would
//     make a retried increment insert twice). Exactly-once holds within
//     the write window: Add refuses ids older than Window.
//   - Reusing an id with a different amount is not refused (see Reused
//     update ids): one amount counts and the conflict is reported. Within
//     one Apply it is refused (crdt.ErrConflictingTransaction). An unsettled
//     merge's tombstone names its target's amount, so it never cancels a
//     row it did not read.
//   - Rows must be read as a snapshot (one store.Partitions Snapshot,
//     isolated from every batch); merges keep partitions small, and reads
//     beyond MaxRows rows are refused.
//   - Write timestamps come from the writing process's clock: the
//     guarantees that a settled sum row replaces the unsettled one and
//     that a merge's deletes shadow the rows it read assume the clocks of
//     the processes writing one account agree within FutureSkew.
//   - Step 4 (the version) is taken after the read, as late as possible;
//     the merge's start time bounds its running time.
//   - Row, Key, Kind, View, Conflict and MergeReport are plain values. A
//     nil *Batch reads as empty (Len, Accounts.Apply); Batch.Add on nil
//     panics. No type here has a Merge of values: Accounts.Merge merges an
//     account in the store.
package balance

// Package deltalog implements log-structured counters with windowed merge
// cells: every update is its own cell, keyed by a client-chosen time-based
// UUID (package timeid), and old cells are folded into merge cells without
// any coordination between the processes that merge.
//
// # Basics
//
// A counter is an ordered set of cells, newest first. Add writes one regular
// cell (one store write, no read) at the update's ID, so a retry after a lost
// acknowledgement rewrites the same cell and is counted once. An ID older
// than now − Window, or more than FutureSkew ahead of now, is refused with
// crdt.ErrOutsideWindow.
//
// Merge picks the newest cell older than now − Window − SafetyMargin and
// writes a merge cell at that cell's ID holding the exact sum (and count,
// min, max, sum of squares) of everything at or below it, which includes the
// previous merge cell. Read sums the cells from the newest down to and
// including the first merge cell; what lies below is covered by that merge
// cell and is ignored, and Compact deletes it with one range delete.
//
// What is guaranteed: every merge cell holds the sum of all regular cells at
// or below its ID, whichever process wrote it and whatever else ran at the
// same time. That is because no cell that old can still arrive (the write
// window), so the merge reads a settled suffix of the log; two merges at one
// cutoff write identical content, and merges at different cutoffs each stay
// correct. Hence a read returns exactly the sum of acknowledged updates, and
// a compacted log reads the same as an uncompacted one. Apply writes updates
// to several counters in one atomic store batch (a transfer). Deleting a
// counter is one partition delete.
//
// The pure type Log is the same model without I/O: a CRDT whose merge is
// cell-set union, used by tests and by callers that replicate logs.
//
// # Caveats
//
//   - Exactly-once holds only within the write window: a retry whose ID has
//     aged out is refused (ErrOutsideWindow), never silently double counted.
//   - Timing assumptions (see Options): client clocks agree within
//     FutureSkew; an accepted write lands within SafetyMargin − 2·FutureSkew;
//     a scan finishes within MaxScan (enforced: slower scans fail with
//     ErrSlowScan); CompactGrace ≥ MaxScan + SafetyMargin (enforced), so no
//     scan that began before a merge cell existed is still reading when
//     Compact deletes what it covers.
//   - Reusing an ID with a different delta cannot be detected by a
//     write-only increment; the store keeps the last write. Log.Insert,
//     which has both cells, refuses it with crdt.ErrConflictingTransaction.
//   - Values and aggregates are exact: an int64 sum that does not fit fails
//     the read or merge with crdt.ErrOverflow (and a merge then writes
//     nothing). The sum of squares is exact in 128 bits. The aggregates are
//     a stats.Summary (Stats is an alias), the type tally's Stats holds:
//     the mean and variance are exact quotients rounded once, the same
//     doubles a tally of the same values gives (SPEC.md 7.1).
//   - Read cost is the number of updates since the newest merge cell plus
//     one; without merges it grows with the counter's whole history.
//
// IDs are ordered as Cassandra orders timeuuid values (timeid.ID.Compare):
// timestamp first, then the clock-sequence and node bytes compared as
// signed bytes.
package deltalog

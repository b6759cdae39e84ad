// Package deltalog implements log-structured counters with windowed merge
// cells: every update is its own cell, keyed by a client-chosen time-based
// UUID (package timeid), and old cells are folded into merge cells without
// any coordination between the processes that merge.
//
// # Basics
//
// A counter is an ordered set of cells, newest first. Add writes one regular
// cell (one store write, no read) at the update's ID, so a retry after a lost
// acknowledgement rewrites the same cell and is counted once; Apply writes
// updates to several counters in one atomic store batch (a transfer). An ID
// older than now − Window, or more than FutureSkew ahead of now, is refused
// with crdt.ErrOutsideWindow.
//
// Merge writes a merge cell at the newest cell older than now − Window −
// SafetyMargin, holding the exact sum (and count, min, max, sum of squares)
// of everything at or below it, the previous merge cell included. Read sums
// the cells from the newest down to and including the first merge cell;
// Compact deletes what lies below with one range delete, and Delete removes
// a counter with one partition delete.
//
// What is guaranteed: every merge cell holds the sum of all regular cells at
// or below its ID, whichever process wrote it and whatever else ran at the
// same time, because no cell that old can still arrive (the write window):
// a merge reads a settled suffix of the log. Hence a read returns exactly
// the sum of acknowledged updates, and a compacted log reads the same as an
// uncompacted one.
//
// The pure type Log is the same model without I/O: a CRDT whose merge is
// cell-set union, used by tests and by callers that replicate logs.
//
// # Caveats
//
//   - Exactly-once holds only within the write window: a retry whose ID has
//     aged out is refused, never silently double counted.
//   - The guarantees rest on the timing assumptions Options states; New
//     enforces the ones it can check, and a scan slower than MaxScan fails
//     with ErrSlowScan.
//   - Reusing an ID with a different delta cannot be detected by a
//     write-only increment (see Add); Log.Insert refuses it.
//   - Values and aggregates are exact (Stats): an int64 sum that does not
//     fit fails the read or merge with crdt.ErrOverflow, and a merge then
//     writes nothing.
//   - Read cost is the number of updates since the newest merge cell plus
//     one; without merges it grows with the counter's whole history.
//
// IDs are ordered as Cassandra orders timeuuid values (timeid.ID.Compare).
package deltalog

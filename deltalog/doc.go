// Package deltalog implements log-structured counters with windowed merge
// cells: every update is its own cell, keyed by a client-chosen time-based
// UUID (package timeid), and old cells are folded into merge cells without
// any coordination between the processes that merge.
//
// # Basics
//
// A counter is an ordered set of cells, newest first. Add writes one
// regular cell (one write, no read) at the update's ID, so a retry
// rewrites the same cell; Apply writes updates to several counters in one
// atomic batch. An ID older than now − Window, or more than FutureSkew
// ahead, is refused with crdt.ErrOutsideWindow.
//
// Merge writes a merge cell at the newest cell older than now − Window −
// SafetyMargin, holding the exact sum and Stats of everything at or below
// it. Read sums the cells from the newest down to the first merge cell;
// Compact deletes what lies below with one range delete.
//
// Log is the same model without I/O, a CRDT whose merge is cell-set union
// (SPEC.md 8.3).
//
// # The guarantee
//
// A read returns exactly the sum of acknowledged updates, compacted or
// not, under the timing assumptions of SPEC.md 8.4 (the guarantee is in
// 8.5): a retry whose ID has aged out of the window is refused, never
// counted twice. A read or merge scan slower than MaxScan fails with
// ErrSlowScan.
//
// # Caveats
//
//   - Reusing an ID with another delta is not detected by Add.
//   - A sum past int64 reads math.MaxInt64 or math.MinInt64 (Reading;
//     Stats.BigSum is exact) and is not merged into a cell until it fits;
//     a sum of squares past 2^128 only grows, so no later merge fits and
//     read cost grows with every update.
//   - A Read may see part of an Apply that runs at the same time.
//   - Delete shadows every cell written at or before its timestamp, which
//     the deleting process's clock gives: an update a process whose clock
//     is behind acknowledges within FutureSkew after a Delete may be lost,
//     and one a process whose clock is ahead acknowledged within
//     FutureSkew before it may outlive it; after its clock steps back,
//     by up to the step (SPEC.md 10.2). A merge cell never brings a
//     deleted total back (SPEC.md 8.5, Merge).
//   - Read cost is the number of updates since the newest merge cell, plus
//     one: about rate × (Window + SafetyMargin + merge interval). Merge and
//     Compact scan only the cells older than their cutoffs, about rate ×
//     merge interval. Past what a scan reads within MaxScan (SPEC.md 8.4,
//     "Capacity") Read fails with ErrSlowScan while merges go on, and
//     reads come back once the rate falls. After a merger outage a merge
//     that meets more than Options.MaxMergeCells cells drains them, oldest
//     first, in scans of at most that many (SPEC.md 8.5, "Drain").
//   - A cell that does not decode stops Read of its counter, and Merge
//     and Compact when their scans reach it (crdt.ErrCorruptEncoding,
//     naming it; a merge that drains merges below it instead: SPEC.md
//     8.5), until it is restored from a backup or the counter
//     deleted (Delete). A merge cell whose id is not older than now −
//     Window (no merge under SPEC.md 8.4's assumptions writes it: 8.5)
//     stops Read likewise, until the readers' clocks pass it; a merger
//     whose clock ran that far ahead may have hidden updates acknowledged
//     below it, for good.
package deltalog

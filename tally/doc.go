// Package tally implements an order-free sharded counter: every mutator
// owns one shard row and overwrites it with its full state, so an update
// costs one write and no read; readers combine all shards; a GC folds
// shards that can no longer change into a single tally row with one
// idempotent last-write-wins batch.
//
// # Basics
//
// A counter counts an Aggregate: Sum (exact int64), Min, Max, Stats (exact
// moments) or Distinct (a HyperLogLog sketch, about 0.81% standard error),
// as SPEC.md 7.1 and 7.2 define them and their encodings.
//
// A Mutator's Flush writes its whole state as its shard row until its
// expires_at (birth + Options.Lifetime); Read adds the shards the tally
// has not folded, and GC folds expired ones in one batch that shadows
// them (SPEC.md 7.4; Mutator lists the outcomes).
//
// # The guarantee
//
// Every acknowledged update is counted exactly once under the clock
// assumptions of SPEC.md 7.5 (Grace ≥ 3·MaxSkew); if they fail an update
// can be lost, never counted twice.
//
// # Caveats
//
//   - An ambiguous write not resolved before expires_at stays unknown, and
//     so does one whose Mutator is lost with its process: only that
//     Mutator can Retry or Abandon it. Updates applied again through a new
//     Mutator count twice if the lost write landed; resolve a write in
//     doubt before the process stops.
//   - Read cost is linear in the live shards; GC bounds it and needs a
//     complete read (every replica up), folding at most 9,999 shards a
//     batch, whole groups of one expires_at: 10,000 mutators of a key
//     born in one microsecond can never fold, and GC fails with
//     crdt.ErrTooLarge (SPEC.md 7.4). Reads above Options.MaxRows rows,
//     GC's too, are refused with crdt.ErrTooLarge: a GC with a larger
//     MaxRows folds such a counter.
//   - A Mutator's Sum or Stats past int64 (or a sum of squares past 2^128)
//     is an error (crdt.ErrOverflow); shards that pass it together read
//     exactly (Sum.BigValue, stats.Summary.Fits) and GC leaves them
//     unfolded while the tally would not fit. A sum of squares only grows:
//     a Stats counter past 2^128 never folds again, so every later
//     mutator leaves a shard and reads pass MaxRows in the end (with
//     observations below 2^32 in magnitude, that takes 2^64 of them).
//   - Mutator ids must never be reused for a key (Options.NewID).
//   - A row that does not decode, or a tally folded through a time after
//     the reader's clock (which no GC writes), stops Read and GC
//     (crdt.ErrCorruptEncoding); mutators, which never read, go on
//     writing.
//
// # Storage
//
// A counter is one partition of a store.Partitions: a row per mutator
// (ShardRowKey) and the tally row (TallyRowKey), as SPEC.md 10.2 lays out;
// GC never deletes what it could not read. Package tally/tallytest runs the
// behaviours over any store.Partitions; ExampleCounter shows a counter end
// to end.
package tally

// Package tally implements an order-free sharded counter: every mutator
// owns one shard row and overwrites it with its full state, so an update
// costs one write and no read; readers combine all shards; a GC folds
// shards that can no longer change into a single tally row with one
// idempotent last-write-wins batch.
//
// # Basics
//
// A counter counts an Aggregate, a commutative monoid: Sum (exact int64),
// Min, Max, Stats (count, sum, min, max and sum of squares, all exact;
// mean and variance derived) and Distinct (a HyperLogLog sketch). Combine is
// the monoid operation; it need not be idempotent, because the design
// combines each shard exactly once.
//
// A Mutator has an id, a state and expires_at = birth + Lifetime. Stage
// changes its state in memory; Flush writes the whole state as its shard
// row (Update does both). Many updates staged before one Flush cost one
// write. A mutator refuses new updates once its clock reads expires_at −
// Margin, with crdt.ErrExpired; the caller takes a fresh mutator.
//
// Read combines the tally with every shard whose expires_at is above the
// tally's folded-through time T. Shards at or below T are already inside
// the tally, so a stale reader that sees a new tally and an old copy of a
// folded shard skips the shard: stale reads can miss updates, never count
// one twice.
//
// # Counted once: the write rule
//
// A mutator never changes its committed state before the store confirms
// it. Flush encodes the candidate state and writes it with a write
// timestamp that is strictly greater than every earlier one of the mutator
// and below expires_at. If the store's answer is ambiguous (a timeout that
// may have landed) the mutator resends the same bytes at the same timestamp,
// up to Retries times; under last-write-wins that is idempotent. If the
// outcome is still unknown, Flush returns crdt.ErrAmbiguousWrite and keeps
// the write pending; the mutator refuses new updates until the caller
// resolves it:
//
//   - Retry resends the pending state: once it succeeds the updates count,
//     once, however many of the attempts landed (the row holds a state, not
//     a delta);
//   - Abandon writes the last acknowledged state at a greater timestamp:
//     once it succeeds the updates are not counted, now or later, even if an
//     earlier attempt lands late, because it has a smaller timestamp.
//
// A definite failure (crdt.ErrUnavailable, expiry before sending) discards
// the staged updates: they are not counted and may be applied again. So a
// caller that re-applies an update only after a definite failure or a
// successful Abandon counts it exactly once. (A mutator that changed its
// memory before saving would count a retried update twice after a timeout
// that had landed; the simulation test shows that variant failing.)
//
// # GC, and why concurrent GCs compose
//
// GC reads completely (every acknowledged write; consistency ALL), folds
// every shard with T < expires_at < now − Grace into the tally, and writes
// one atomic batch: the new tally, with T' = the largest expires_at folded,
// and a delete of each folded shard, all at write timestamp T'.
//
// The contract: every process's clock is within MaxSkew of true time, a
// write the store has not applied within MaxSkew of being sent never will
// be, and Grace ≥ 3·MaxSkew. A mutator sends nothing once its own clock
// reaches expires_at E, so its last send is before true time E + MaxSkew and
// lands before E + 2·MaxSkew. A GC folds the shard only when its clock
// reads after E + Grace, that is after true time E + Grace − MaxSkew ≥ E +
// 2·MaxSkew. So the complete read sees the shard's final state, and it
// includes every update the mutator ever acknowledged.
//
// The batch's timestamp beats every write of every shard it folds: each
// such write has a timestamp below its shard's expires_at ≤ T', and a delete
// at T' shadows every write at or below T'. A late or repeated shard write
// therefore never resurrects a folded shard.
//
// Two GCs compose because the tally is a function of T alone: by induction,
// the tally folded through T is the combination of the final states of
// exactly the shards with expires_at ≤ T. (A GC starts from the latest
// tally T, which holds exactly the shards ≤ T; the shards in (T, T'] are
// final, still present — a batch that deleted them would have written a
// tally above T, which the complete read would have shown — and each is
// folded once.) Two GCs that reach the same T' write byte-identical batches
// at the same timestamp (encodings are deterministic, Distinct is kept
// canonical); a GC that reaches a greater T' writes at a greater timestamp
// and its tally includes everything the other folded. Replaying a batch,
// late or twice, changes nothing. A GC that crashes before its batch lands
// wrote nothing.
//
// # Caveats
//
//   - MaxSkew is an assumption, not checked. If a clock runs further off, or
//     a write stays in flight longer, an acknowledged update can be lost
//     (folded before it landed) — never counted twice.
//   - An ambiguous write not resolved before the mutator's expires_at stays
//     unknown: Retry and Abandon then return crdt.ErrAmbiguousWrite wrapped
//     together with crdt.ErrExpired.
//   - Read cost is linear in the number of live shards (at most the
//     mutators created in the last Lifetime + Grace, plus those waiting for a
//     GC). Run GC to bound it; a read after GC costs one tally plus the live
//     shards.
//   - GC needs a complete read, so it fails while any replica is down. GC is
//     only an optimisation, so it can wait.
//   - Mutator ids must never be reused for a key; the default is a random
//     UUID.
//   - Sum and Stats overflow is an error (crdt.ErrOverflow) from the update,
//     the read or the GC that would overflow, never a wrap-around. With
//     mixed signs, a read may overflow on an intermediate sum even though the
//     final one fits.
//   - Distinct is a HyperLogLog estimate (about 0.81% standard error at
//     precision 14), not an exact count.
//
// # Storage
//
// A counter lives in one partition of a store.Partitions, named by the
// counter key, with one row per mutator shard and one tally row:
//
//	row key             value
//	's' + mutator id    the encoded Shard of that mutator (ShardRowKey)
//	't'                 the encoded Tally (TallyRowKey); absent before the first GC
//
// A flush is one Apply of a single put of the mutator's row at its write
// timestamp; a GC is one Apply, atomic within the partition, of the tally
// put and a delete of every folded shard row, all at GCBatch.WriteTS
// (GCBatch.Mutations). Read takes a store.ReadAny snapshot, ReadComplete,
// PlanGC and GC a store.ReadComplete one, refused above Options.MaxRows
// rows. Every row is validated on read: an unknown row key, a value that
// does not decode, or a shard row holding another mutator's shard is an
// error wrapping crdt.ErrCorruptEncoding, and GC never deletes what it
// could not read. Package tally/tallytest runs the counter's behaviours
// against any store.Partitions; adapters/memory.Partitions is the
// in-memory one.
package tally

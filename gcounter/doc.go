// Package gcounter implements a grow-only counter (G-Counter), the simplest
// state-based counter CRDT: each actor owns one non-negative count that only
// Increment raises, the value is their sum, and Merge takes the per-actor
// maximum (SPEC.md 4.2; its guarantees in 4.3).
//
// Arithmetic is exact. Increment rejects negative amounts with
// crdt.ErrInvalidAmount; an increment whose total would pass math.MaxInt64
// fails with crdt.ErrOverflow, and a new actor past MaxActors with
// crdt.ErrTooLarge (Merge and the decoder accept up to MaxMergedActors).
// Every failing call leaves the counter unchanged. A merge of writers that
// could not see each other may pass math.MaxInt64: the counter stays
// readable and mergeable, Value returns math.MaxInt64 and BigValue the
// exact sum (SPEC.md 4.1). Value
// is O(1) (the total is cached); Increment on a known actor is O(1) and
// does not allocate; Merge is O(actors of the other counter).
//
// MarshalBinary writes format version 2, canonical and bounded by
// MaxEncodedSize bytes and MaxMergedActors rows (SPEC.md 4.4); version 1 still
// decodes. BENCHMARKS.md compares its size with version 1 and JSON
// (BenchmarkCodecVsJSON).
//
// A G-Counter is not idempotent under retries (SPEC.md 4.3): retry by
// re-sending the saved state, never by incrementing again, or use
// tpncounter. Each actor must apply its own increments serially, and actor
// ids should be reused across restarts: every distinct actor costs space
// forever.
package gcounter

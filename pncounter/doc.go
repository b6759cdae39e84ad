// Package pncounter implements a positive-negative counter (PN-Counter): a
// Counter holds P, a gcounter.Counter of increments, and N, one of
// decrement magnitudes; its value is P − N, and Merge merges the halves
// separately, all or nothing (SPEC.md 5.2; guarantees as gcounter's, 5.3).
//
// Arithmetic is exact. An update that would take the actor's count or the
// value past int64 fails with crdt.ErrOverflow (unless it moves an
// out-of-range value back); a half's total may pass it, and a Merge of
// writers that could not see each other may take the value past it, which
// the counter keeps readable and mergeable (Value, BigValue; SPEC.md 5.2). math.MinInt64 is rejected with
// crdt.ErrInvalidAmount; every other int64 delta is accepted. Every failing
// call, Merge included, leaves the counter unchanged.
//
// MarshalBinary writes format version 2, canonical and bounded by
// MaxEncodedSize bytes, MaxRows rows and gcounter.MaxMergedActors actors per half
// (SPEC.md 5.4); version 1 still decodes. BENCHMARKS.md compares its size
// (BenchmarkCodecVsJSON).
//
// Like a G-Counter it is not idempotent under retries: retry by re-sending
// the saved state, or use tpncounter, which remembers transaction ids. The
// value may go negative; the type enforces no floor (see package bounded).
// Actor ids should be reused across restarts, since each one costs space
// forever.
package pncounter

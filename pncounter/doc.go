// Package pncounter implements a positive-negative counter (PN-Counter): a
// counter that goes up and down, built from two grow-only counters.
//
// # Basics
//
// A Counter holds P, a gcounter.Counter of increments, and N, a
// gcounter.Counter of decrements; its value is P − N. Increment with a
// negative amount, Decrement and Apply all raise exactly one actor's entry in
// exactly one half, so each half only grows. Merge merges the halves
// separately (per-actor maximum), which makes it commutative, associative
// and idempotent: replicas that have seen the same updates in any order, any
// number of times, hold equal states, equal values and equal encodings.
//
// Arithmetic is exact. Each half's total is at most math.MaxInt64 (an update
// or merge that would pass it fails with crdt.ErrOverflow), so P − N always
// fits in int64. math.MinInt64 is rejected with crdt.ErrInvalidAmount
// because its magnitude does not fit in N; every other int64 delta is
// accepted. Every failing call, Merge included, leaves the counter
// unchanged.
//
// # Encoding
//
// MarshalBinary writes format version 2, one front-coded row [shared,
// suffix, p, n] per actor in byte order; the encoding is canonical and
// decoding is bounded by MaxEncodedSize bytes, MaxRows rows and
// gcounter.MaxActors actors per half. Version 1 still decodes. On 1,000
// actors actor-0 … actor-999, version 2 is 0.44× version 1 and 0.34× the
// natural JSON form (BenchmarkCodecVsJSON).
//
// # Caveats
//
// A PN-Counter is not idempotent under retries: re-applying an update whose
// save looked failed counts it twice. Retry by re-sending the same saved
// state, or use tpncounter, which remembers transaction ids. The value may
// go negative; the type enforces no floor (a balance that must stay
// non-negative needs coordination that no CRDT provides). Actor ids should
// be reused across restarts, since each one costs space forever.
package pncounter

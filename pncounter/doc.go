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
// MarshalBinary writes format version 2: the crdt envelope
// ["pncounter", 2, rows] with one row [shared, suffix, p, n] per actor,
// sorted by actor. The actor ids are front-coded (a row stores how many
// bytes it shares with the previous id, cut back to a character boundary,
// and the rest), so each id is written once and common prefixes once per
// change. The encoding is canonical: equal counters give equal bytes, and
// the decoder rejects any other spelling of the same state. Decoding is
// bounded by MaxEncodedSize bytes, MaxRows rows and gcounter.MaxActors
// actors per half.
//
// UnmarshalBinary also reads version 1, ["pncounter", 1, [P, N]] with each
// half in the gcounter version 1 body format, so states stored by earlier releases
// stay readable; they are written back as version 2. On a 1,000-actor
// counter with ids actor-0 … actor-999, version 2 is 0.44× the size of
// version 1 and 0.34× the natural JSON form (BenchmarkCodecVsJSON).
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

// Package gcounter implements a grow-only counter (G-Counter), the simplest
// state-based counter CRDT.
//
// # Basics
//
// Each actor owns one non-negative count and only ever raises it with
// Increment. The counter's value is the sum of all counts. Merge takes, for
// every actor, the larger of the two counts; because an actor's count only
// grows, the larger one already contains everything the smaller one saw.
// Merge is therefore commutative, associative and idempotent, and replicas
// that have seen the same increments (in any order, any number of times over
// any gossip path) hold equal states with equal values and equal encodings.
//
// Arithmetic is exact. Increment rejects negative amounts with
// crdt.ErrInvalidAmount; any increment or merge whose total would pass
// math.MaxInt64 fails with crdt.ErrOverflow. Every failing call leaves the
// counter unchanged. Value is O(1) (the total is cached); Increment on a
// known actor is O(1) and does not allocate; Merge is O(actors of the
// other counter).
//
// # Encoding
//
// MarshalBinary writes format version 2: the crdt envelope
// ["gcounter", 2, rows] with one row [shared, suffix, count] per actor,
// sorted by actor byte order, counts positive. The actor ids are
// front-coded (a row stores how many bytes it shares with the previous id,
// cut back to a character boundary, and the rest), so common prefixes are
// written once per change. The encoding is canonical: equal counters give
// equal bytes, and UnmarshalBinary rejects any other spelling of the same
// state (a shared length other than the encoder's, unsorted or duplicate
// actors, zero counts) and totals that overflow, with
// crdt.ErrCorruptEncoding. Inputs are bounded by MaxEncodedSize bytes and
// MaxActors rows (crdt.ErrTooLarge, checked on the array header before any
// row is read).
//
// UnmarshalBinary also reads version 1, ["gcounter", 1, pairs] with one
// [actor, count] pair per actor, so states stored by earlier releases stay
// readable; they are written back as version 2. On a 1,000-actor counter
// with ids actor-0 … actor-999, version 2 is 0.57× the size of version 1
// and 0.46× the natural JSON form {"actor": count, ...}; with random
// 32-hex-digit ids, which share almost no prefix, it is 0.89× JSON
// (BenchmarkCodecVsJSON, BENCHMARKS.md).
//
// # Caveats
//
// A G-Counter is not idempotent under retries: an Increment that is applied,
// saved, and then retried because the save looked failed counts twice. Retry
// by re-sending the same saved state (which merges idempotently), never by
// incrementing again, or use a transaction-tracking counter (tpncounter)
// when callers cannot tell whether their write landed.
//
// Each actor must apply its own increments serially, and actor ids should be
// reused across restarts: every distinct actor costs space forever, and a
// counter refuses to grow past MaxActors with crdt.ErrTooLarge rather than
// produce a state no decoder would accept.
package gcounter

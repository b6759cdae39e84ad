// Package riaktest provides FakeServer, a TEST DOUBLE for Riak KV: an
// in-process server on a loopback port that speaks Riak's protocol-buffers
// wire format, so that code using the real riak-go-client can be tested
// without a Riak cluster. It is not a database and must never be used as
// one.
//
// # Basics
//
// The double models the parts of Riak that counterkit's correctness
// depends on, on one simulated node:
//
//   - Causality with dotted version vectors (Riak 2.x with
//     dvv_enabled=true). Every stored sibling carries the dot of the write
//     that made it; the object's causal context is a version vector
//     (VClock) encoded into the opaque vclock bytes. A put supersedes
//     exactly the siblings its vclock covers; the rest stay as siblings.
//     Dots are never reused, even after a key is reaped (Riak's per-key
//     epochs), so a stale vclock never covers a newer write.
//   - The bucket properties allow_mult and last_write_wins, per bucket type
//     and per bucket, including the data loss they cause when set unsafely.
//   - Deletes as tombstone writes; a key left with only tombstones is reaped
//     at once.
//   - Fault injection (InjectFault, SetFaultFunc): refuse before applying,
//     close before applying, drop the response after applying, close after
//     applying, answer "timeout" after applying.
//   - Request counting per operation (Requests) and a histogram of the
//     sibling counts fetches returned (SiblingHistogram).
//
// Tests of the double compare it with a plain model of Riak's causal
// semantics through the real client.
//
// # Caveats
//
// No replication, quorums (r, w, pr, pw are ignored), read repair, handoff,
// vclock pruning, secondary indexes, links, MapReduce, search, Riak data
// types, strong consistency, security or TLS. Behaviour that depends on
// those needs a real Riak.
//
// The vclock encoding (VClockTag) is local to this package and may change
// only with its golden files under testdata/.
package riaktest

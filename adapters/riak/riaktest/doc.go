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
//   - Causality with version vectors encoded into the opaque vclock bytes
//     (VClock). Every stored sibling carries the dot of the write that made
//     it. Dots are never reused, even after a key is reaped (Riak's per-key
//     epochs), so a stale vclock never covers a newer write.
//   - Bucket types as in Riak: a type created with CreateBucketType has
//     dvv_enabled=true (unless BucketTypeProps.DisableDVV), and a put
//     supersedes exactly the siblings its vclock covers; the "default"
//     type has dvv_enabled=false, and only a
//     put whose vclock descends the stored object supersedes anything: any
//     other put keeps every stored sibling next to its own
//     (riak_object:merge_contents with DVV off), so on a contended key
//     siblings pile up until a write that has seen all of them lands.
//   - max_siblings (Options.MaxSiblings, 100 by default): a write that
//     would leave more siblings is refused with "{too_many_siblings,N}",
//     as by Riak.
//   - The bucket properties allow_mult and last_write_wins, per bucket type
//     and per bucket, including the data loss they cause when set unsafely,
//     and Riak's validation of them (below).
//   - Deletes as tombstone writes. A key left with only tombstones is kept
//     for Options.DeleteMode (3s, Riak's delete_mode) and then reaped;
//     meanwhile a fetch answers "not found", or with deletedvclock the
//     tombstone's vclock.
//   - Fault injection (InjectFault, SetFaultFunc): refuse before applying,
//     close before applying, drop the response after applying, close after
//     applying, answer "timeout" after applying.
//   - Request counting per operation (Requests) and a histogram of the
//     sibling counts fetches returned (SiblingHistogram).
//
// Tests of the double compare it with a plain model of Riak's causal
// semantics through the real client.
//
// # Reference
//
// README.md lists the bucket-property rules the double validates as Riak
// KV 3.2 does (with Riak's messages), its error messages, and what it
// does not model (replication, quorums, read repair, handoff, vclock
// pruning, indexes, data types, strong consistency, security): behaviour
// that depends on those needs a real Riak.
//
// The vclock bytes are the double's own small binary format (see
// VClock.MarshalBinary), opaque to clients as Riak's are, strictly
// validated when a client sends them back, and pinned by the golden files
// under testdata/vclock.
package riaktest

// Package riaktest provides FakeServer, a TEST DOUBLE for Riak KV: an
// in-process server on a loopback port that speaks Riak's protocol-buffers
// wire format, so that code using the real riak-go-client can be tested
// without a Riak cluster. It is not a database and must never be used as
// one.
//
// On one simulated node it models what counterkit's correctness depends
// on: causality with version vectors (VClock) and dotted siblings, bucket
// types with and without dvv_enabled, max_siblings, the allow_mult and
// last_write_wins properties with Riak's validation of them, deletes as
// tombstones reaped after delete_mode, fault injection (InjectFault,
// SetFaultFunc) and request counting (Requests, SiblingHistogram). Tests
// of the double compare it with a plain model of Riak's causal semantics
// through the real client.
//
// README.md details each of these, the bucket-property rules it validates
// as Riak KV 3.2 does (with Riak's messages), and what it does not model
// (replication, quorums, read repair, handoff, vclock pruning, indexes,
// data types, strong consistency, security): behaviour that depends on
// those needs a real Riak. The vclock bytes are the double's own binary
// format (VClock.MarshalBinary), pinned by the golden files under
// testdata/vclock.
package riaktest

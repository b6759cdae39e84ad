// Package riaktest provides FakeServer, a TEST DOUBLE for Riak KV: an
// in-process server on a loopback port that speaks Riak's protocol-buffers
// wire format, so that code using the real riak-go-client can be tested
// without a Riak cluster. It is not a database and must never be used as
// one.
//
// On one simulated node it models causality with version vectors (VClock)
// and dotted siblings, bucket types with and without dvv_enabled,
// max_siblings, allow_mult and last_write_wins with Riak's validation,
// tombstones reaped after delete_mode, fault injection (InjectFault,
// SetFaultFunc) and request counting (Requests, SiblingHistogram).
// README.md details each, and what it does not model (replication,
// quorums, read repair and more): behaviour that depends on those needs a
// real Riak. The vclock bytes are the double's own format
// (VClock.MarshalBinary), pinned by the golden files under testdata/vclock.
package riaktest

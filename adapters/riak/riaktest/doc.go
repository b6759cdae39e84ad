// Package riaktest provides FakeServer, a TEST DOUBLE for Riak KV: an
// in-process server on a loopback port that speaks Riak's protocol-buffers
// wire format, so that code using the real riak-go-client can be tested
// without a Riak cluster. It is not a database and must never be used as
// one.
//
// README.md lists what it models on its one simulated node (causality,
// bucket types and properties, quorums, max_siblings, deletes, backend expiry,
// faults, request counts) and what it does not. The vclock bytes are the double's own
// format (VClock.MarshalBinary), pinned by the golden files under
// testdata/vclock.
package riaktest

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
// # Bucket properties
//
// Setting bucket or bucket-type properties (RpbSetBucketReq,
// RpbSetBucketTypeReq) is validated as Riak KV 3.2 validates it
// (riak_kv_bucket:validate/4), for the rules the properties a client can
// send over protocol buffers can break. Refused properties change nothing,
// and the answer is Riak's message, "Invalid bucket properties: " followed
// by the list of {property,reason} pairs:
//
//   - last_write_wins=true on a bucket or type whose type has
//     dvv_enabled=true (every created type, unless
//     BucketTypeProps.DisableDVV): {dvv_enabled,"If last_write_wins is
//     true, dvv_enabled must be false"}. Riak checks the merged result, so
//     the default type (dvv_enabled=false) accepts last_write_wins=true,
//     and dvv_enabled cannot be set over protocol buffers at all;
//   - in a data-type bucket type (Datatype set): allow_mult=false
//     ("Data Type buckets must be allow_mult=true") and a different
//     datatype ("NAME not supported for bucket datatype property");
//   - in any other created type: setting datatype ("`datatype` must not be
//     defined."), consistent=true ("Write once buckets must not be
//     consistent=true", Riak's text) or write_once=true ("Cannot set
//     existing bucket type to `write_once`");
//   - in the default type: consistent=true ("cannot update consistent
//     property") or write_once=true ("cannot update write_once property");
//     datatype is accepted there, as by Riak;
//   - anywhere: n_val, old_vclock, big_vclock or small_vclock of 0
//     ({n_val,not_integer}); r, w or rw of 0, and any quorum property
//     (pr, r, w, pw, dw, rw) set to the protocol's "default" value
//     ({r,not_valid_quorum}: riak_kv_bucket's is_quorum takes a positive
//     count, one, quorum or all; pr, pw and dw may also be 0).
//
// Updating the "default" type itself is refused with "Invalid bucket
// properties: no_default_update", a type that does not exist with
// "Invalid bucket properties: not_active" (riak_core_claimant finds it
// inactive), a bucket of a type that does not exist with "No bucket-type
// named 'NAME'", reading such a type's properties with "Invalid bucket
// type: <<"NAME">>", and resetting a bucket always succeeds, as in
// Riak. CreateBucketType refuses, with the same reasons,
// LastWriteWins without DisableDVV and a Datatype without AllowMult.
//
// Not validated: node_confirms, hll_precision, the datatype name at creation, commit
// hooks, and the rules for strongly consistent and write_once types (the
// double creates neither). Riak prints the error list with Erlang's ~p,
// which breaks a long list over several lines; the double prints it on
// one, in the order Riak lists the errors. Match on the reason, not on the
// whole message.
//
// # Caveats
//
// No replication, quorums (valid r, w, pr, pw values are accepted and
// ignored), read repair, handoff, vclock pruning, secondary indexes,
// links, MapReduce, search, Riak data types, strong consistency, security
// or TLS. Behaviour that depends on
// those needs a real Riak.
//
// Error messages are Riak's where counterkit classifies them ("overload",
// "timeout", "{too_many_siblings,N}"), with one exception: a malformed
// vclock is refused with "bad vclock: ...", where Riak's protocol-buffers
// handler crashes, answers "Error processing incoming message: ..." with
// the crash (naming riak_object's decode_vclock) and closes the
// connection. A fetch, store or delete in a bucket type that does not
// exist is refused with "no_type", as by Riak (riak_client's check of the
// bucket gets {error,no_type}, which riak_kv_pb_object prints).
// dvv_enabled is fixed when a type is created (BucketTypeProps.DisableDVV),
// as it is over protocol buffers in Riak.
//
// The vclock bytes are the double's own small binary format (see
// VClock.MarshalBinary), opaque to clients as Riak's are, strictly
// validated when a client sends them back, and pinned by the golden files
// under testdata/vclock.
package riaktest

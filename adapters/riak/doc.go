// Package riak is a store.Siblings in Riak KV, through
// github.com/basho/riak-go-client: the storage under counterkit's ledgers
// (package ledger) and state-based counters (package statestore). It is its
// own Go module so that the core module does not depend on the Riak driver.
//
// # Basics
//
// Riak keeps concurrent writes to one key as siblings and hands out a vclock
// describing what a reader has seen. That is exactly the store.Siblings
// shape, and Siblings maps it one to one, with no Riak data types:
//
//   - Siblings.Fetch returns every live sibling and the vclock, framed
//     with a checksum, as the store.Token; Put and Delete refuse a token
//     Fetch did not make (crdt.ErrCorruptEncoding) before sending anything.
//   - Siblings.Put stores a value with that vclock. In a bucket type with
//     dotted version vectors (DVV), Riak drops every sibling the vclock
//     covers, so a write that merged what it read collapses the siblings,
//     and the sibling count stays bounded by the number of writers that
//     raced since the last write. A write that raced with it becomes a
//     sibling and is merged by the next reader: it is never lost.
//   - Values are stored as given, with content type ContentType
//     ("application/x-counterkit+msgpack"); Fetch refuses a sibling with
//     any other content type.
//
// The adapter stores bytes and maps errors; it never decodes a value. The
// counter packages on top are the validating clients: ledger.New(siblings,
// key, ...) decodes the siblings and joins them with the CRDT Merge (which
// is commutative, associative and idempotent, so the order and duplication
// of siblings do not matter), and statestore.Load, Update and Save do the
// same for gcounter and pncounter states over any store.Siblings, this one
// included.
//
// Without contention, one ledger update (or statestore.Update) costs
// exactly one fetch and one store.
//
// The bucket must keep siblings: allow_mult=true and last_write_wins=false.
// NewSiblings refuses (crdt.ErrMisconfiguredStore) a bucket that would
// silently drop concurrent writes (see CheckBucket).
//
// # Bucket types
//
// Use a bucket type created once per cluster with
//
//	riak admin bucket-type create counterkit '{"props":{"allow_mult":true}}'
//	riak admin bucket-type activate counterkit
//
// (`riak-admin` on Riak 2.x), and Options{BucketType: "counterkit"}. Types
// created this way have DVV (dvv_enabled=true), which the sibling collapse
// above relies on. Riak's "default" bucket type has allow_mult=false and
// dvv_enabled=false; ConfigureBucket can fix the former but not the
// latter. Counts stay correct there (no write is lost, merges are
// idempotent), but Riak drops the siblings a write has read only when the
// write's vclock descends everything stored: a write that raced with
// another keeps them all next to its own value. On a contended key siblings
// pile up until a write lands with nothing in between, and past
// max_siblings (100 by default) Riak refuses every write that would add one
// (Siblings reports that as crdt.ErrUnavailable without resending, and
// the ledger fetches again). So NewSiblings refuses the default type
// (ErrDefaultBucketType) unless Options.AllowDefaultBucketType is set.
//
// # Failures and retries
//
// A failed request is resent up to Options.RetryCount times. That is safe
// because every write the counter packages make carries a complete CRDT
// state and the ledger deduplicates transactions by id: a resent write that
// had already landed adds, at worst, an identical sibling that the next
// merge absorbs. The final error tells the caller what is known:
//
//   - nil: the write landed;
//   - crdt.ErrUnavailable: no attempt landed (refused with "overload" or
//     "too_many_siblings", no node reachable, context done before sending);
//   - crdt.ErrAmbiguousWrite: some attempt may have landed (a timeout, a
//     connection reset after sending, Riak's "timeout" error, context done
//     while waiting). Repeating the operation later is safe.
//
// Every error is an *Error that wraps the sentinel and the driver error, so
// errors.Is(err, crdt.ErrAmbiguousWrite) and errors.As(err, &riakErr) both
// work. Every method takes a context; the riak-go-client has none, so a
// call whose context ends returns at once while the driver finishes (or
// times out) the request in the background.
//
// Build clusters with NewCluster, or with ClusterOptions.ExecutionAttempts
// = 1: the driver's own retries would hide which failures were ambiguous.
// NewCluster also makes sure a node answers before returning: the driver's
// first command on a fresh cluster otherwise spins until one does (see
// NewCluster).
//
// ledger.Ledger retries whole fetch-merge-put cycles on top of this (its
// own RetryCount). The two compose: the store's resends cost no fetch, the
// Ledger's re-reads collapse the siblings a landed resend left. Set
// RetryCount to NoRetries to leave retries to the Ledger alone.
//
// # Deletes
//
// Siblings.Delete sends a Riak delete with the vclock from Fetch. Riak writes a
// tombstone that supersedes what the vclock covers (with DVV; see Put for
// the default type). A write that was concurrent with the delete survives
// as a sibling next to the tombstone; Fetch skips tombstones, and the next
// Put (whose token covers them) removes them. So a delete never loses a
// racing update, but the racing writer's state (which it read before the
// delete) comes back whole: delete a ledger only when no one writes to it.
// Riak reaps a key whose only siblings are tombstones after delete_mode (3s
// by default); until then Fetch returns no siblings and the tombstones'
// vclock, so a Put replaces them. A nil token covers nothing: Delete then
// sends nothing.
//
// # Caveats
//
//   - Sibling counts grow with the number of writers racing between two
//     writes (and, in the default bucket type, further until a quiet
//     write); Fetch refuses more than MaxSiblings. Actor ids must be stable
//     (see crdt.ActorID), or the states inside the siblings grow instead.
//   - Exactly-once holds within the ledger's transaction window, as in the
//     core; Riak adds no guarantee of its own.
//   - write_once buckets cannot be detected through riak-go-client v1.7.0's
//     bucket properties; do not use them.
//   - Strongly consistent buckets (consistent=true) are refused.
//   - The riak-go-client logs some connection errors to standard error.
//
// Package riaktest holds FakeServer, an in-process test double that speaks
// Riak's protocol-buffers wire format; the store.Siblings conformance kit
// and the ledger and statestore behaviours run against it in CI and
// against a real Riak when RIAK_ADDR is set (see README.md).
package riak

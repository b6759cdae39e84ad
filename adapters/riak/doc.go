// Package riak is a store.Siblings (and store.SiblingDeleter) in Riak KV,
// through github.com/basho/riak-go-client: the storage under counterkit's
// ledgers (package ledger), bounded accounts and state-based counters
// (package statestore). It is its own Go module so that the core module
// does not depend on the Riak driver.
//
// Riak keeps concurrent writes to one key as siblings and hands out a
// vclock describing what a reader has seen: that is the store.Siblings
// shape, and Siblings maps it one to one, with no Riak data types.
// Siblings.Fetch returns every live sibling and the vclock as the
// store.Token; Siblings.Put stores a value with that vclock, which in a
// bucket type with dotted version vectors drops every sibling the vclock
// covers. Values are stored as given (ContentType); the adapter never
// decodes one: the counter packages on top decode and merge them.
//
// # The guarantee
//
// The adapter implements SPEC.md 10.1: a Put supersedes exactly the
// siblings its token covers, and siblings written concurrently survive
// alongside it. NewSiblings (CheckBucket) refuses a bucket that would not
// keep siblings, and Riak's default bucket type (ErrDefaultBucketType,
// unless Options.AllowDefaultBucketType). Writes report what is known, as
// SPEC.md 10 requires: nil (landed), crdt.ErrUnavailable (no attempt
// landed) or crdt.ErrAmbiguousWrite (some attempt may have landed), in an
// *Error that also wraps the driver's error. A failed request is resent up
// to Options.RetryCount times, which is safe because every write carries a
// complete CRDT state.
//
// # Use
//
// Create the cluster with NewCluster (it turns the driver's own retries
// off, which would hide ambiguity, and waits for a node to answer) and a
// bucket type of your own with allow_mult=true; Example shows a ledger on
// it. README.md has the bucket type commands, the default type's
// behaviour, deletes, durability settings (n_val, w, dw, pw and backend
// sync) and how to run the tests against a real Riak (RIAK_ADDR).
//
// Package riaktest holds FakeServer, an in-process test double that speaks
// Riak's protocol-buffers wire format; CI runs the store.Siblings
// conformance kit and the ledger and statestore behaviours against it.
package riak

// Package riak is a store.Siblings (and store.SiblingDeleter, and
// store.Expiring) in Riak KV, through github.com/basho/riak-go-client: the
// storage under counterkit's ledgers (package ledger), bounded accounts and
// state-based counters (package statestore). It is its own Go module so
// that the core module does not depend on the Riak driver.
//
// Riak keeps concurrent writes to one key as siblings and hands out a
// vclock describing what a reader has seen: that is the store.Siblings
// shape, and Siblings maps it one to one, with no Riak data types. Values
// are stored as given (ContentType) and never decoded here.
//
// # The guarantee
//
// The adapter implements SPEC.md 10.1: a Put supersedes exactly the
// siblings its token (the vclock) covers, and siblings written concurrently
// survive alongside it. NewSiblings (CheckBucket) refuses a bucket that
// would not keep siblings, and Riak's default bucket type
// (ErrDefaultBucketType). Writes report what is known, as SPEC.md 10
// requires: nil, crdt.ErrUnavailable or crdt.ErrAmbiguousWrite.
//
// # Use
//
// Create the cluster with NewCluster (it turns the driver's own retries
// off, which would hide ambiguity) and a bucket type of your own; Example
// shows a ledger on it. README.md has the bucket type commands, errors and
// retries, deletes, durability settings, a backend that expires a
// ledger's records (Options.Expiry) and how to run the tests against a
// real Riak (RIAK_ADDR).
//
// Package riaktest holds FakeServer, an in-process test double that speaks
// Riak's protocol-buffers wire format; CI runs package conformance (the
// store.Siblings checks and every Siblings driver's behaviours: ledger,
// statestore, bounded) against it.
package riak

// Package embedded is a durable, server-less counterkit backend: both
// store shapes, store.Siblings and store.Partitions, kept in one file
// (FileName) of the embedded key-value engine bbolt (go.etcd.io/bbolt) in
// a data directory, for a service that runs as one process and needs its
// balances and counts to survive restarts and crashes without a cluster.
//
//	db, err := embedded.Open("/var/lib/myservice/counters", embedded.Options{})
//	...
//	defer db.Close()
//	sib := db.Siblings()     // store.Siblings + store.SiblingDeleter
//	parts := db.Partitions() // store.Partitions
//
// Both shapes meet SPEC.md 10.1 and 10.2 and behave as adapters/memory,
// except that they persist and that tombstones expire
// (Options.TombstoneGrace, as Cassandra's gc_grace_seconds). Further:
//
//   - Acknowledged means durable: Siblings.Put, Siblings.Delete and
//     Partitions.Apply return nil only once their transaction is written
//     and fsynced. Concurrent writers share commits (group commit, no timer).
//   - All or nothing: a Put and an Apply (its whole batch) are each one
//     transaction, wholly in the file after a crash or wholly absent.
//   - An error wrapping crdt.ErrAmbiguousWrite (the commit failed) may hide
//     a write on disk, and the DB then refuses writes with
//     crdt.ErrUnavailable until reopened; any other error means nothing
//     was written.
//   - A damaged file is refused, never read wrong: Open checks the whole
//     file first and changes nothing (crdt.ErrCorruptEncoding,
//     crdt.ErrMisconfiguredStore, crdt.ErrUnsupportedVersion), every
//     sibling and row carries a CRC-32C (a tombstone has none: the
//     buckets' digests, sums over each entry's CRC-32C, vouch for it),
//     DB.Verify checks a live store, and
//     none of them crashes or hangs (damage that appears while the file is
//     open: README.md, "Opening, locking and damage"). One exception: a
//     format 1 file (0.1.0) has no digests, so damage to a tombstone made
//     before Open upgrades it, or an entry another program removed whole,
//     is not found (README.md, Layout). An older
//     copy of a file, or another store's, is no damage: it opens, without
//     the writes made since it was taken.
//   - One process: Open locks the directory; a second Open gets ErrLocked.
//
// Fetch and Snapshot read one consistent version; Scan reads
// Options.PageSize rows per read transaction. DB.Backup, DB.WriteBackup,
// DB.BackupHandler and Restore copy a live store (ExampleDB_Backup); Keys,
// ReadStats and Compact read a store no DB holds (ExampleKeys). README.md
// has the layout, the checks, tombstones, locking, limits and figures.
package embedded

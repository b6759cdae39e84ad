// Package embedded is a durable, server-less counterkit backend: both
// store shapes, store.Siblings and store.Partitions, kept in one file
// (FileName) of the embedded key-value engine bbolt (go.etcd.io/bbolt) in
// a data directory. It is for a service that runs as one process and
// needs its balances and counts to survive restarts and crashes without a
// Cassandra or Riak cluster.
//
//	db, err := embedded.Open("/var/lib/myservice/counters", embedded.Options{})
//	...
//	defer db.Close()
//	sib := db.Siblings()     // store.Siblings + store.SiblingDeleter
//	parts := db.Partitions() // store.Partitions
//
// # The guarantee
//
// Both shapes meet SPEC.md 10.1 and 10.2 and behave as the in-memory
// reference implementations in adapters/memory, except that they persist
// and that tombstones expire (Options.TombstoneGrace; a write older than a
// deletion collected after that grace may become visible, as in Cassandra
// after gc_grace_seconds). On top of that:
//
//   - Acknowledged means durable. A write (Siblings.Put, Siblings.Delete,
//     Partitions.Apply) returns nil only once its bbolt transaction has
//     been written and fsynced: it survives the process being killed, the
//     machine losing power and any later crash, as far as the disk honours
//     fsync.
//   - All or nothing. A Put (removing the siblings its token names and
//     adding its value) and an Apply (its whole batch) are each one
//     transaction: after a crash it is wholly in the file or wholly absent.
//   - Errors say what is known. An error wrapping crdt.ErrAmbiguousWrite
//     (the commit itself failed: a full disk, an I/O error) may hide a
//     write on disk; the DB then refuses writes with crdt.ErrUnavailable
//     until it is reopened. Any other error means nothing was written:
//     refused input (checked before anything is written), ErrClosed, a done
//     context, or a damaged row the write had to read.
//   - A damaged file is refused, never read wrong. Open checks the whole
//     file before the engine reads it and refuses damage with
//     crdt.ErrCorruptEncoding, a directory that is not a store with
//     crdt.ErrMisconfiguredStore and a newer format with
//     crdt.ErrUnsupportedVersion, changing nothing; every record carries a
//     CRC-32C, and DB.Verify runs the same checks on a live store. Open,
//     reads and Verify return errors; they do not crash or hang.
//   - One process. Open locks the directory; a second Open gets ErrLocked
//     (wrapping crdt.ErrUnavailable).
//
// Concurrent writers share commits (group commit, without a timer). Fetch
// and Snapshot read one consistent version of the file; Scan reads
// Options.PageSize rows per read transaction and may see writes made
// between pages. DB.Backup, DB.WriteBackup, DB.BackupHandler and Restore
// copy a live store (ExampleDB_Backup); Keys, ReadStats and Compact read
// a store no DB holds, read-only (ExampleKeys).
//
// README.md has the file layout and the checks Open makes, tombstone
// collection, locking, backups, limits, the tests and the benchmarks;
// Example writes both shapes and reopens the store.
package embedded

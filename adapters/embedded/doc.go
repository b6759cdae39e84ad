// Package embedded is a durable, server-less counterkit backend: both
// store shapes, store.Siblings and store.Partitions, kept in one file of
// the embedded key-value engine bbolt (go.etcd.io/bbolt) in a data
// directory. It is for a service that runs as one process and needs its
// balances and counts to survive restarts and crashes without a Cassandra
// or Riak cluster.
//
//	db, err := embedded.Open("/var/lib/myservice/counters", embedded.Options{})
//	...
//	defer db.Close()
//	sib := db.Siblings()     // store.Siblings + store.SiblingDeleter
//	parts := db.Partitions() // store.Partitions
//
// Both behave exactly as the in-memory reference implementations in
// adapters/memory (checked by differential tests), with the differences
// stated below: they persist, and tombstones expire.
//
// # What "acknowledged" means
//
// A write (Siblings.Put, Siblings.Delete, Partitions.Apply) is
// acknowledged when it returns nil. By then it has been committed in one
// bbolt write transaction and that transaction's pages and meta page have
// been written and fsynced (fdatasync) to the data file. So an
// acknowledged write survives the process being killed, the machine
// losing power, and any later crash, as far as the disk honours fsync.
//
// A write is one transaction: a Put removes the siblings its token names
// and adds its value together; an Apply applies every mutation of its
// batch together. A write interrupted by a crash is therefore wholly in
// the file or wholly absent after reopening, never torn. bbolt never
// overwrites live pages (copy on write) and switches to the new state by
// writing one of two checksummed meta pages, so the file is consistent
// after a crash at any instant, with no recovery step.
//
// Concurrent writers share commits (group commit): a writer that finds
// no commit in progress commits at once; writers that arrive meanwhile
// queue and are committed together, with one fsync, by the next of them.
// No writer waits for a timer, so a lone writer pays one commit per write
// and 32 writers pay roughly one commit per 32 writes. A write whose
// function fails inside a group (a damaged row it had to read) fails
// alone; the others of the group are committed without it.
//
// A write that returns an error may or may not be on disk when the error
// wraps crdt.ErrAmbiguousWrite (the commit itself failed: a full disk, an
// I/O error). After such a failure the DB refuses further writes with
// crdt.ErrUnavailable until it is closed and reopened: the engine's view
// of the file may no longer match the file, and reopening re-reads it.
// Any other error means nothing was written: refused input
// (crdt.ErrInvalidKey, crdt.ErrInvalidActor, crdt.ErrInvalidAmount,
// crdt.ErrTooLarge, a malformed token with crdt.ErrCorruptEncoding, all
// checked before anything is written), a closed DB (ErrClosed), a done
// context, or a damaged row the write had to read.
//
// Reads need no lock: Fetch and Snapshot each read one consistent
// version of the file (a bbolt read transaction) and see every write
// acknowledged before they started; Scan reads a page of
// Options.PageSize rows per read transaction, so, as a paged Cassandra
// read, it may see writes made between pages. The store.Read level is
// accepted and ignored: every read is complete.
//
// # Layout
//
// One file, FileName, in the directory. It holds a meta bucket with a
// format marker (a magic string and FormatVersion) and the data buckets'
// digests (below), a siblings bucket
// (uvarint key length, key, 8-byte dot → CRC-32C, value), a rows bucket
// (uvarint partition length, partition, row key → 8-byte timestamp,
// CRC-32C, value), the tombstones (points, ranges, partition drops) and a
// gc index of tombstones by timestamp. Dots come from a persisted
// sequence and are never reused. The CRC covers a record's key and value:
// a damaged value is reported with crdt.ErrCorruptEncoding, never served.
//
// bbolt checksums only its two meta pages, so the adapter checks the rest
// itself, with its own bounds-checked reader over a read-only mapping:
// both meta pages valid, with consecutive transaction ids (a crash cannot
// tear a meta page, so a bad one is damage; falling back to the older one
// would silently drop the last acknowledged write); every page reachable
// from the root within the high-water mark, reached once, of its type, its
// elements inside it and its keys in order within its parent's bounds;
// the freelist disjoint from live pages, every page either reachable or
// free. Each data bucket has a digest in the meta bucket, updated in
// every write transaction: its number of entries, the sum of a hash of
// every key and value, and its sequence; an entry lost, added, moved or
// changed anywhere shows as a mismatch. DB.Verify checks all of this and
// every record's checksum on the version one read transaction sees, while
// writes go on.
//
// # Tombstones
//
// A deletion shadows writes with a timestamp ≤ its own, also writes that
// arrive later. It is kept for Options.TombstoneGrace
// (DefaultTombstoneGrace, ten days, by default) after it was applied, by
// the clock Options.Now and whatever its timestamp (as Cassandra counts
// gc_grace_seconds from the local deletion time); afterwards each Apply
// collects up to 64 such tombstones, oldest first, in its own
// transaction. A write older than a collected deletion can then become
// visible: choose a grace longer than any write can be delayed.
// A negative grace keeps tombstones forever. Rows shadowed by a deletion
// are removed when the deletion is applied.
//
// # Opening, locking and damage
//
// Open takes an exclusive lock (flock) on the directory, then the engine
// takes one on the data file, each waiting at most Options.LockTimeout: a
// second DB on the same directory, in this process or another, gets
// ErrLocked (wrapping crdt.ErrUnavailable), never a shared file. Several
// first Opens of a new directory at once: one creates the file, the
// others wait for the lock and open the finished store or get ErrLocked.
// A new file is made complete under FileName + ".new" and linked into
// place, so a crash while creating leaves no data file or a complete one.
//
// Open checks the whole file, as above, before the engine reads it: its
// time grows with the file (1-3 ms per MiB where it was measured). It
// refuses, leaving
// the directory as it was:
//
//   - a directory holding other files and no data file, a bbolt file
//     without our marker, a data file that is not a regular file (a
//     directory, a FIFO, a device) or a symbolic link to nothing:
//     crdt.ErrMisconfiguredStore;
//   - a data file that is empty, truncated below the engine's high-water
//     mark, not a bbolt file, or damaged anywhere (a page, a meta page,
//     the freelist, a value, a count or pointer): crdt.ErrCorruptEncoding;
//   - a newer format: crdt.ErrUnsupportedVersion;
//   - a directory or file it may not write (read-only), or that cannot be
//     created: crdt.ErrUnavailable, with the *fs.PathError reachable with
//     errors.As.
//
// A damaged file is refused as a whole: restore it from a backup. Damage
// that appears while the file is open (the disk changing under the
// process) is found by a value's checksum when it is read or by
// DB.Verify, as an error wrapping crdt.ErrCorruptEncoding; Open, reads
// and Verify return errors, they do not crash or hang.
//
// # Backup
//
// DB.Backup writes a consistent copy of the store, as of one moment,
// into an empty directory while the store serves writes; Open opens the
// copy. The copy is checked as Open checks a file before it gets its
// name.
//
// A running service holds the directory's lock, so a backup tool cannot
// open it; the service serves the copy instead: DB.WriteBackup streams it
// to an io.Writer, and DB.BackupHandler serves it over HTTP on the
// service's administrative mux. Restore (what `counterkit backup -from
// URL` calls) makes a data directory of such a stream, opening and
// verifying the copy before it gets its name; it never overwrites a
// directory that holds files.
//
// # Limits
//
// Values up to store.MaxValue (8 MiB); batches up to store.MaxBatch
// mutations and MaxBatchBytes. One process at a time. The file grows and
// reuses freed pages but does not shrink.
package embedded

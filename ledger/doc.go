// Package ledger is the storage-independent idempotent ledger: a
// tpncounter.Counter stored under one key of a store.Siblings, changed with
// Credit, Debit and Update under client-chosen transaction ids.
//
// # Basics
//
// Every write is one cycle: Fetch every sibling and a token, merge them into
// the ledger's own state (its last write and what it has read since),
// apply the transaction as this ledger's actor (which first compacts the
// actor's own entry), encode, and Put with the token so the value
// supersedes exactly the siblings read.
//
// A cycle costs what changed, not the whole state: the ledger keeps one
// decoded state, merges each sibling into it decoding only the entries that
// differ from its own (tpncounter.Counter.MergeBinary), applies in place,
// and re-encodes only the entries that changed. Bytes still travel whole:
// the Put carries the whole state, and a sibling equal to the one last
// seen is recognised by comparing it (which is free when the store returns
// the very bytes it was given, as the in-memory store does).
// BENCHMARKS.md has cost against actors and history.
// Writers that did not see each other leave siblings; the next reader
// merges them. A transaction already in the fetched state is not written
// again (Duplicate). Find reads, merges, compacts and writes back, which
// collapses siblings and folds the actor's history.
//
// Retries (Options.RetryCount): a Put that fails with
// crdt.ErrAmbiguousWrite (may have landed) or crdt.ErrUnavailable (did not
// land) is retried by running the whole cycle again. That is safe because
// the operation is idempotent: if the first attempt landed, the re-fetch
// finds the transaction and the Result still says Applied and Landed.
// Result.Landed is true only when the transaction is known to be stored.
// Attempts are spaced by a jittered exponential backoff (Options.Backoff)
// that ends early when the context does.
//
// What Applied means: this call wrote the transaction. It does not mean this
// call's copy is the one that counts. A transaction delivered to two
// ledgers at once is written by both, both answer Applied, and the value
// counts it once; Result.Owner (and Counter.Owner on Find's counter) names
// the copy that counts, so a side effect such as a receipt can run exactly
// once, by the owner. Two writers that used one id with different amounts
// without seeing each other are resolved the same way: one amount counts,
// Find's counter lists the conflict (Conflicts), and a retry of the losing
// write answers Superseded.
//
// The ledger remembers the last state it tried to write, including an
// ambiguous one, and merges it into every read. This gives read-your-writes
// even when a replica serves a stale read, and it is what keeps the actor's
// entry from forking: the actor never writes a state that lacks a write of
// its own that may have landed. A pending ambiguous write therefore lands
// with the ledger's next successful write (Pending reports it).
//
// # Group commit
//
// Concurrent Updates on one Ledger (Credit, Debit, and through them a
// Book's or a Sharded's on one key) share cycles. An Update that finds no
// cycle running runs at once, alone. Updates that arrive while a cycle
// runs queue; when it ends, the first of them leads the next cycle for up
// to Options.MaxGroup queued Updates, in arrival order: one Fetch, one
// merge, each transaction applied in turn, one Put. A hot key then costs a
// write per group instead of a write per transaction; grouping adds no
// wait of its own. No goroutine is started: the leader is the caller that
// runs the cycle, and it hands each member its answer. MaxGroup 1 turns it
// off: Updates then take the Ledger's mutex in turn, as before. Grouping
// pays when a store call takes far longer than handing a call between
// goroutines, as over a network; over an in-process store a cycle costs
// microseconds, and the hand-offs may cost as much as the writes saved
// (BenchmarkGroupCommitNoLatency).
//
// Each caller gets its own Result and error, as if the group's calls had
// run one after another:
//
//   - Judged alone. A transaction the fetched state knows is answered from
//     it (Duplicate, DuplicateFolded, Superseded), whatever the write does.
//     Two calls of one transaction in a group: the first is Applied, the
//     later Duplicate (each Landed only once the write lands). A later
//     call with another amount fails with crdt.ErrConflictingTransaction;
//     crdt.ErrOutsideWindow, crdt.ErrOverflow and crdt.ErrTooLarge from
//     applying fail only their call, with nothing of it written; invalid
//     input fails before it queues. Should the group's state encode larger
//     than a store accepts (store.MaxValue), the calls applied last are
//     taken back out until it fits, and fail with crdt.ErrTooLarge.
//   - Acknowledged only when landed. nil error and Landed come only from a
//     Put that carried the transaction and succeeded, or from a fetch that
//     found it stored. Value is the value after the group's write.
//   - Failures shared exactly as alone. The calls the write carries share
//     its fate. Refused (crdt.ErrUnavailable): every transaction the cycle
//     applied is taken back out of the ledger's state, as a lone credit's
//     is; the retries (Options.RetryCount) run the whole group again, each
//     call judged again against the new fetch; after the last, each gets
//     the refusal, and nothing of them lands later. Ambiguous
//     (crdt.ErrAmbiguousWrite): the ledger keeps the group's state as its
//     pending write, each call gets the ambiguous error, and a retry of
//     any of them, on any ledger, is recognised. A refusal after an
//     ambiguous attempt whose pending write still holds the transaction
//     wraps crdt.ErrAmbiguousWrite as well: that write may yet land.
//   - Contexts. A queued call whose context ends before its cycle starts
//     leaves the queue with its context's error, nothing of it written
//     (Attempts 0). Once its cycle has started it stays in it and gets the
//     write's answer whatever its context does: one caller giving up does
//     not fail the others' write. The cycle's store calls and waits end
//     early only when every member's context has ended (for a group of
//     one, exactly when that caller's does, as without grouping).
//   - Observed per call. The Observer gets one event per Update, on the
//     caller's goroutine, with its own outcome; Attempts, Ambiguous,
//     Refused, Siblings and Bytes describe the writes that carried it, so
//     each member of a group counts the group's ambiguous write once in
//     its own event, and Folded (retirements) is reported in one member's
//     event only. Duration includes the time the call waited in the queue.
//
// The window counts transactions, not writes: a write carrying a group of
// n moves the writer's window by n. MaxGroup may not exceed HistoryLength
// + FoldedLength, so that no call of a group is forgotten by the very
// write that carries it (the default, 16, is lowered to the window when
// the window is smaller). Group commit raises how many transactions one
// actor makes per second, and with it how soon a transaction leaves the
// window: size HistoryLength and FoldedLength for the transactions an
// actor makes during the longest retry delay, not for its writes.
//
// # Caveats
//
// Exactly-once holds within the window of package tpncounter: a retry, a
// stale replica, or a ledger's pending ambiguous write must reach the store
// before any ledger holding the transaction has applied HistoryLength +
// FoldedLength further transactions (one write of a group of n applies n). After ErrAmbiguousWrite, retry the same
// transaction promptly (on any ledger) or call Find; do not leave a ledger
// with a pending write idle for long. With timed transactions
// (Options.Counter.TxnTime) a pending write that waited too long is
// handled: when the ledger next reads, a transaction of its pending write
// that it never saw land, that the store does not know and whose time is
// not after the store's horizon is taken back out of the pending write
// (tpncounter.Counter.Retract), since it may have been retried elsewhere,
// counted and forgotten; a retry of it is refused with
// crdt.ErrOutsideWindow, like any transaction that old. Untimed
// transactions give the ledger nothing to judge that by: a ledger whose
// write is pending must write again (any Update, or Find) promptly, because
// if the transaction is retried on another ledger and that ledger makes more
// than HistoryLength + FoldedLength further writes before this one writes
// again, this ledger's next write carries the transaction back in and it is
// counted twice.
//
// # Incarnations: restarts lose nothing
//
// A Put that answered crdt.ErrAmbiguousWrite may still be in the network
// when its process dies, and land after the restarted process has written
// again. If the new process continued the actor's entry, the two writes
// would be two versions of one entry with the same sequence number, and
// Merge could keep only one: an acknowledged credit would be lost. So every
// Ledger value writes its own entry, an incarnation of its actor:
// Options.Actor, "~", and 8 random characters (Writer). A late write from
// an earlier life lands in that life's entry and counts as what it is; a
// stale first read cannot fork anything; and any number of Ledgers, in any
// number of processes, may write as one actor at once. Riak KV does the
// same for its own vnodes, which take a new actor id when they restart.
//
// The price is one entry per Ledger value that writes (reads, Find without
// new transactions and duplicates add none). Create one Ledger per key and
// actor when the process starts and reuse it: it is safe for concurrent
// use. An entry stays in the counter until it is retired (below).
//
// # Retiring idle incarnations
//
// With Options.RetireAfter, a ledger retires the entries of other
// incarnations it has seen unchanged for that long, in the writes it makes
// anyway (tpncounter.Counter.Retire): an entry keeps its actor id and
// everything it counted, and drops its history and folded record, so the
// state follows the incarnations that still write, plus a few bytes per
// retired one. Any ledger of the key may retire; retirements racing each
// other agree, and an incarnation retired while still alive (or whose last
// write was still in flight) wins over its retirement with its next write
// and is counted once. A retirement is declined while another actor still
// holds one of the entry's transactions, and tried again later.
//
// What it assumes: retiring forgets the incarnation's transactions, like
// folding past the window, but by time instead of by later writes. So
// RetireAfter must exceed the longest time a write of that incarnation
// can stay in flight and the longest a client takes to retry one of its
// transactions; then no copy of them is left to arrive. With timed
// transactions (Counter.TxnTime) a retry that comes later still is refused
// with crdt.ErrOutsideWindow, since the retired entry records the newest
// time among them; untimed, it would be counted again. Each ledger judges
// "unchanged for RetireAfter" by its own clock (Options.Clock), from the
// first time it saw the entry's current version, so clocks need not agree.
//
// A corrupt sibling stops every operation on the key with an error wrapping
// crdt.ErrCorruptEncoding; nothing is written over it.
//
// Size: every store accepts values up to store.MaxValue (8 MiB) and refuses
// larger ones with crdt.ErrTooLarge, below tpncounter's own encoding cap
// (16 MiB, which Apply itself enforces). A write whose state would encode
// larger is refused the same way and changes nothing stored; keep live
// actors × (HistoryLength + FoldedLength) well inside it: about 21 bytes per
// item with UUID transaction ids, len(id) + 5 with others (tpncounter's
// "Sizes"), and retire idle incarnations (below).
//
// Storage is any store.Siblings (memory, the embedded store, Riak,
// Cassandra). The ledger validates everything it reads: a sibling that does
// not decode is reported, never merged. Package ledgertest runs the
// ledger's behaviours against any store.Siblings; store/storetest runs it
// as part of the shape's conformance kit.
//
// # Many keys, one actor: Book
//
// A service that keeps many balances as one actor uses a Book (NewBook)
// rather than a map of Ledgers: one shared store, one Ledger per key,
// created on the key's first operation. Operations on one key are
// serialised, as a Ledger's are; operations on different keys run
// concurrently.
//
// A Book keeps at most BookOptions.MaxOpen Ledgers (each holds one decoded
// state of its key, with its entries' encodings, and the last bytes it
// read or wrote), dropping the least recently used idle one.
// It never drops a Ledger running an operation, nor one whose last write
// was ambiguous (Pending): that Ledger holds the only copy of a write that
// may still be in flight, the copy that the key's next write, Find or
// Book.LandPending lands, and that must land promptly (see Caveats). When
// more than MaxOpen Ledgers are in use or pending, the Book keeps them all,
// beyond the bound, and drops idle ones as the count falls. It does not
// refuse operations instead: a store outage turns ledgers pending, and
// refusing then would fail work on every other key as well. Book.Stats
// reports the counts; after an outage, LandPending writes the pending
// Ledgers, which makes them droppable again.
//
// Dropping costs an actor entry. A key opened again gets a new Ledger, so
// a new incarnation, and its first write adds an entry to the key's state
// (reads and duplicates add none). Entries are not removed, so a key
// dropped and written again n times holds n + 1 entries of the actor: its
// state and the cost of every operation on it grow, up to tpncounter's
// actor limit, beyond which writes to the key are refused with
// crdt.ErrTooLarge. Size MaxOpen to the keys the service writes in its
// working set, so that the keys dropped are the ones written rarely;
// Book.Stats counts the Ledgers opened and dropped.
//
// A re-opened key cannot take back its previous writer id. Continuing an
// entry requires the entry's last write: a Ledger merges the state it last
// wrote into every read for exactly that reason, and the dropped Ledger
// took that state with it. A new Ledger with the old id would learn the
// entry only by reading, and a read may miss the last write (a lagging
// replica, or a read racing the write's replication); continuing from such
// a read writes a second version of the entry under a sequence number the
// entry already used, Merge keeps one of the two, and an acknowledged
// transaction is lost. Keeping every dropped key's last state would undo
// the bound. Keeping only its last sequence number would let a re-opened
// Ledger recognise a stale read and read again, but that is memory for
// every key ever written, not every key open, and a Ledger cannot be
// started from it. A new incarnation collides with no earlier write.
package ledger

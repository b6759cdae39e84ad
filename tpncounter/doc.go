// Package tpncounter implements transactional counters: GCounter (a
// transactional grow-only counter, TGCounter) and Counter (the TPNCounter:
// a P and an N GCounter). Every update carries a client-chosen transaction id, so a
// retried credit or debit, on the same actor or another one, is recognised
// instead of counted twice.
//
// # Basics
//
// Each actor owns one entry per half: a sequence number, a folded total, its
// recent transactions in order (the history) and a record of the
// transactions it folded most recently. Only the owner changes its entry,
// and every change increments the sequence number. Merge keeps, per actor,
// the entry with the larger sequence number, so states form a
// join-semilattice: Merge is commutative, associative and idempotent, and
// it never modifies its argument. Two entries with one sequence number but
// different content can only come from an actor running twice at once (or
// restarting from a stale read); Merge then keeps the larger in a fixed
// total order so that it stays commutative, and one of the two versions is
// lost. The ledger package prevents such forks: each Ledger remembers its
// own last write, and each Ledger value writes its own entry (an
// incarnation), so a restarted process never continues an entry whose
// writes may still be in flight.
//
// The value is counted when it is read, never when a transaction is applied
// (adding at apply time is how a transaction applied by two actors ends up
// counted twice: merge cannot undo it). The value of a half is the sum of the folded totals plus the amount
// of every distinct transaction held only in histories, each once however
// many actors hold it (the owner's copy, below); a transaction some actor
// has folded is counted by the owner's total, and every other fold of it is
// subtracted. An index from transaction id to its holders keeps this exact
// and makes
// Apply's duplicate check, HasTransaction and Status O(1). The value is kept
// in a 128-bit accumulator: Apply and Merge refuse (crdt.ErrOverflow,
// state unchanged) any state whose value would not fit in an int64; P − N
// then always fits.
//
// Apply(actor, txn, amount) returns Applied, Duplicate (held in a history
// with the same amount, nothing changed) or DuplicateFolded (recognised
// through a folded record: already counted, nothing changed, and the retry
// is late). The same id with another amount or sign is
// crdt.ErrConflictingTransaction, state unchanged.
//
// # Owners and conflicts
//
// When several actors hold one transaction (it was delivered to each of
// them, or retried on another actor before the first write was seen), one
// copy counts: the owner's. The owner is the smallest actor id among those
// that folded the transaction, or, when none has, the smallest actor id
// holding it in a history; in a Counter the same rule runs across both
// halves (a credit wins a tie with a debit of the same actor). Every
// duplicate rule below keeps the owner's copy and removes the others, so
// the owner does not depend on the order in which states were merged, and
// Owner reports it: when a transaction was delivered to two actors at
// once, each was told Applied, and Owner tells which one should run the
// side effect. It is final once every state holding a copy has been merged.
//
// Writers that could not see each other may also use one id with different
// amounts or signs (a client bug, met through a stale read). Apply refuses
// that when it can see the other copy, but Merge cannot refuse it without
// leaving a state no one could read or write, and refusing would not be a
// join. So Merge accepts it and the owner's copy counts, exactly once:
// Merge stays commutative, associative and idempotent. Conflicts lists such
// ids with every copy and the one that counts; a retry with a losing copy's
// amount is answered Superseded (nothing changes), and the losing copies go
// away as their holders compact. The value of a GCounter can therefore go
// down in a merge that brings a conflicting copy that takes over (a
// smaller actor's, or an earlier fold).
//
// # Folding and duplicates
//
// Before appending, Apply lets the actor compact its own entry (Compact does
// only this, and the ledger's Find calls it). With HistoryLength h
// (default 10) and
// FoldedLength f (default h), the rules are, for a transaction x:
//
//  1. x is in the actor's history and another actor has folded it: drop x
//     without counting (that actor's total counts it).
//  2. x is in the actor's history and in the history of an actor with a
//     smaller id: drop x without counting (the smallest holder owns it; it
//     never drops x by this rule, so x is never dropped by every holder).
//  3. The oldest transactions beyond h are folded: added to the total and
//     moved to the folded record. Folding is safe while other actors still
//     hold x, because a folded x no longer counts through histories.
//  4. x is folded by the actor and by an actor with a smaller id: unfold it
//     (subtract it from the total); the smaller actor's fold counts it.
//  5. The folded record keeps its newest f items whatever else it holds.
//     Older items are forgotten when no other actor visibly holds them in a
//     history or a folded record; the others are deferred: kept, beyond f,
//     until their other holders let go. Deferred items take room of their
//     own (Stats.Deferred) and never push a newer item out early.
//
// Every rule leaves the value of the actor's own view unchanged. Because
// states travel whole, any state that contains an actor's entry also
// contains (a successor of) everything that actor saw when it wrote it,
// which is what makes the "visibly" in rules 2 and 5 stick.
//
// For example, with h = 3, after six credits of 10
// the value is 60, txn1 and txn2 have been folded and txn3..txn6 are in the
// history (h+1 entries, because Apply folds before it appends); a Find
// (Compact) folds txn3.
//
// # Caveats: the window
//
// In SPEC.md 6.8's words: in any state, a retry of x by any actor is
// recognised (duplicate, duplicate_folded or superseded) while the actor
// whose copy counts (the owner) has made fewer than H + F later
// transactions in that state, whatever other actors hold or however long
// they stay idle. The ledger's window is longer, a time kept by records
// (SPEC.md 6.11). Deferred ids cost room, never window: an actor's entry is capped by MaxEntriesPerActor, and
// Apply returns crdt.ErrTooLarge rather than go past it (Stats.Deferred shows
// how close it is).
//
// Exactly-once holds for a transaction x under this assumption: every entry
// that holds x, in any state that will ever be merged, is merged into an
// actor's state before that actor forgets x. The simulation tests check exactly-once under siblings,
// stale reads, lost acknowledgements and retries within this window, and
// show that outside it (a resend after x has left every history and folded
// record) x is counted twice: an untimed counter cannot detect that case,
// since it no longer knows x (timed transactions, below, are refused
// instead). Inside the window but after x was folded, a retry is
// recognised and reported as DuplicateFolded.
//
// Choose h and f from the number of writes an actor may perform during the
// longest retry delay you allow.
//
// # Timed transactions: refusing instead of counting twice
//
// Without more information a counter cannot tell a retry of a forgotten
// transaction from a new one. Options.TxnTime supplies it: a function giving
// each transaction id the time the client created it (TimeUUID reads it
// from a version 1 UUID id). Each entry then also records forgot, the
// newest time among the transactions its actor has forgotten, and the
// counter's horizon is the largest forgot of any entry. Apply refuses, with
// crdt.ErrOutsideWindow and no change, a transaction it does not know whose
// time is not after the horizon of its half.
//
// Why this is sound: an actor forgets x only in a write that also raises
// its forgot to at least x's time, and forgot travels with the entry through
// Merge and the encoding. So any state that no longer knows x because an
// actor forgot it also carries a horizon at or after x's time, and refuses
// x: a timed retry applied to a state that contains the forgetting entry is
// recognised or refused, never counted twice. That covers every retry the
// ledger makes after the forgetting write has landed, because the ledger
// merges every stored sibling before it applies. What remains is the
// assumption above for concurrent states: a state still holding x that is
// merged only after another actor has forgotten x. The simulation tests
// resend transactions at any time, long after the window, and check that
// timed counters never count one twice while untimed ones do.
//
// Why a horizon and not a fixed time window: a window rule ("refuse what is
// older than W") rests on every replica's clock and still double counts if
// an actor forgets x within W; the horizon is part of the state, needs no
// clock to be correct (FutureSkew's clock only guards against bad stamps),
// and refuses exactly what might have been forgotten. Its price is the other
// side of the same coin: a new transaction whose time is not after the
// horizon is refused too, since it cannot be told from a forgotten one. The
// horizon trails the newest transactions by about h + f writes per actor,
// so clients must stamp a transaction when they create it and keep the
// delay until its last retry (plus clock skew between clients) below the
// time an actor takes to perform h + f writes; raise FoldedLength (up to
// MaxHistoryLength) to widen it. A refused transaction may or may not have
// been counted: the caller must reconcile it, which is the point of
// reporting it.
//
// A transaction stamped in the future moves the horizon that far once it is
// forgotten, after which everything older is refused: set FutureSkew so that
// Apply refuses times too far ahead of the replica's clock.
//
// Every replica writing a counter must use the same TxnTime; an untimed
// transaction reaching a timed counter through Merge or decoding is kept,
// but its forgetting does not move the horizon.
//
// Sizes: an actor holds at most h+1 history entries after Apply, and its
// folded record exceeds f only by transactions other actors still hold.
// Limits are Options.MaxActors live actors (default 4096), MaxRetired
// retired ones and MaxEntriesPerActor transactions per entry; Apply, Merge
// and the decoder return crdt.ErrTooLarge beyond them. The encoding is
// capped at crdt.DefaultMaxEncodedSize (16 MiB), and the cap holds for
// every state the counter holds: Apply and Merge refuse, state unchanged,
// what would encode larger, so any state can be written and read back.
// An item costs about 21 bytes encoded with UUID ids (16-byte bins) and
// about len(id) + 5 with other ids, and every live actor holds up to h + f
// + 1 of them: with UUID ids, 1,000 live actors × h = f = 100 is 4.6 MB and
// the cap allows about 800,000 items (say 1,000 × h = f = 350); with 36-byte
// text ids about half that. Stores cap values lower (store.MaxValue, 8
// MiB, for the ledger's): plan actors × history from that.
//
// An entry is removed only by retiring it (Retire), so retire actors that
// have stopped writing (the ledger does, with ledger.Options.RetireAfter).
//
// # Retirement
//
// Retire replaces the entry of an actor that has stopped writing by a
// retired one: its sequence number, everything it counted as the total,
// and no history or folded record. It is what keeps a counter written by
// short-lived writers (one ledger incarnation per process start) small:
// the state then follows the actors that still write, plus a few bytes per
// retired one. Any replica may retire any actor; retirements of one entry
// by several replicas are equal, a retirement wins over the live entry it
// retired, and the actor's next write wins over the retirement, so Merge
// stays a join and nothing is counted twice. A retirement is declined while
// another actor holds one of the entry's transactions. Retiring forgets
// the actor's transactions at once, so it rests on the assumption of the
// window, stated in time rather than in writes: no copy of them arrives
// and no retry of them is made after the retirement (see Retire; timed
// transactions turn a late retry into crdt.ErrOutsideWindow). A sequence
// number stops at MaxSeq: Apply and Compact then return crdt.ErrOverflow
// rather than wrap (a wrapped entry would lose to every older one).
//
// # Cost
//
// Each actor's folded record and history sit in one ring of 16-byte items,
// with the ids in one byte arena per actor (4 bytes of offset and length
// per item): folding and forgetting move a boundary, appending writes the
// next slot and the id's bytes, and nothing is copied or allocated in the
// steady state but the occasional move of the live ids to the front of the
// arena. The index is an open-addressing
// table whose entries point straight at the ring item of a transaction's
// only holder; a transaction two or more actors hold gets a small record
// listing them instead. An Apply of a new transaction therefore reads one
// table cache line, its actor's ring and nothing else; a duplicate check
// reads the table line and the item it points to. The table entry of a
// forgotten transaction is left in place and recognised as stale (its ring
// position no longer holds that id as a live item) until a rebuild from the
// rings drops all of them, at most once per a third as many forgotten
// transactions as there are live ones. Decoding allocates each part of the
// state once at its final size, rings exactly as long as their entries (see
// FormatVersion). BENCHMARKS.md has the figures.
//
// Encoding costs what changed. Each entry keeps its encoding once it has
// been encoded, until it changes (its sequence number moves) or is
// replaced, so MarshalBinary re-encodes only the entries changed since the
// last one and copies the rest into one buffer sized in advance; the price
// is the encoded size again in memory. MergeBinary is the read side: it
// merges an encoded state into a counter, skipping without decoding every
// entry whose bytes equal the encoding of the counter's own entry for that
// actor. A reader that keeps one counter and merges each state it fetches
// into it, as the ledger does, decodes only what other writers changed.
//
// Retired entries read from an encoding (by UnmarshalBinary, MergeBinary,
// or a Merge of such a state) are held as their encodings alone, in one
// block per half with one offset each: no object per retired actor, so
// that the garbage collector does not visit them, and MarshalBinary copies
// the run of them between two other entries at once. Value, Apply and
// Compact by other actors, and the duplicate checks never read them; one
// becomes an ordinary retired entry when its actor writes again or a
// merge replaces it.
//
// Encoding: see FormatVersion (version 3 added retired entries and UUID ids
// as 16 bytes, and is written only for states that hold one; version 2
// added forgot; versions 1 and 2 are still read). Values of GCounter and
// Counter are not safe for concurrent use.
package tpncounter

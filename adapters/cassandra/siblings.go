package cassandra

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// MaxSiblings bounds how many rows (one per actor) a Fetch returns for one
// key. A key with more rows is refused with an error wrapping
// crdt.ErrTooLarge instead of being read: that many actors means actor ids
// are not being reused.
const MaxSiblings = 10000

// MaxValueSize is the largest value Siblings.Put accepts: store.MaxValue.
// Cassandra refuses a mutation above max_mutation_size (half of
// commitlog_segment_size_in_mb, 16 MiB with 4.0's defaults), overhead
// included, so keep values far smaller (see README.md, "Errors").
const MaxValueSize = store.MaxValue

// siblingRow is one row of the siblings table as read back: the actor (the
// clustering key), its value and the value's WRITETIME.
type siblingRow struct {
	actor crdt.ActorID
	value []byte
	ts    int64
}

// Siblings implements store.Siblings on the siblings table, one row per
// (key, actor), with a token naming each row Fetch returned by (actor,
// WRITETIME); README.md ("Statements") shows why Put, which deletes
// exactly those versions, meets the contract. It is not a
// store.SiblingDeleter: a bare delete could leave tombstones above a
// restarted process's clock. Put refuses, writing nothing, what
// store.CheckPut refuses and a malformed token, or one from a Fetch of
// another key or table (crdt.ErrCorruptEncoding): its rows, named by
// actor and write time, would be deleted there. A Siblings is safe for
// concurrent use; one actor must still apply its own updates serially.
//
// On a DB with Options.SiblingsTTL, every row Put writes expires TTL
// after the server wrote it (a store.Expiring, for transaction records
// only): Fetch no longer returns it and its token no longer names it. A
// later Put of the same actor writes the row again with a full TTL. The
// row deletes a Put sends do not expire (they are tombstones). An expired
// row still shadows a write below its timestamp, as a delete would, until
// compaction purges it; since timestamps come from the writers' clocks,
// that takes a clock more than the TTL behind the one that wrote it.
type Siblings struct {
	db *DB
	// read returns every row of key (sessionFetchRows; unit tests
	// substitute a model of Cassandra's rules).
	read func(ctx context.Context, s *Siblings, key string) ([]siblingRow, error)
}

var (
	_ store.Siblings = (*Siblings)(nil)
	_ store.Expiring = (*Siblings)(nil)
)

// TTL returns the shortest time a row Put writes is kept after the server
// wrote it (store.Expiring), or zero (kept for good) without
// Options.SiblingsTTL. Cassandra counts the TTL, SiblingsTTL rounded up to
// whole seconds, from the second of the write, so a row lives more than
// TTL minus one second and at most TTL: TTL reports that second less
// (at least a nanosecond).
func (s *Siblings) TTL() time.Duration {
	if s.db.ttl == 0 {
		return 0
	}
	return max(time.Duration(s.db.ttl-1)*time.Second, time.Nanosecond)
}

// Siblings returns the DB's store.Siblings.
func (db *DB) Siblings() *Siblings { return &Siblings{db: db, read: sessionFetchRows} }

// The siblings table's statements; %s is its quoted name. The delete
// removes one actor's row as of an explicit timestamp: versions written at
// or below it go, later ones stay.
const (
	siblingsSelect = "SELECT actor, value, WRITETIME(value) FROM %s WHERE key = ?"
	siblingsInsert = "INSERT INTO %s (key, actor, value) VALUES (?, ?, ?) USING TIMESTAMP ?"
	// siblingsInsertTTL is siblingsInsert on a DB with a SiblingsTTL,
	// whose seconds it binds last.
	siblingsInsertTTL = "INSERT INTO %s (key, actor, value) VALUES (?, ?, ?) USING TIMESTAMP ? AND TTL ?"
	siblingsDelete    = "DELETE FROM %s USING TIMESTAMP ? WHERE key = ? AND actor = ?"
)

// cql returns one of the statements above on the DB's siblings table.
func (s *Siblings) cql(stmt string) string { return fmt.Sprintf(stmt, s.db.tables[tableSiblings]) }

// sessionFetchRows reads every row of key through the session: one
// single-partition SELECT as one page of MaxSiblings+1 rows with automatic
// paging off, so that the result is one consistent view (a Put's batch is
// seen entirely or not at all; a second page would be a second read). More
// than MaxSiblings rows are refused with an error wrapping crdt.ErrTooLarge.
func sessionFetchRows(ctx context.Context, s *Siblings, key string) ([]siblingRow, error) {
	iter := s.db.openPage(ctx, OpSiblingsFetch, s.cql(siblingsSelect), []any{key}, MaxSiblings+1, nil)
	return readPage(iter, OpSiblingsFetch, fmt.Sprintf("key %q", truncate(key, 40)), MaxSiblings, func(iter rowIter) (siblingRow, bool) {
		var r siblingRow
		ok := iter.Scan((*string)(&r.actor), &r.value, &r.ts)
		return r, ok
	})
}

// Fetch returns every actor's row of key (in actor order) as siblings, and a
// token naming those rows, to pass to Put. An absent key gives no siblings
// and a nil token. It raises the DB's clock to the largest WRITETIME read.
// A done context gives an error wrapping its error and
// crdt.ErrUnavailable.
func (s *Siblings) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	if err := crdt.ValidateKey("key", key); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, &Error{Op: OpSiblingsFetch.String(), Kind: crdt.ErrUnavailable, Err: err}
	}
	rows, err := s.read(ctx, s, key)
	if err != nil {
		return nil, nil, err
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].actor < rows[j].actor })
	var sibs [][]byte
	var entries []tokenEntry
	var maxTS int64
	for _, r := range rows {
		if len(r.value) > 0 { // a row without a value is not a sibling
			if err := checkRow(r); err != nil {
				return nil, nil, fmt.Errorf("cassandra: siblings fetch %q: %w", truncate(key, 40), err)
			}
			sibs = append(sibs, r.value)
			entries = append(entries, tokenEntry{actor: r.actor, ts: r.ts})
			maxTS = max(maxTS, r.ts)
		}
	}
	s.db.clock.observe(maxTS)
	if len(sibs) == 0 {
		return nil, nil, nil
	}
	tok, err := encodeToken(entries)
	if err != nil {
		return nil, nil, fmt.Errorf("cassandra: siblings fetch %q: %w", truncate(key, 40), err)
	}
	return sibs, seal(tok, s.db.tables[tableSiblings], key), nil
}

// checkRow refuses (crdt.ErrCorruptEncoding) a row no Put of this adapter
// writes: an invalid actor id, or a WRITETIME outside 1 µs .. maxWriteTime.
func checkRow(r siblingRow) error {
	if err := r.actor.Validate(); err != nil {
		return fmt.Errorf("%w: a row no writer makes: %v", crdt.ErrCorruptEncoding, err)
	}
	if r.ts < 1 || r.ts > maxWriteTime {
		return fmt.Errorf("%w: the row of actor %q has write time %d µs, outside 1970 to 9999", crdt.ErrCorruptEncoding, r.actor, r.ts)
	}
	return nil
}

// putStmts validates a Put and builds its statements: the writer's INSERT
// first, then one DELETE per other row the token names.
func (s *Siblings) putStmts(key string, actor crdt.ActorID, value []byte, token store.Token) ([]stmt, error) {
	if err := store.CheckPut(key, actor, value); err != nil {
		return nil, err
	}
	enc, err := unseal(token, s.db.tables[tableSiblings], key)
	if err != nil {
		return nil, err
	}
	entries, err := decodeToken(enc)
	if err != nil {
		return nil, err
	}
	var floor int64
	for _, e := range entries {
		floor = max(floor, e.ts)
	}
	ts := s.db.clock.next(floor)
	if ts <= floor {
		return nil, fmt.Errorf("%w: token names write time %d, which no write can follow", crdt.ErrCorruptEncoding, floor)
	}
	out := make([]stmt, 0, len(entries)+1)
	if s.db.ttl > 0 {
		out = append(out, stmt{cql: s.cql(siblingsInsertTTL), args: []any{key, string(actor), value, ts, s.db.ttl}, key: key})
	} else {
		out = append(out, stmt{cql: s.cql(siblingsInsert), args: []any{key, string(actor), value, ts}, key: key})
	}
	for _, e := range entries {
		if e.actor != actor {
			out = append(out, stmt{cql: s.cql(siblingsDelete), args: []any{e.ts, key, string(e.actor)}, key: key})
		}
	}
	return out, nil
}

// Put stores value as actor's row under key, superseding exactly the rows
// the token names and the writer's own earlier row (see Siblings). A nil
// token supersedes nothing else. After an error wrapping
// crdt.ErrAmbiguousWrite, retrying is safe: the retry writes the same row
// and deletes the same versions.
func (s *Siblings) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	stmts, err := s.putStmts(key, actor, value, token)
	if err != nil {
		return err
	}
	return s.db.write(ctx, OpSiblingsPut, stmts)
}

// truncate shortens s to n bytes and "..." for an error message.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

package cassandra

import (
	"context"
	"fmt"
	"sort"

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
// (key, actor), with sibling semantics built from write timestamps:
//
//   - Fetch returns every actor's row as a sibling (in actor order), and a
//     token naming each row it returned by (actor, WRITETIME).
//   - Put(actor, value, token) overwrites the writer's own row at a
//     timestamp above every one in the token, and deletes each other row
//     the token names USING TIMESTAMP its WRITETIME: the version that was
//     read goes, a version written concurrently (necessarily with a larger
//     timestamp, see below) survives as a sibling. Both happen in one
//     single-partition batch, which Cassandra applies atomically and in
//     isolation.
//
// A concurrent write by another actor always carries a larger timestamp
// than that actor's version in the token, because every writer raises its
// clock above every WRITETIME it has read and above every timestamp it has
// handed out: the actor either wrote the tokened version itself or read it
// (or a later row) before writing again. So a Put never removes a write it
// did not see, and a value that merges every fetched sibling collapses them.
//
// Because a key holds one row per actor, a Put also replaces the writer's
// own earlier value, whether or not the token names it: an actor writes
// values that include what it wrote before (it reads before it writes, and
// applies its own updates serially), as every counterkit client does.
//
// Siblings does not implement store.SiblingDeleter. Every row delete is
// paired with an insert at a larger timestamp, so the newest live row is
// always at or above every row tombstone of the key, and a Fetch lifts a
// restarted process's clock above all of them. A bare delete would leave
// tombstones that a restarted process with a clock behind them could write
// under, invisibly.
//
// Put refuses, writing nothing, an empty value (crdt.ErrInvalidAmount), one
// over MaxValueSize (crdt.ErrTooLarge), an invalid actor
// (crdt.ErrInvalidActor) or key (crdt.ErrInvalidKey), and a malformed token
// (crdt.ErrCorruptEncoding and the other decoding sentinels). It does not
// look inside values.
//
// Cost: Fetch reads one partition in one request; Put is one write (an
// INSERT, or one single-partition batch when the token names other actors'
// rows) and no read.
//
// A Siblings is safe for concurrent use; one actor must still apply its
// own updates serially.
type Siblings struct {
	db *DB
	// read returns every row of key (sessionFetchRows; unit tests
	// substitute a model of Cassandra's rules).
	read func(ctx context.Context, s *Siblings, key string) ([]siblingRow, error)
}

var _ store.Siblings = (*Siblings)(nil)

// Siblings returns the DB's store.Siblings.
func (db *DB) Siblings() *Siblings { return &Siblings{db: db, read: sessionFetchRows} }

// selectCQL is the one read the siblings table serves.
func (s *Siblings) selectCQL() string {
	return fmt.Sprintf("SELECT actor, value, WRITETIME(value) FROM %s WHERE key = ?", s.db.tables[tableSiblings])
}

// insertCQL overwrites one actor's row at an explicit timestamp.
func (s *Siblings) insertCQL() string {
	return fmt.Sprintf("INSERT INTO %s (key, actor, value) VALUES (?, ?, ?) USING TIMESTAMP ?", s.db.tables[tableSiblings])
}

// deleteCQL removes one actor's row as of an explicit timestamp: versions
// written at or below it go, later ones stay.
func (s *Siblings) deleteCQL() string {
	return fmt.Sprintf("DELETE FROM %s USING TIMESTAMP ? WHERE key = ? AND actor = ?", s.db.tables[tableSiblings])
}

// sessionFetchRows reads every row of key through the session: one
// single-partition SELECT as one page of MaxSiblings+1 rows with automatic
// paging off, so that the result is one consistent view (a Put's batch is
// seen entirely or not at all; a second page would be a second read). More
// than MaxSiblings rows are refused with an error wrapping crdt.ErrTooLarge.
func sessionFetchRows(ctx context.Context, s *Siblings, key string) ([]siblingRow, error) {
	iter := s.db.openPage(ctx, OpSiblingsFetch, s.selectCQL(), []any{key}, MaxSiblings+1, nil)
	return readPage(iter, OpSiblingsFetch, fmt.Sprintf("key %q", truncateKey(key)), MaxSiblings, func(iter rowIter) (siblingRow, bool) {
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
	live := rows[:0]
	var maxTS int64
	for _, r := range rows {
		if len(r.value) == 0 { // a row without a value is not a sibling
			continue
		}
		live = append(live, r)
		maxTS = max(maxTS, r.ts)
	}
	sort.Slice(live, func(i, j int) bool { return live[i].actor < live[j].actor })
	s.db.clock.observe(maxTS)
	if len(live) == 0 {
		return nil, nil, nil
	}
	sibs := make([][]byte, len(live))
	entries := make([]tokenEntry, len(live))
	for i, r := range live {
		sibs[i] = r.value
		entries[i] = tokenEntry{actor: r.actor, ts: r.ts}
	}
	tok, err := encodeToken(entries)
	if err != nil {
		return nil, nil, fmt.Errorf("cassandra: siblings fetch %q: %w", truncateKey(key), err)
	}
	return sibs, tok, nil
}

// putStmts validates a Put and builds its statements: the writer's INSERT
// first, then one DELETE per other row the token names.
func (s *Siblings) putStmts(key string, actor crdt.ActorID, value []byte, token store.Token) ([]stmt, error) {
	if err := store.CheckPut(key, actor, value); err != nil {
		return nil, err
	}
	entries, err := decodeToken(token)
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
	out = append(out, stmt{cql: s.insertCQL(), args: []any{key, string(actor), value, ts}, key: key})
	for _, e := range entries {
		if e.actor != actor {
			out = append(out, stmt{cql: s.deleteCQL(), args: []any{e.ts, key, string(e.actor)}, key: key})
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

func truncateKey(k string) string {
	if len(k) > 40 {
		return k[:40] + "..."
	}
	return k
}

package cassandra

import (
	"context"
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// LedgerStore implements ledger.Store for TPNCounter
// ledgers, with one row per (key, actor) and Riak-like sibling semantics
// built from write timestamps:
//
//   - Fetch returns every actor's row as a sibling, and a token naming each
//     row it returned by (actor, WRITETIME).
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
// Every row delete is paired with an insert at a larger timestamp, so the
// newest live row is always at or above every row tombstone of the key and
// a Fetch lifts a restarted process's clock above all of them. (For that
// reason the store does not offer ledger.Deleter: a bare delete would leave
// tombstones that a restarted process with a clock behind could write
// under, invisibly.)
//
// Put refuses, writing nothing, a value that is not a valid tpncounter
// encoding (errors wrap crdt.ErrCorruptEncoding, ErrTypeMismatch,
// ErrUnsupportedVersion or ErrTooLarge, from tpncounter's decoder with the
// largest actor cap it allows), an invalid actor (crdt.ErrInvalidActor) or
// key, and a malformed token (crdt.ErrCorruptEncoding).
//
// Cost: Fetch reads one partition; Put is one write (an INSERT, or one
// single-partition batch when the token names other actors' rows) and no
// read.
//
// A LedgerStore is safe for concurrent use; one actor must still apply its
// own updates serially (package ledger does).
type LedgerStore struct {
	rows  actorRows
	check func([]byte) error
}

var _ ledger.Store = (*LedgerStore)(nil)

// Ledger returns the DB's TPNCounter ledger store.
func (db *DB) Ledger() *LedgerStore {
	return &LedgerStore{rows: newActorRows(db, tableLedger, "value", OpLedgerFetch, OpLedgerPut), check: checkLedgerValue}
}

// checkLedgerValue reports whether b is a valid tpncounter.Counter
// encoding. It decodes with the largest actor cap tpncounter allows, so that
// a ledger configured with a high MaxActors is not refused here; the
// ledger's own decoder applies its configured cap on Fetch.
func checkLedgerValue(b []byte) error {
	c, err := tpncounter.New(tpncounter.Options{MaxActors: tpncounter.MaxActorsLimit})
	if err != nil {
		return err
	}
	if err := c.UnmarshalBinary(b); err != nil {
		return fmt.Errorf("ledger value: %w", err)
	}
	return nil
}

// Fetch returns every actor's row of key (in actor order) as siblings, and a
// token naming those rows, to pass to Put. An absent key gives no siblings
// and a nil token. A done context gives an error wrapping its error.
func (l *LedgerStore) Fetch(ctx context.Context, key string) ([][]byte, ledger.Token, error) {
	rows, err := l.rows.load(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	sibs := make([][]byte, len(rows))
	entries := make([]tokenEntry, len(rows))
	for i, r := range rows {
		sibs[i] = r.value
		entries[i] = tokenEntry{actor: r.actor, ts: r.ts}
	}
	tok, err := encodeToken(entries)
	if err != nil {
		return nil, nil, fmt.Errorf("ledger fetch %q: %w", truncateKey(key), err)
	}
	return sibs, tok, nil
}

// putStmts validates a Put and builds its statements: the writer's INSERT
// first, then one DELETE per other row the token names.
func (l *LedgerStore) putStmts(key string, actor crdt.ActorID, value []byte, token ledger.Token) ([]stmt, error) {
	if err := l.rows.checkWrite(key, actor, value); err != nil {
		return nil, err
	}
	if err := l.check(value); err != nil {
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
	out := make([]stmt, 0, len(entries)+1)
	out = append(out, l.rows.saveStmt(key, actor, value, floor))
	for _, e := range entries {
		if e.actor != actor {
			out = append(out, l.rows.deleteStmt(key, e.actor, e.ts))
		}
	}
	return out, nil
}

// Put stores value as actor's row under key, superseding exactly the rows
// the token names (see LedgerStore). A nil token supersedes nothing but the
// writer's own older row. After an error wrapping crdt.ErrAmbiguousWrite,
// retrying is safe (package ledger re-fetches and re-puts).
func (l *LedgerStore) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token ledger.Token) error {
	stmts, err := l.putStmts(key, actor, value, token)
	if err != nil {
		return err
	}
	return l.rows.send(ctx, stmts)
}

// PutLedger adds LedgerStore.Put's statements to the Tx. Invalid input is
// reported here and leaves the Tx unchanged.
func (tx *Tx) PutLedger(key string, actor crdt.ActorID, value []byte, token ledger.Token) error {
	return tx.addAll(tx.db.Ledger().putStmts(key, actor, value, token))
}

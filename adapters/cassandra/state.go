package cassandra

import (
	"context"
	"fmt"
	"sort"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/statestore"
)

// MaxActorRows bounds how many per-actor rows a Load or Fetch returns for
// one key. A key with more rows is reported with an error wrapping
// crdt.ErrTooLarge instead of being loaded: that many actors means actor ids
// are not being reused (see "actor explosion" in the README).
const MaxActorRows = 10000

// maxStateBytes bounds one stored state; it matches the core decoders' cap.
const maxStateBytes = crdt.DefaultMaxEncodedSize

// actorRow is one row of a per-actor table as read back: the actor (the
// clustering key), its value and the value's WRITETIME.
type actorRow struct {
	actor crdt.ActorID
	value []byte
	ts    int64
}

// actorRows is the shared implementation of the per-actor-row tables used
// by StateStore and LedgerStore. All statement building and validation live
// here; read and write are the only I/O. They default to the DB's session;
// unit tests substitute a model of Cassandra's timestamp rules, so that the
// conformance suites run against the real statement logic without a
// cluster.
type actorRows struct {
	db      *DB
	table   string // quoted name
	column  string // value column
	readOp  Op
	writeOp Op

	read  func(ctx context.Context, r *actorRows, key string) ([]actorRow, error)
	write func(ctx context.Context, op Op, stmts []stmt) error
}

func newActorRows(db *DB, table, column string, readOp, writeOp Op) actorRows {
	return actorRows{db: db, table: db.tables[table], column: column, readOp: readOp, writeOp: writeOp,
		read: sessionReadRows, write: db.batch}
}

// selectCQL is the one read a per-actor table serves.
func (r *actorRows) selectCQL() string {
	return fmt.Sprintf("SELECT actor, %s, WRITETIME(%s) FROM %s WHERE key = ?", r.column, r.column, r.table)
}

// insertCQL overwrites one actor's row at an explicit timestamp.
func (r *actorRows) insertCQL() string {
	return fmt.Sprintf("INSERT INTO %s (key, actor, %s) VALUES (?, ?, ?) USING TIMESTAMP ?", r.table, r.column)
}

// deleteCQL removes one actor's row as of an explicit timestamp: versions
// written at or below it go, later ones stay.
func (r *actorRows) deleteCQL() string {
	return fmt.Sprintf("DELETE FROM %s USING TIMESTAMP ? WHERE key = ? AND actor = ?", r.table)
}

// sessionReadRows reads every row of key through the session: one
// single-partition SELECT at readOp's level, as one page of MaxActorRows+1
// rows with automatic paging off, so that the result is one consistent
// snapshot (a ledger Put's batch is seen entirely or not at all; a second
// page would be a second read). More than MaxActorRows rows are refused
// with an error wrapping crdt.ErrTooLarge.
func sessionReadRows(ctx context.Context, r *actorRows, key string) ([]actorRow, error) {
	iter := r.db.openPage(ctx, r.readOp, MaxActorRows, r.selectCQL(), []any{key})
	var (
		out   []actorRow
		actor string
		value []byte
		ts    int64
	)
	for iter.Scan(&actor, &value, &ts) {
		if len(out) >= MaxActorRows {
			_ = iter.Close()
			return nil, fmt.Errorf("%w: key %q has more than %d actor rows", crdt.ErrTooLarge, truncateKey(key), MaxActorRows)
		}
		out = append(out, actorRow{actor: crdt.ActorID(actor), value: value, ts: ts})
		value = nil // the driver reuses a non-nil buffer
	}
	if err := closePage(iter, r.readOp, func() error {
		return fmt.Errorf("%w: key %q did not fit in one page of %d rows", crdt.ErrTooLarge, truncateKey(key), MaxActorRows+1)
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// load reads every actor row of key, in actor order, skipping rows without
// a value, and raises the DB's clock to the largest WRITETIME seen.
func (r *actorRows) load(ctx context.Context, key string) ([]actorRow, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, &Error{Op: r.readOp.String(), Kind: crdt.ErrUnavailable, Err: err}
	}
	rows, err := r.read(ctx, r, key)
	if err != nil {
		return nil, err
	}
	out := rows[:0]
	var maxTS int64
	for _, row := range rows {
		if len(row.value) == 0 {
			continue
		}
		out = append(out, row)
		maxTS = max(maxTS, row.ts)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].actor < out[j].actor })
	r.db.clock.observe(maxTS)
	return out, nil
}

// checkWrite validates what every per-actor write needs: the key, the
// actor, and a non-empty value within the size bound.
func (r *actorRows) checkWrite(key string, actor crdt.ActorID, value []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := actor.Validate(); err != nil {
		return err
	}
	if len(value) == 0 {
		return fmt.Errorf("%w: empty value for actor %q", crdt.ErrCorruptEncoding, actor)
	}
	if len(value) > maxStateBytes {
		return fmt.Errorf("%w: value of %d bytes, limit %d", crdt.ErrTooLarge, len(value), maxStateBytes)
	}
	return nil
}

// saveStmt builds the overwrite of actor's own row. The write timestamp is
// above every timestamp the DB has handed out or observed and above floor,
// so an actor that loaded its row first always supersedes it. Callers
// validate first (checkWrite).
func (r *actorRows) saveStmt(key string, actor crdt.ActorID, value []byte, floor int64) stmt {
	return stmt{cql: r.insertCQL(), args: []any{key, string(actor), value, r.db.clock.next(floor)}, key: key}
}

// deleteStmt builds the removal of actor's row version written at ts (and
// of anything older); a version written later survives.
func (r *actorRows) deleteStmt(key string, actor crdt.ActorID, ts int64) stmt {
	return stmt{cql: r.deleteCQL(), args: []any{ts, key, string(actor)}, key: key}
}

// send checks the context and writes stmts as one statement or one
// (single-partition, so atomic and isolated) logged batch.
func (r *actorRows) send(ctx context.Context, stmts []stmt) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: r.writeOp.String(), Kind: crdt.ErrUnavailable, Err: err}
	}
	return r.write(ctx, r.writeOp, stmts)
}

func truncateKey(k string) string {
	if len(k) > 40 {
		return k[:40] + "..."
	}
	return k
}

// StateStore keeps GCounter and PNCounter states as one row per (key,
// actor). Save overwrites only the calling actor's row, with a write
// timestamp above any the DB has read, so actors never race on a
// read-modify-write; Load returns every actor's row for the caller to merge.
// Rows are never deleted: a state-based counter's rows only grow in
// information, and the merge of all of them is the value.
//
// Cost: Load reads one partition; Save is one write and no read.
//
// A StateStore is safe for concurrent use; as everywhere in counterkit, one
// actor must still apply its own updates serially.
type StateStore struct{ rows actorRows }

var _ statestore.Store = (*StateStore)(nil)

// States returns the DB's GCounter/PNCounter state store.
func (db *DB) States() *StateStore {
	return &StateStore{rows: newActorRows(db, tableState, "state", OpStateLoad, OpStateSave)}
}

// Load returns the encoded states of every actor that has saved under key,
// in actor order. A key with no rows gives an empty slice and no error. A
// done context gives an error wrapping its error (and
// crdt.ErrUnavailable).
func (s *StateStore) Load(ctx context.Context, key string) ([][]byte, error) {
	rows, err := s.rows.load(ctx, key)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(rows))
	for i, r := range rows {
		out[i] = r.value
	}
	return out, nil
}

// Save overwrites actor's row under key with state. A state that is not a
// valid gcounter or pncounter encoding is refused (statestore.Check), as is
// an invalid actor (crdt.ErrInvalidActor) or key, and nothing is written, so
// one bad write cannot poison every later Load.
func (s *StateStore) Save(ctx context.Context, key string, actor crdt.ActorID, state []byte) error {
	st, err := s.saveStmt(key, actor, state)
	if err != nil {
		return err
	}
	return s.rows.send(ctx, []stmt{st})
}

func (s *StateStore) saveStmt(key string, actor crdt.ActorID, state []byte) (stmt, error) {
	if err := statestore.Check(state); err != nil {
		return stmt{}, err
	}
	if err := s.rows.checkWrite(key, actor, state); err != nil {
		return stmt{}, err
	}
	return s.rows.saveStmt(key, actor, state, 0), nil
}

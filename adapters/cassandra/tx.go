package cassandra

import (
	"context"
	"fmt"

	"github.com/counterkit/counterkit/crdt"
)

// MaxTxStatements bounds the statements of one Tx. Cassandra warns about
// multi-partition batches above batch_size_warn_threshold_in_kb (5 KiB) and
// refuses those above batch_size_fail_threshold_in_kb (50 KiB of mutation
// data by default; Commit then returns an error wrapping crdt.ErrTooLarge
// and nothing is applied), whatever their statement count; a transaction
// context touching more counters than this should be split.
const MaxTxStatements = 100

// Tx is a transaction context: it collects the writes of several counters
// (or several writes of one) and commits them as one LOGGED batch, so they
// land all together or, eventually, not at all. Every write in a Tx is the
// same idempotent statement the store would send alone, so retrying Commit
// after crdt.ErrAmbiguousWrite is safe.
//
// Reads are not part of a Tx: per-actor types load first (outside the Tx),
// then add their overwrite to it.
//
// A Tx is not safe for concurrent use. Its zero value is not usable; get one
// from DB.Tx.
type Tx struct {
	db    *DB
	stmts []stmt
}

// Tx starts an empty transaction context.
func (db *DB) Tx() *Tx { return &Tx{db: db} }

// Len returns the number of statements collected so far.
func (tx *Tx) Len() int { return len(tx.stmts) }

func (tx *Tx) add(s stmt, err error) error {
	if err != nil {
		return err
	}
	return tx.addAll([]stmt{s}, nil)
}

// addAll appends stmts, or nothing when err is set or the Tx would exceed
// MaxTxStatements.
func (tx *Tx) addAll(stmts []stmt, err error) error {
	if err != nil {
		return err
	}
	if len(tx.stmts)+len(stmts) > MaxTxStatements {
		return fmt.Errorf("%w: transaction would have %d statements, limit %d", crdt.ErrTooLarge, len(tx.stmts)+len(stmts), MaxTxStatements)
	}
	tx.stmts = append(tx.stmts, stmts...)
	return nil
}

// SaveState adds a StateStore.Save of actor's row under key. Invalid input
// (including a state statestore.Check refuses) is reported here and leaves
// the Tx unchanged.
func (tx *Tx) SaveState(key string, actor crdt.ActorID, state []byte) error {
	return tx.add(tx.db.States().saveStmt(key, actor, state))
}

// Commit sends the collected writes as one logged batch at OpTxCommit's
// consistency. An empty Tx sends nothing. After Commit returns (with or
// without error) the Tx keeps its statements, so Commit may be called again
// to retry. An Overloaded refusal of a Tx over several partitions, and any
// failure after the driver retried, is reported as crdt.ErrAmbiguousWrite
// (see Error).
func (tx *Tx) Commit(ctx context.Context) error {
	if len(tx.stmts) == 0 {
		return nil
	}
	if len(tx.stmts) == 1 {
		s := tx.stmts[0]
		return tx.db.exec(ctx, OpTxCommit, s.cql, s.args...)
	}
	return tx.db.batch(ctx, OpTxCommit, tx.stmts)
}

package cassandra

import (
	"context"
	"fmt"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
)

// LogStore implements deltalog.Store (seed 003's windowed log) on the log
// table: one row per cell, clustered by (id DESC, kind ASC), the cell's
// encoding in a blob. Cassandra orders timeuuid values by timestamp, then
// by the remaining 8 bytes compared as signed bytes, and tinyint kinds as
// numbers ('m' 109 before 'r' 114): exactly deltalog.CompareCells, so Scan
// returns cells in the order the interface requires without sorting.
//
// Insert never reads and costs one statement (a single INSERT, or one
// logged batch for several entries; entries of one counter form one
// single-partition mutation, atomic and isolated, and exempt from the
// server's batch size thresholds, while a batch over several counters goes
// through the batch log and is subject to them). Scan pages lazily
// (Options.LogPageSize rows per page, no prefetch) and stops fetching when
// the callback stops. DeleteCovered is one single-partition batch (a range
// delete and a row delete).
//
// Every write carries an explicit timestamp from the DB's clock (strictly
// increasing within the DB), consecutive within one Insert, so rewriting a
// cell replaces it (last write wins, and within one Insert the later entry
// wins) and a delete shadows every cell this DB wrote before it. A merge
// cell and the regular cell with its id have different clustering keys, so
// DeleteCovered never shadows the merge cell that covers what it removes.
//
// A LogStore is safe for concurrent use.
type LogStore struct {
	db    *DB
	table string
}

var _ deltalog.Store = (*LogStore)(nil)

// Log returns the DB's windowed-log store.
func (db *DB) Log() *LogStore { return &LogStore{db: db, table: db.tables[tableLog]} }

// MaxLogEntries bounds the entries of one LogStore.Insert. Entries of one
// counter are one partition mutation, which Cassandra caps only at half a
// commit log segment (max_mutation_size: 16 MiB with 4.0's default 32 MiB
// segments); an encoded cell is under 100 bytes. Entries of several
// counters form a multi-partition batch, which the server refuses above
// batch_size_fail_threshold_in_kb (50 KiB of mutation data by default;
// reported as crdt.ErrTooLarge), so keep inserts over several counters
// small.
const MaxLogEntries = 1000

// insertStmts validates every entry and builds its INSERT, stamped with
// consecutive timestamps in entry order. Nothing is written (and no
// timestamp is reserved) when any entry is invalid.
func (l *LogStore) insertStmts(entries []deltalog.Entry) ([]stmt, error) {
	if len(entries) > MaxLogEntries {
		return nil, fmt.Errorf("%w: %d log entries in one insert, limit %d", crdt.ErrTooLarge, len(entries), MaxLogEntries)
	}
	cql := fmt.Sprintf("INSERT INTO %s (key, id, kind, cell) VALUES (?, ?, ?, ?) USING TIMESTAMP ?", l.table)
	out := make([]stmt, 0, len(entries))
	for _, e := range entries {
		if err := checkKey(e.Counter); err != nil {
			return nil, err
		}
		b, err := e.Cell.MarshalBinary() // validates the cell
		if err != nil {
			return nil, err
		}
		out = append(out, stmt{cql: cql, args: []any{e.Counter, gocql.UUID(e.Cell.ID), int8(e.Cell.Kind), b}, key: e.Counter})
	}
	if len(out) > 0 {
		ts := l.db.clock.reserve(0, len(out))
		for i := range out {
			out[i].args = append(out[i].args, ts+int64(i))
		}
	}
	return out, nil
}

// Insert writes every entry atomically: one INSERT, or one logged batch
// when there are several. It never reads.
func (l *LogStore) Insert(ctx context.Context, entries []deltalog.Entry) error {
	stmts, err := l.insertStmts(entries)
	if err != nil {
		return err
	}
	return l.db.batch(ctx, OpLogAppend, stmts)
}

// Scan calls fn with counter's cells in clustering order until fn returns
// false. A stored cell whose blob does not decode, or disagrees with its
// row's clustering key, is reported with an error wrapping
// crdt.ErrCorruptEncoding.
func (l *LogStore) Scan(ctx context.Context, counter string, fn func(deltalog.Cell) bool) error {
	if err := checkKey(counter); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &Error{Op: OpLogRead.String(), Kind: crdt.ErrUnavailable, Err: err}
	}
	cql := fmt.Sprintf("SELECT id, kind, cell FROM %s WHERE key = ?", l.table)
	iter := l.db.query(OpLogRead, cql, counter).PageSize(l.db.pageSize).Prefetch(0).IterContext(ctx)
	var (
		id   gocql.UUID
		kind int8
		blob []byte
	)
	for iter.Scan(&id, &kind, &blob) {
		var c deltalog.Cell
		if err := c.UnmarshalBinary(blob); err != nil {
			_ = iter.Close()
			return fmt.Errorf("cassandra: log cell %s/%d of %q: %w", id, kind, truncateKey(counter), err)
		}
		if c.ID != deltalog.ID(id) || c.Kind != deltalog.Kind(kind) {
			_ = iter.Close()
			return fmt.Errorf("%w: log row (%s, %d) holds cell (%s, %s)", crdt.ErrCorruptEncoding, id, kind, c.ID, c.Kind)
		}
		if !fn(c) {
			break
		}
	}
	return wrapErr(OpLogRead.String(), false, iter.Close())
}

// deleteCoveredStmts builds DeleteCovered's two statements. "id < ?"
// compares timeuuid values, not clustering positions, so with the table's
// id DESC order it removes the older tail of the partition.
func (l *LogStore) deleteCoveredStmts(counter string, id deltalog.ID) ([]stmt, error) {
	if err := checkKey(counter); err != nil {
		return nil, err
	}
	if err := id.Validate(); err != nil {
		return nil, err
	}
	u := gocql.UUID(id)
	ts := l.db.clock.next(0)
	return []stmt{
		{cql: fmt.Sprintf("DELETE FROM %s USING TIMESTAMP ? WHERE key = ? AND id < ?", l.table), args: []any{ts, counter, u}, key: counter},
		{cql: fmt.Sprintf("DELETE FROM %s USING TIMESTAMP ? WHERE key = ? AND id = ? AND kind = ?", l.table), args: []any{ts, counter, u, int8(deltalog.KindRegular)}, key: counter},
	}, nil
}

// DeleteCovered removes the regular cell with id and every cell with an
// older id, in one single-partition batch (a range delete and a row delete),
// atomically. The merge cell at id and newer cells stay. Deleting again is
// harmless.
func (l *LogStore) DeleteCovered(ctx context.Context, counter string, id deltalog.ID) error {
	stmts, err := l.deleteCoveredStmts(counter, id)
	if err != nil {
		return err
	}
	return l.db.batch(ctx, OpLogDelete, stmts)
}

// DeleteCounter removes every cell of counter (one partition delete, at a
// timestamp from the DB's clock: a cell written later by a process whose
// clock is behind by more than the time since could survive it).
func (l *LogStore) DeleteCounter(ctx context.Context, counter string) error {
	if err := checkKey(counter); err != nil {
		return err
	}
	return l.db.exec(ctx, OpLogDelete, fmt.Sprintf("DELETE FROM %s USING TIMESTAMP ? WHERE key = ?", l.table), l.db.clock.next(0), counter)
}

// InsertLog adds LogStore.Insert's statements for entries to the Tx.
// Invalid entries are reported here and leave the Tx unchanged.
func (tx *Tx) InsertLog(entries ...deltalog.Entry) error {
	return tx.addAll(tx.db.Log().insertStmts(entries))
}
